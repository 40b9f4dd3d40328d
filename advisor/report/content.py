"""What a report says, gathered once: plain records, no layout, no language.

`build_report` takes what the CLI and the app already have (the prepared RankingInput, the catalog session, a
telemetry Snapshot) and keeps the ranking, one row per card, with where each listed card's figures and
price came from. Rendering (pdf.py) only reads this.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime

from sqlalchemy.orm import Session

from advisor import __version__
from advisor.catalog import lookup_card
from advisor.core.curve import MemoryCurve
from advisor.core.estimate import Estimate
from advisor.recommend.prepare import RankingInput
from advisor.recommend.present import best_per_card
from advisor.recommend.ranking import RankingOptions
from advisor.recommend.recommendation import Recommendation
from advisor.recommend.service import CardFilter, best_price, recommend
from advisor.telemetry.readings import Snapshot

DEFAULT_TOP = 10


@dataclass(frozen=True)
class CardSource:
    """Provenance of one listed card: where its figures and its price came from."""

    card: str
    figures_source: str
    price_usd: float | None  # one card
    price_date: date | None
    price_condition: str | None
    price_source: str | None
    price_kind: str | None = None  # purchase, or rent_hour (price_usd is then per GPU-hour)


@dataclass(frozen=True)
class Ranking:
    rows: tuple[Recommendation, ...]  # the best configuration of each card, best first, top N
    configurations: int  # every card x count x plan that was ranked
    options: RankingOptions
    cards: CardFilter
    sources: tuple[CardSource, ...]
    # with a job size: every fitting configuration with its job's hours and cost (the time-against-cost chart
    # and its frontier, as the app draws them from the same entries)
    costed: tuple[Recommendation, ...] = ()


@dataclass(frozen=True)
class Report:
    estimate: Estimate
    curve: MemoryCurve
    required: MemoryCurve  # required bytes against the batch (core/budget.py)
    tokens_per_sample: int
    source: str  # the SPEC or model file the user gave ("" for a network built in the app)
    ranking: Ranking
    snapshot: Snapshot | None  # None: the local GPUs were not looked at
    created: datetime
    version: str = __version__

    @property
    def best(self) -> Recommendation | None:
        return next((r for r in self.ranking.rows if r.fits), None)


def _source(session: Session, row: Recommendation, basis: str) -> CardSource:
    card = lookup_card(session, row.card)
    price = best_price(session, row.card, basis)  # the same offer the ranking priced the card at
    return CardSource(
        row.card,
        card.source if card else "",
        price.amount if price else None,
        price.date if price else None,
        price.condition if price else None,
        price.source if price else None,
        price.kind if price else None,
    )


def rank_for_report(
    session: Session,
    job: RankingInput,
    cards: CardFilter = CardFilter(),  # noqa: B008
    options: RankingOptions = RankingOptions(),  # noqa: B008
    top: int = DEFAULT_TOP,
) -> Ranking:
    """Ranks every card of the catalog as `advisor recommend` does and keeps the top `top` cards."""
    entries = recommend(session, job, cards, options)
    rows = tuple(best_per_card(entries)[:top])
    sources = tuple(_source(session, row, cards.basis) for row in rows)
    costed = tuple(e for e in entries if e.fits and e.job_hours is not None and e.job_cost_usd is not None)
    return Ranking(rows, len(entries), options, cards, sources, costed)


def build_report(
    job: RankingInput, ranking: Ranking, snapshot: Snapshot | None, source: str = "", created: datetime | None = None
) -> Report:
    """Everything the report prints; `created` defaults to now, in local time (tests pass a fixed one)."""
    return Report(
        job.estimate,
        job.curve,
        job.required,
        job.work.tokens_per_sample,
        source,
        ranking,
        snapshot,
        created or datetime.now().astimezone(),
    )


def sharded_plans(rows: Sequence[Recommendation]) -> list[Recommendation]:
    """Listed rows whose plan divides model state over the cards (ZeRO / FSDP)."""
    return [r for r in rows if r.plan.sharded]
