"""The money side of a ranking: which price a card is judged on, what the whole job costs, and the order.

Price basis (--price-basis): `new` (a new card's purchase price), `used` (used or refurbished), `lowest`
(the cheaper of those two), `rent` (per GPU-hour from a cloud's on-demand list). Prices in another currency
count in USD at the bundled exchange rates (catalog/exchange.py); one without a rate does not count. The
user's own prices win: if the user entered any price of the
kind asked for, only theirs are considered. Among the rest the current price is the lowest one observed
within CURRENT_WINDOW_DAYS of the newest observation (several shops or clouds priced at about the same time).

The order a ranking objective gives the configurations is in objectives.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import date, timedelta
from enum import StrEnum
from typing import NamedTuple

from advisor.catalog.exchange import priced_in_usd
from advisor.catalog.records import PriceRecord
from advisor.core.errors import AdvisorError
from advisor.core.workload import as_member
from advisor.recommend.recommendation import Recommendation


class PriceBasis(StrEnum):
    """Which price a card is judged on (the module docstring)."""

    NEW = "new"
    USED = "used"
    RENT = "rent"
    LOWEST = "lowest"


BASES: tuple[PriceBasis, ...] = tuple(PriceBasis)


def as_basis(value: object) -> PriceBasis:
    """`value` (a member or its text) as a PriceBasis; anything else is an error naming the option."""
    return as_member(PriceBasis, "--price-basis", value)


CURRENT_WINDOW_DAYS = 90
# A price observed more than a year before today is shown as old: GPU street prices move that much in a year.
OLD_AFTER_DAYS = 365
# Default electricity price, USD per kWh: the U.S. average retail price to commercial customers in 2024,
# about 13 cents (U.S. EIA, Electric Power Monthly, Table 5.3, "Average Price of Electricity to Ultimate
# Customers", https://www.eia.gov/electricity/monthly/epm_table_grapher.php?t=epmt_5_3); residential is
# higher (about 16.5 cents). Set --kwh-usd for your own tariff.
DEFAULT_KWH_USD = 0.13
ON_DEMAND_MARKETS = ("cloud_on_demand",)


@dataclass(frozen=True)
class MoneyOptions:
    """How money enters a ranking. `samples` / `tokens`: the size of the whole job (at most one)."""

    basis: PriceBasis = PriceBasis.NEW  # its text is accepted too (__post_init__)
    samples: float | None = None
    tokens: float | None = None
    kwh_usd: float = DEFAULT_KWH_USD
    today: date | None = None  # None: the real today (tests pass a fixed day)

    def __post_init__(self) -> None:
        object.__setattr__(self, "basis", as_basis(self.basis))


def _current(candidates: Sequence[PriceRecord]) -> PriceRecord | None:
    """The user's prices if any, else all; then the lowest one near the newest observation."""
    mine = [p for p in candidates if p.user_owned]
    pool = mine or list(candidates)
    if not pool:
        return None
    newest = max(p.date for p in pool)
    if mine:  # the user's latest word is their price, not the lowest they ever typed
        return [p for p in pool if p.date == newest][-1]
    recent = [p for p in pool if p.date >= newest - timedelta(days=CURRENT_WINDOW_DAYS)]
    return min(recent, key=lambda p: (p.amount, -p.date.toordinal()))


def _purchase(usd: Sequence[PriceRecord], conditions: tuple[str, ...]) -> PriceRecord | None:
    return _current([p for p in usd if p.kind == "purchase" and p.condition in conditions])


def _rent(usd: Sequence[PriceRecord]) -> PriceRecord | None:
    return _current([p for p in usd if p.kind == "rent_hour" and (p.user_owned or p.market in ON_DEMAND_MARKETS)])


def rent_offer(prices: Sequence[PriceRecord]) -> PriceRecord | None:
    """Rent per GPU-hour: on-demand list prices (spot can be taken away, reserved needs a commitment);
    a rent the user entered counts whatever its market."""
    return _rent(priced_in_usd(prices))


def choose_offer(prices: Sequence[PriceRecord], basis: PriceBasis | str) -> PriceRecord | None:
    """The price a card is ranked on under `basis`; None when it has none."""
    chosen = as_basis(basis)
    usd = priced_in_usd(prices)  # converted once, whichever offers the basis compares
    if chosen is PriceBasis.RENT:
        return _rent(usd)
    new = _purchase(usd, ("new",))
    used = _purchase(usd, ("used", "refurbished"))
    if chosen is PriceBasis.NEW:
        return new
    if chosen is PriceBasis.USED:
        return used
    offers = [p for p in (new, used) if p is not None]
    return min(offers, key=lambda p: p.amount) if offers else None


def is_old(price_date: date | None, today: date | None = None) -> bool:
    return price_date is not None and price_date < (today or date.today()) - timedelta(days=OLD_AFTER_DAYS)


def job_hours(throughput: float, tokens_per_sample: int, options: MoneyOptions) -> float | None:
    """Hours to process the job's samples or tokens at `throughput` (tokens/s when tokens_per_sample > 1)."""
    if options.samples is not None:
        return options.samples * tokens_per_sample / throughput / 3600
    if options.tokens is not None:
        if tokens_per_sample <= 1:
            raise AdvisorError("--tokens: this model reads no token sequence; give the job as --samples N")
        return options.tokens / throughput / 3600
    return None


class MoneyFacts(NamedTuple):
    price_old: bool
    job_hours: float | None
    job_cost_usd: float | None
    break_even_hours: float | None


def money_facts(
    price: PriceRecord | None,
    rent: PriceRecord | None,
    count: int,
    throughput: float,
    power_w: float,
    tokens_per_sample: int,
    options: MoneyOptions,
) -> MoneyFacts:
    """A configuration of `count` cards priced at `price` each: the price's age, and with a job size its
    hours, its cost and, bought, the hours after which buying beats renting the same cards at `rent`."""
    old = is_old(price.date if price else None, options.today)
    hours = job_hours(throughput, tokens_per_sample, options)
    if hours is None or price is None:
        return MoneyFacts(old, hours, None, None)
    total = price.amount * count
    if price.kind == "rent_hour":
        return MoneyFacts(old, hours, hours * total, None)
    power_usd_per_hour = power_w / 1000 * options.kwh_usd
    break_even = None
    if rent is not None:
        # Buying N cards costs price + power x h, renting them rent x N x h: equal at h = price / (rent x N - power).
        saving_per_hour = rent.amount * count - power_usd_per_hour
        break_even = total / saving_per_hour if saving_per_hour > 0 else None
    return MoneyFacts(old, hours, total + power_usd_per_hour * hours, break_even)


def costed(
    entry: Recommendation,
    price: PriceRecord | None,
    rent: PriceRecord | None,
    tokens_per_sample: int,
    options: MoneyOptions,
) -> Recommendation:
    """`entry` with its money facts (money_facts) filled in."""
    facts = money_facts(price, rent, entry.count, entry.throughput, entry.power_w, tokens_per_sample, options)
    return replace(entry, **facts._asdict())


def budget_caps(money: MoneyOptions) -> bool:
    """A budget has something to cap: a purchase price, or a rented job's cost; a rent without a job size has
    no total, so a budget would be ignored (the command line refuses it, the app greys its budget box)."""
    return money.basis is not PriceBasis.RENT or money.samples is not None or money.tokens is not None


def within_budget(entry: Recommendation, budget_usd: float | None) -> bool:
    """A budget caps what is paid in all: the purchase price, or a rented job's cost (rent without a job
    size has no total, so the budget cannot judge it). Unpriced rows stay: they are listed after the rest."""
    if budget_usd is None or entry.price_usd is None:
        return True
    if entry.price_kind == "rent_hour":
        return entry.job_cost_usd is None or entry.job_cost_usd <= budget_usd
    return entry.price_usd <= budget_usd


def frontier(entries: Sequence[Recommendation]) -> list[Recommendation]:
    """The best choices between time and money: fitting configurations with a job cost that no other one
    beats on both (no faster one costs less), fastest first."""
    costed_rows = sorted(
        (e for e in entries if e.fits and e.job_hours is not None and e.job_cost_usd is not None),
        key=lambda e: (e.job_hours, e.job_cost_usd),
    )
    best: list[Recommendation] = []
    for entry in costed_rows:
        if not best or entry.job_cost_usd < best[-1].job_cost_usd:  # type: ignore[operator]
            best.append(entry)
    return best
