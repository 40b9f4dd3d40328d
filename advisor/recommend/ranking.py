"""Ranks every card (and 1, 2, 4, 8 of it) for one workload: fit, largest batch, speed, price per work."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from advisor.catalog.records import CardRecord, PriceRecord, missing_figures
from advisor.catalog.software import context_name, software_path
from advisor.core.estimate import Estimate
from advisor.recommend.devices import Device, device, most_cards
from advisor.recommend.money import MoneyOptions, money_facts, within_budget
from advisor.recommend.objectives import Objective, as_objective, ordered
from advisor.recommend.per_card import card_memory
from advisor.recommend.plans import Plan, PlanCost, plan_cost, plans_for
from advisor.recommend.prepare import RankingInput
from advisor.recommend.reasons import Reason, ReasonCode, reason
from advisor.recommend.recommendation import Recommendation
from advisor.recommend.runtime_support import workload_refusal
from advisor.recommend.serving import (
    entry_speed,
    generation_cost,
    generation_memory,
    note_split,
    serving_reasons,
)
from advisor.recommend.timing import step_seconds


@dataclass(frozen=True)
class RankingOptions:
    objective: Objective = Objective.PERF_PER_DOLLAR  # its text is accepted too (__post_init__)
    budget_usd: float | None = None
    max_gpus: int = 8
    counts: tuple[int, ...] = (1, 2, 4, 8)
    money: MoneyOptions = field(default_factory=MoneyOptions)  # price basis, job size, electricity (money.py)

    def __post_init__(self) -> None:
        object.__setattr__(self, "objective", as_objective(self.objective))


def _required(given: RankingInput, batch: int, cost: PlanCost) -> int:
    """Per card, less the model state the plan moves off the card. At the estimated batch, the estimate's own
    required bytes (the headline "Required": one figure reads the same everywhere); else the required curve."""
    if batch == given.estimate.workload.batch:
        return card_memory(given.estimate, cost).required_bytes
    return given.required.peak_bytes(batch) - cost.saved_bytes


# An ATX desktop board has 7 expansion slots (ATX Specification 2.2, Intel 2004, section 2: "up to seven
# expansion slots"): with double-width cards, 4 at most (slots 1, 3, 5, 7), and only on boards wired for it.
DESKTOP_MAX_CARDS = 4


def _reasons(
    fits: bool,
    required: int,
    dev: Device,
    cost: PlanCost,
    batch: int,
    software: str,
    segment: str = "datacenter",
    pytorch: bool = True,
    training: bool = False,
    refusal: Reason | None = None,
) -> tuple[Reason, ...]:
    """`fits`: the memory fits; `refusal`: why the runtime cannot run the card (then the memory only "would
    fit")."""
    memory = ReasonCode.FITS if fits else ReasonCode.DOES_NOT_FIT
    if refusal is not None and fits:
        memory = ReasonCode.WOULD_FIT
    found = [] if refusal is None else [refusal]
    found += [
        reason(
            memory,
            required_bytes=required,
            batch=batch,
            memory_bytes=dev.memory_bytes,
            usable_bytes=dev.usable_bytes,
            context=context_name(software),
        )
    ]
    if software != "CUDA" and pytorch:  # llama.cpp sizes its own ggml buffers: no PyTorch allocator to model
        found.append(reason(ReasonCode.NOT_CUDA, software=software))
    if cost.plan is Plan.DATA_PARALLEL:
        found.append(reason(ReasonCode.DATA_PARALLEL))
    elif cost.plan.sharded:  # "ZeRO-3" as the table and the fit list spell it ("ZERO3" read like a typo)
        found.append(
            reason(
                ReasonCode.ZERO, stage=f"ZeRO-{cost.plan.zero_stage}", count=cost.count, link=dev.ring_name(cost.count)
            )
        )
    if segment == "consumer" and cost.count > DESKTOP_MAX_CARDS:
        found.append(reason(ReasonCode.BEYOND_DESKTOP, count=cost.count))
    return (*found, *serving_reasons(cost, dev, training))


def _entry(
    given: RankingInput,
    card: CardRecord,
    dev: Device,
    single_step: float,
    cost: PlanCost,
    price: PriceRecord | None,
    rent: PriceRecord | None = None,
    money: MoneyOptions = MoneyOptions(),  # noqa: B008
) -> Recommendation:
    batch = given.estimate.workload.batch
    required = _required(given, batch, cost)
    max_batch = given.required.max_batch(dev.usable_bytes + cost.saved_bytes)
    if given.estimate.generation is not None:
        required, max_batch = generation_memory(given.estimate, cost, dev.usable_bytes)
    memory_fits = required <= dev.usable_bytes
    # the curve through a few batches can differ from the estimate by a rounding: keep the two consistent
    max_batch = max(max_batch, batch) if memory_fits else min(max_batch, batch - 1)
    refusal = workload_refusal(given.estimate.workload, card)
    fits = memory_fits and refusal is None
    if refusal is not None:  # the runtime does not run the card: no batch runs on it
        max_batch = 0
    step = single_step + dev.comm_seconds(cost.comm_bytes, cost.count)
    throughput = cost.replicas * batch * given.work.tokens_per_sample / step  # a layer split is one replica
    speed = entry_speed(given.estimate, card, dev, cost)
    if speed is not None:  # generate mode: a step is one decode step; throughput is generated tokens/s
        step, throughput = speed.decode_step_s, cost.replicas * speed.decode_tokens_per_s
    total_price = price.amount * cost.count if price else None
    power_w = dev.tdp_w * card.devices * cost.count
    facts = money_facts(price, rent, cost.count, throughput, power_w, given.work.tokens_per_sample, money)
    software = software_path(card.vendor, card.architecture)
    w = given.estimate.workload
    return Recommendation(
        card=card.name,
        count=cost.count,
        plan=cost.plan,
        fits=fits,
        reasons=_reasons(
            memory_fits, required, dev, cost, batch, software, card.segment, w.runtime_used.pytorch, w.training, refusal
        ),
        required_bytes=required,
        usable_bytes=dev.usable_bytes,
        max_batch=max_batch,
        step_time_s=step,
        throughput=throughput,
        throughput_unit="tokens/s" if given.work.tokens_per_sample > 1 or speed else "samples/s",
        price_usd=total_price,
        price_date=price.date if price else None,
        price_condition=price.condition if price else None,
        perf_per_dollar=throughput / total_price if total_price else None,
        perf_per_watt=throughput / (dev.tdp_w * cost.count),
        prefill_tokens_per_s=speed.prefill_tokens_per_s * cost.replicas if speed else None,
        decode_tokens_per_s=throughput if speed else None,
        price_kind=price.kind if price else None,
        price_source=price.source if price else None,
        software=software,
        power_w=power_w,
        **facts._asdict(),
    )


def _incomplete(given: RankingInput, card: CardRecord, missing: tuple[str, ...]) -> Recommendation:
    """A card without a figure ranking divides by: one row that says so, ranked last (plan "incomplete")."""
    return Recommendation(
        card=card.name or "(no name)",
        count=1,
        plan=Plan.INCOMPLETE,
        fits=False,
        reasons=(reason(ReasonCode.INCOMPLETE, missing=", ".join(missing)),),
        required_bytes=given.estimate.memory.required_bytes,
        usable_bytes=0,
        max_batch=0,
        step_time_s=0.0,
        throughput=0.0,
        throughput_unit="samples/s",
        price_usd=None,
        price_date=None,
        price_condition=None,
        perf_per_dollar=None,
        perf_per_watt=0.0,
    )


def rank(
    given: RankingInput,
    cards: Sequence[CardRecord],
    prices: dict[str, PriceRecord | None],
    options: RankingOptions,
    rents: dict[str, PriceRecord | None] | None = None,
) -> list[Recommendation]:
    """`prices`: each card's price under the options' basis; `rents`: its rent per GPU-hour, for the
    break-even of a purchase (money.py)."""
    entries = []
    workload = given.estimate.workload
    for card in cards:  # the time on one card is the same for every plan; plans add communication
        if missing_figures(card):
            entries.append(_incomplete(given, card, missing_figures(card)))
            continue
        dev = device(card, workload)
        single = step_seconds(given.work, dev)
        ceiling = min(options.max_gpus, most_cards(card) or options.max_gpus)
        for count in (c for c in options.counts if c <= ceiling):
            for cost in _costs(given.estimate, count):
                entry = _entry(
                    given, card, dev, single, cost, prices.get(card.name), (rents or {}).get(card.name), options.money
                )
                if within_budget(entry, options.budget_usd):
                    entries.append(entry)
    return ordered(_note_sharding(entries), options.objective)


def _costs(e: Estimate, count: int) -> list[PlanCost]:
    """Every plan on `count` cards; generation's split plans where the model can be split that way."""
    if e.generation is not None:
        return generation_cost(e, count)
    return [plan_cost(e, plan, count) for plan in plans_for(count, e.workload.training)]


def _note_sharding(entries: list[Recommendation]) -> list[Recommendation]:
    """Says where sharding makes a model fit that data parallel on the same cards cannot."""
    dp_fits = {(e.card, e.count) for e in entries if e.fits and e.plan in (Plan.SINGLE, Plan.DATA_PARALLEL)}
    entries = [note_split(e) if (e.card, e.count) not in dp_fits else e for e in entries]
    return [
        replace(e, reasons=(*e.reasons, reason(ReasonCode.ONLY_SHARDED)))
        if e.fits and e.plan.sharded and (e.card, e.count) not in dp_fits
        else e
        for e in entries
    ]
