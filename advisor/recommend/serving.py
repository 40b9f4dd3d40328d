"""Generation on one or several cards: which plans apply, what each card holds, how fast, and why.

The bridge between an estimate in generate mode (its GenerationProfile) and the ranking engine: plans come
from advisor.recommend.plans, speed from advisor.recommend.generation_speed.
"""

from __future__ import annotations

import math
from dataclasses import replace

from advisor.catalog.records import CardRecord
from advisor.core.curve import MemoryCurve
from advisor.core.estimate import Estimate
from advisor.core.workload import LORA_TARGETS, WeightFormat
from advisor.recommend.devices import Device, generation_rates
from advisor.recommend.generation_speed import GenerationRun, GenerationSpeed, Split, generation_speed
from advisor.recommend.plans import (
    Plan,
    PlanCost,
    plan_cost,
    plans_for,
    split_cost,
    tensor_parallel_fits,
)
from advisor.recommend.reasons import Reason, ReasonCode, reason
from advisor.recommend.recommendation import Recommendation

# The last estimate's run: a ranking asks for it once per card and plan (an identity check, so a new
# estimate, even an equal one, is counted afresh; a race between threads only counts it twice)
_last_run: tuple[Estimate, GenerationRun | None] | None = None


def generation_run(e: Estimate) -> GenerationRun | None:
    """The card-independent generation work of a generate-mode estimate (None in other modes): with the ops an
    eager runtime dispatches per forward (counted over the rows as the training time model counts them) and
    the blocks' linear layers that run quantized kernels (GPTQ/AWQ/GGUF weights; the LM head stays 16-bit)."""
    global _last_run
    last = _last_run
    if last is not None and last[0] is e:
        return last[1]
    run = _generation_run(e)
    _last_run = (e, run)
    return run


def _generation_run(e: Estimate) -> GenerationRun | None:
    if e.generation is None:
        return None
    w = e.workload
    host_ops = sum(row.host_ops for row in e.layers)  # what step_layers.layer_work reads, without its GEMMs
    # MXFP4 quantizes the experts alone (core/llm/quant.py): the blocks' projections run 16-bit GEMMs
    quantized = w.weights is not None and w.weights.quantized and w.weights != WeightFormat.MXFP4
    linears = sum(1 for row in e.layers if row.name.rsplit(".", 1)[-1] in LORA_TARGETS) if quantized else 0
    return GenerationRun(
        profile=e.generation,
        param_count=e.param_count,
        batch=w.batch,
        prompt_len=w.prompt_len,
        new_tokens=w.new_tokens,
        host_ops=host_ops,
        quantized_linears=linears,
    )


def kv_cache_bytes(e: Estimate) -> int:
    """The whole batch's cache at the end of generation: every prompt and generated token of every sequence."""
    if e.generation is None:
        return 0
    w = e.workload
    return e.generation.kv_bytes_per_token * w.batch * (w.prompt_len + w.new_tokens)


def generation_cost(e: Estimate, count: int) -> list[PlanCost]:
    """Every generation plan on `count` cards; tensor parallel only where whole heads fall on each card."""
    profile = e.generation
    costs = []
    for plan in plans_for(count, False, generating=True):
        if plan.splits_model and profile is not None:
            if plan is Plan.TENSOR_PARALLEL and not tensor_parallel_fits(profile, count):
                continue
            costs.append(split_cost(profile, plan, count, kv_cache_bytes(e)))
        else:
            costs.append(plan_cost(e, plan, count))
    return costs


def split_speed(run: GenerationRun, card: CardRecord, dev: Device, cost: PlanCost) -> GenerationSpeed:
    split = Split(cost.tensor_ways, cost.stages, dev.ring_gbs(cost.count))
    return generation_speed(run, generation_rates(card), split=split)


def entry_speed(e: Estimate, card: CardRecord, dev: Device, cost: PlanCost) -> GenerationSpeed | None:
    """Generation speed of one ranked configuration (None outside generate mode)."""
    run = generation_run(e)
    return split_speed(run, card, dev, cost) if run is not None else None


def note_split(entry: Recommendation) -> Recommendation:
    """Says so when a split plan makes a model fit that data parallel on the same cards cannot."""
    notes = {Plan.TENSOR_PARALLEL: ReasonCode.ONLY_TENSOR_SPLIT, Plan.LAYER_SPLIT: ReasonCode.ONLY_LAYER_SPLIT}
    if not entry.fits or entry.plan not in notes:
        return entry
    return replace(entry, reasons=(*entry.reasons, reason(notes[entry.plan], count=entry.count)))


def serving_reasons(cost: PlanCost, dev: Device) -> tuple[Reason, ...]:
    """What a split plan does (none for the other plans)."""
    codes = {Plan.TENSOR_PARALLEL: ReasonCode.TENSOR_PARALLEL, Plan.LAYER_SPLIT: ReasonCode.LAYER_SPLIT}
    if cost.plan not in codes:
        return ()
    return (reason(codes[cost.plan], count=cost.count, link=dev.ring_name(cost.count)),)


def kept_share(cost: PlanCost, layers: int) -> float:
    """Share of the weights and KV cache on each card: 1/N under tensor parallel, the busiest card's layers
    under layer split (ceil(layers / N) of them), all of it otherwise."""
    if cost.tensor_ways > 1:
        return 1 / cost.tensor_ways
    if cost.stages > 1:
        return math.ceil(layers / cost.stages) / layers
    return 1.0


def split_holdings(e: Estimate, plan: str, count: int) -> tuple[int, int] | None:
    """Weight and KV-cache bytes the busiest card holds when generation is split `plan` over `count` cards
    (the app explains a split plan with them); None where that plan does not apply."""
    if e.generation is None:
        return None
    cost = next((c for c in generation_cost(e, count) if c.plan == plan and c.plan.splits_model), None)
    if cost is None:
        return None
    share = kept_share(cost, e.generation.layers)
    return int(e.memory.at_peak.weights * share), int(kv_cache_bytes(e) * share)


def generation_curves(result: Estimate) -> tuple[MemoryCurve, MemoryCurve]:
    """The generation estimate's own line (weights + batch x (KV cache + prefill)) and, shifted by what the
    estimate needs over its peak, its required line."""
    m = result.memory
    line = MemoryCurve(((m.fixed_bytes, m.per_sample_bytes),), 0)
    return line, line.transformed(1.0, m.required_bytes - m.peak_bytes, 0.0)


def generation_memory(e: Estimate, cost: PlanCost, usable_bytes: int) -> tuple[int, int]:
    """Bytes each card needs at the estimate's batch, and the largest batch that fits `usable_bytes`.

    As core's generation estimate counts it: the peak plus what the allocator cannot reuse (required -
    peak, core/budget.py); split plans keep their share of the weights and KV cache on each card (the rest,
    and that overhead, stay whole: conservative)."""
    if e.generation is None:
        raise ValueError("generation_memory needs a generate-mode estimate")
    m, w = e.memory, e.workload
    share = kept_share(cost, e.generation.layers)
    kv_per_sequence = kv_cache_bytes(e) / w.batch
    weights = m.at_peak.weights
    fixed = weights * share + (m.fixed_bytes - weights) + (m.required_bytes - m.peak_bytes)
    per_sequence = kv_per_sequence * share + (m.per_sample_bytes - kv_per_sequence)
    required = int(fixed + w.batch * per_sequence)
    largest = math.floor((usable_bytes - fixed) / per_sequence) if per_sequence > 0 else w.batch
    return required, max(largest, 0)
