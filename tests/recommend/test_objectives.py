"""The ranking objectives: one vocabulary (recommend/objectives.py), an unknown one an error, and a new one
a change to at most three files (objectives.py, its translations, the README's list of objectives)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from advisor.core.errors import AdvisorError
from advisor.recommend.objectives import Objective, ordered
from advisor.recommend.plans import Plan
from advisor.recommend.ranking import RankingOptions
from advisor.recommend.recommendation import Recommendation

PACKAGE = Path(__file__).resolve().parents[2] / "advisor"
# where an objective is declared, and where its words are translated
HOMES = {"recommend/objectives.py", "i18n/zh_CN.py"}


def row(card: str, fits: bool, throughput: float, price_usd: float | None) -> Recommendation:
    return Recommendation(
        card=card,
        count=1,
        plan=Plan.SINGLE,
        fits=fits,
        reasons=(),
        required_bytes=1,
        usable_bytes=2,
        max_batch=1,
        step_time_s=1.0,
        throughput=throughput,
        throughput_unit="samples/s",
        price_usd=price_usd,
        price_date=None,
        price_condition=None,
        perf_per_dollar=throughput / price_usd if price_usd else None,
        perf_per_watt=1.0,
    )


def test_every_objective_puts_fitting_configurations_first() -> None:
    rows = [row("too small", False, 1e9, 1.0), row("slow", True, 10.0, 100.0), row("fast", True, 40.0, 800.0)]
    for objective in Objective:  # the match in _key has a case for each (mypy checks it is exhaustive)
        assert ordered(rows, objective)[-1].card == "too small", objective
    assert [r.card for r in ordered(rows, Objective.FASTEST)] == ["fast", "slow", "too small"]
    # perf per dollar: slow 10/100 = 0.1 beats fast 40/800 = 0.05; cheapest: 100 < 800
    assert [r.card for r in ordered(rows, Objective.PERF_PER_DOLLAR)][:2] == ["slow", "fast"]
    assert [r.card for r in ordered(rows, "cheapest")][:2] == ["slow", "fast"]


def test_an_unknown_objective_is_an_error_not_a_perf_per_dollar_ranking() -> None:
    with pytest.raises(AdvisorError, match="objective: must be one of perf_per_dollar, cheapest, fastest"):
        RankingOptions("vibes")
    with pytest.raises(AdvisorError, match="got 'vibes'"):
        ordered([], "vibes")
    assert RankingOptions("fastest").objective is Objective.FASTEST  # the CLI's text is the member


def _names_of(objective: Objective) -> tuple[str, ...]:
    """How a module can name an objective: its text, its member, its words."""
    return (f'"{objective.value}"', f"Objective.{objective.name}", f'"{objective.label}"', f'"{objective.ranked_by}"')


def test_only_the_objectives_module_and_its_translations_list_every_objective() -> None:
    """A module that names every objective enumerates the vocabulary, so a new objective would change it too.
    Only the two homes may: a new objective touches objectives.py, zh_CN.py and the README's list."""
    listing = []
    for path in PACKAGE.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        named = [o for o in Objective if any(re.search(re.escape(n), text) for n in _names_of(o))]
        if len(named) == len(Objective):
            listing.append(path.relative_to(PACKAGE).as_posix())
    assert sorted(listing) == sorted(HOMES)
