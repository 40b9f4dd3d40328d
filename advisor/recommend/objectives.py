"""What a ranking puts first, and the one order that follows from it.

Fitting configurations come first under every objective (one that does not fit is no answer); those that do
not fit follow in the same order. Money objectives rank priced configurations before unpriced ones ("no
price: set one"). A new objective is a member here, its words here, its sort key in `_key` (mypy's
exhaustiveness check of the match says where), and its translations in i18n/zh_CN.py.
"""

from __future__ import annotations

from enum import StrEnum
from typing import assert_never

from advisor.core.workload import as_member
from advisor.recommend.recommendation import Recommendation


class Objective(StrEnum):
    PERF_PER_DOLLAR = "perf_per_dollar"
    CHEAPEST = "cheapest"
    FASTEST = "fastest"

    @property
    def label(self) -> str:
        """The app's name for it (the key of its translations)."""
        return {
            Objective.PERF_PER_DOLLAR: "best value (speed per dollar)",
            Objective.CHEAPEST: "cheapest that fits",
            Objective.FASTEST: "fastest",
        }[self]

    @property
    def ranked_by(self) -> str:
        """What the PDF says the cards were ranked by."""
        return {
            Objective.PERF_PER_DOLLAR: "throughput per dollar",
            Objective.CHEAPEST: "lowest price",
            Objective.FASTEST: "highest throughput",
        }[self]


def as_objective(value: object) -> Objective:
    """`value` (a member or its text) as an Objective; anything else is an error, never a silent default."""
    return as_member(Objective, "objective", value)


def _key(objective: Objective, e: Recommendation) -> tuple[float, ...]:
    price = e.price_usd if e.price_usd is not None else float("inf")
    unpriced = e.price_usd is None
    match objective:
        case Objective.FASTEST:
            return (not e.fits, -e.throughput, price)
        case Objective.CHEAPEST:  # the job's cost when known, else the price (lowest first)
            cost = e.job_cost_usd if e.job_cost_usd is not None else price
            return (not e.fits, unpriced, cost, -e.throughput)
        case Objective.PERF_PER_DOLLAR:
            # equal to 4 significant figures is a tie (data parallel on 8 cards gives 8 x the speed for 8 x the
            # price), and a tie goes to fewer cards: each extra one costs a slot, power and a bigger board
            return (not e.fits, unpriced, -float(f"{e.perf_per_dollar or 0.0:.4g}"), e.count, -e.throughput)
        case _:
            assert_never(objective)


def ordered(entries: list[Recommendation], objective: Objective | str) -> list[Recommendation]:
    """`entries` in the objective's order (the module docstring); an unknown objective is an AdvisorError."""
    chosen = as_objective(objective)
    return sorted(entries, key=lambda e: _key(chosen, e))
