"""One ranked configuration: a card, how many of it, the plan, and what fit, speed and money say of it.

Its own module, below the engine (ranking.py) and the parts it calls (money.py, serving.py,
objectives.py), so that each of those takes the record as a plain import, not a type-checking-only one.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from advisor.recommend.plans import Plan
from advisor.recommend.reasons import Reason


@dataclass(frozen=True, kw_only=True)
class Recommendation:
    card: str
    count: int
    plan: Plan  # Plan.INCOMPLETE: a card lacking a figure ranking divides by
    fits: bool
    reasons: tuple[Reason, ...]  # why it fits or not, as data (recommend/reasons.py words them)
    required_bytes: int  # per card, at the requested per-card batch
    usable_bytes: int  # per card
    max_batch: int  # per card, under this plan
    step_time_s: float
    throughput: float  # samples/s or tokens/s over all cards
    throughput_unit: str
    price_usd: float | None  # all cards together
    price_date: date | None
    price_condition: str | None
    perf_per_dollar: float | None
    perf_per_watt: float
    # generate mode (None otherwise): prompt tokens/s of the whole batch, and generated tokens/s over all
    # sequences of all replicas (which is then also `throughput`)
    prefill_tokens_per_s: float | None = None
    decode_tokens_per_s: float | None = None
    # Money facts (money.py): the price's kind (purchase: price_usd is for all cards; rent_hour: USD per
    # hour for all cards), its source, whether it is over a year old; the software path; and with a job size
    # (--samples / --tokens) its hours, its cost and, bought, the hours after which buying beats renting.
    price_kind: str | None = None
    price_source: str | None = None
    price_old: bool = False
    software: str = "CUDA"
    power_w: float = 0.0  # board power of all cards together
    job_hours: float | None = None
    job_cost_usd: float | None = None
    break_even_hours: float | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "plan", Plan(self.plan))  # a plan's text (a test's, a saved row's) is the member
