"""What each card holds under one named plan on N cards, at the estimate's batch: the figures `advisor
recommend` ranks for that card count and plan (ranking._entry takes its required bytes from here), for a
caller that names the plan (benchmarks/llm_memory.py replays published multi-card runs through it).

Training and inference: the estimate's figures less the model state the plan moves off each card
(plans.plan_cost); generation: the busiest card's share of the weights and of the KV cache, and the runtime's
own rule for what it asks beyond what it holds (serving.generation_required).
"""

from __future__ import annotations

from dataclasses import dataclass

from advisor.core.errors import SpecError
from advisor.core.estimate import Estimate
from advisor.recommend.plans import Plan, PlanCost, plan_cost, plans_for, zero3_reserved_floor_bytes
from advisor.recommend.serving import generation_cost, generation_peak, generation_required, kv_cache_bytes


@dataclass(frozen=True)
class CardMemory:
    """The busiest card of a plan at the estimate's batch."""

    cost: PlanCost
    peak_bytes: int
    reserved_bytes: int
    required_bytes: int
    kv_cache_bytes: int  # generation: the KV cache of the workload's sequences on that card


def named_cost(e: Estimate, plan: Plan | str, count: int) -> PlanCost:
    """The cost recommend ranks for `plan` on `count` cards; a plan it does not offer for this workload on
    that many cards is the caller's mistake (SpecError, naming the plans it offers)."""
    try:
        plan = Plan(plan)
    except ValueError:
        names = ", ".join(p for p in Plan if p is not Plan.INCOMPLETE)
        raise SpecError(f"plan: {plan!r} is not one of {names}") from None
    w = e.workload
    if e.generation is not None:
        costs = generation_cost(e, count)
    else:
        costs = [plan_cost(e, p, count) for p in plans_for(count, w.training)]
    found = next((c for c in costs if c.plan is plan), None)
    if found is None:
        offered = ", ".join(c.plan for c in costs)
        raise SpecError(f"plan: {plan} does not apply to {w.mode} of {e.model} on {count} card(s); offered: {offered}")
    return found


def card_memory(e: Estimate, cost: PlanCost) -> CardMemory:
    """The figures of the busiest card under `cost` (a named_cost or one of the ranking's)."""
    m = e.memory
    if e.generation is not None:
        peak = generation_peak(e, cost)
        kv = int(kv_cache_bytes(e) * cost.kv_share)
        return CardMemory(cost, peak, m.reserved_bytes - (m.peak_bytes - peak), generation_required(e, cost), kv)
    saved = cost.saved_bytes
    reserved = m.reserved_bytes - saved
    if cost.plan is Plan.ZERO3:  # FSDP's wrapping leaves a cache the step's other streams cannot use
        reserved = max(reserved, zero3_reserved_floor_bytes(e, cost.count))
    return CardMemory(cost, m.peak_bytes - saved, reserved, m.required_bytes - saved, 0)
