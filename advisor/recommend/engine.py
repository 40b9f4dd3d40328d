"""Ranks every card (and 1, 2, 4, 8 of it) for one workload: fit, largest batch, speed, price per work."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import date

from advisor.catalog.records import CardRecord, PriceRecord, missing_figures
from advisor.core.curve import MemoryCurve, memory_curve
from advisor.core.estimate import WORST_PEAK_TO_BUDGET, Estimate, estimate, with_loss_head
from advisor.core.graph import Graph
from advisor.core.units import format_bytes
from advisor.core.workload import Workload
from advisor.recommend.devices import Device, device
from advisor.recommend.plans import PlanCost, plan_cost, plans_for
from advisor.recommend.timing import StepWork, step_seconds, step_work

OBJECTIVES = ("perf_per_dollar", "cheapest", "fastest")


@dataclass(frozen=True)
class Options:
    objective: str = "perf_per_dollar"
    budget_usd: float | None = None
    max_gpus: int = 8
    counts: tuple[int, ...] = (1, 2, 4, 8)


@dataclass(frozen=True)
class Recommendation:
    card: str
    count: int
    plan: str
    fits: bool
    reason: str
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


@dataclass(frozen=True)
class Job:
    """What ranking needs from the estimate: the result, its memory curve and its card-independent work."""

    estimate: Estimate
    curve: MemoryCurve
    work: StepWork


def prepare(graph: Graph, workload: Workload) -> Job:
    """Estimates once; every card is then judged from these three without re-running the model."""
    training_graph = with_loss_head(graph) if workload.training else graph
    first = graph.nodes[0].output
    tokens = first.shape[0] if first.dtype == "int64" and first.shape else 1
    result = estimate(graph, workload)
    return Job(result, memory_curve(training_graph, workload), step_work(result, tokens))


def _required(w: Job, batch: int, cost: PlanCost) -> int:
    """At the estimated batch, from the estimate's own peak (the headline "Required" when nothing is sharded):
    the curve through a few batches can differ from it by a rounding, and one figure must read the same."""
    memory = w.estimate.memory
    if batch != w.estimate.workload.batch:
        return int((w.curve.peak_bytes(batch) - cost.saved_bytes) / WORST_PEAK_TO_BUDGET)
    if not cost.saved_bytes:
        return memory.required_bytes
    return int((memory.peak_bytes - cost.saved_bytes) / WORST_PEAK_TO_BUDGET)


def _reason(fits: bool, required: int, dev: Device, cost: PlanCost, batch: int) -> str:
    text = (f"{'fits' if fits else 'does not fit'}: needs {format_bytes(required)} per card at batch {batch}; "
            f"{format_bytes(dev.memory_bytes)} card has {format_bytes(dev.usable_bytes)} usable after the CUDA context")
    if dev.vendor != "NVIDIA":
        text += "; memory modelled on CUDA's allocator (PyTorch runs this card through ROCm or XPU)"
    if cost.plan == "data_parallel":
        text += "; data parallel: each card holds the whole model, memory does not pool"
    elif cost.plan.startswith("zero"):
        text += f"; {cost.plan.upper()} shards model state over {cost.count} cards ({dev.link_name})"
    return text


def _entry(w: Job, card: CardRecord, dev: Device, single_step: float, cost: PlanCost,
           price: PriceRecord | None) -> Recommendation:
    batch = w.estimate.workload.batch
    required = _required(w, batch, cost)
    fits = required <= dev.usable_bytes
    budget = dev.usable_bytes * WORST_PEAK_TO_BUDGET + cost.saved_bytes
    step = single_step + cost.comm_bytes / (dev.link_gbs * 1e9)
    throughput = cost.count * batch * w.work.tokens_per_sample / step
    total_price = price.amount * cost.count if price else None
    return Recommendation(
        card.name, cost.count, cost.plan, fits, _reason(fits, required, dev, cost, batch), required,
        dev.usable_bytes, w.curve.max_batch(budget), step, throughput,
        "tokens/s" if w.work.tokens_per_sample > 1 else "samples/s", total_price,
        price.date if price else None, price.condition if price else None,
        throughput / total_price if total_price else None, throughput / (dev.tdp_w * cost.count))


def _incomplete(w: Job, card: CardRecord, missing: tuple[str, ...]) -> Recommendation:
    """A card without a figure ranking divides by: one row that says so, ranked last (plan "incomplete")."""
    return Recommendation(card.name or "(no name)", 1, "incomplete", False,
                          f"incomplete: {', '.join(missing)} not given; set them in the catalog",
                          w.estimate.memory.required_bytes, 0, 0, 0.0, 0.0, "samples/s", None, None, None,
                          None, 0.0)


def rank(w: Job, cards: Sequence[CardRecord], prices: dict[str, PriceRecord | None],
         options: Options) -> list[Recommendation]:
    entries = []
    workload = w.estimate.workload
    for card in cards:  # the time on one card is the same for every plan; plans add communication
        if missing_figures(card):
            entries.append(_incomplete(w, card, missing_figures(card)))
            continue
        dev = device(card, workload)
        single = step_seconds(w.work, dev)
        for count in (c for c in options.counts if c <= options.max_gpus):
            for plan in plans_for(count, workload.training):
                entry = _entry(w, card, dev, single, plan_cost(w.estimate, plan, count), prices.get(card.name))
                if options.budget_usd is None or entry.price_usd is None or entry.price_usd <= options.budget_usd:
                    entries.append(entry)
    return _sorted(_note_sharding(entries), options.objective)


def _note_sharding(entries: list[Recommendation]) -> list[Recommendation]:
    """Says where sharding makes a model fit that data parallel on the same cards cannot."""
    dp_fits = {(e.card, e.count) for e in entries if e.fits and e.plan in ("single", "data_parallel")}
    return [replace(e, reason=e.reason + "; fits only because model state is sharded")
            if e.fits and e.plan.startswith("zero") and (e.card, e.count) not in dp_fits else e
            for e in entries]


def _sorted(entries: list[Recommendation], objective: str) -> list[Recommendation]:
    def key(e: Recommendation) -> tuple[float, ...]:
        price = e.price_usd if e.price_usd is not None else float("inf")
        if objective == "cheapest":
            return (not e.fits, price, -e.throughput)
        if objective == "fastest":
            return (not e.fits, -e.throughput, price)
        return (not e.fits, -(e.perf_per_dollar or 0.0), -e.throughput)

    return sorted(entries, key=key)
