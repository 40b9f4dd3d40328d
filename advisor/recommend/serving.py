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
from advisor.core.generation import GenerationProfile
from advisor.core.llm.runtime import vllm_held_limit, vllm_required_bytes
from advisor.core.workload import LORA_TARGETS, Runtime, WeightFormat
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
    """The whole batch's KV cache in the estimate's peak, as its runtime holds it (core/llm/generate.py):
    vLLM's whole blocks of every token (no sliding window in its one cache group), llama.cpp's cache of the
    padded n_ctx, transformers' cache in the phase that peaks. A split divides this cache."""
    return e.memory.at_peak.kv_cache if e.generation is not None else 0


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


def serving_reasons(cost: PlanCost, dev: Device, training: bool = False) -> tuple[Reason, ...]:
    """What a split plan does (none for the other plans)."""
    split = ReasonCode.LAYER_SPLIT_TRAIN if training else ReasonCode.LAYER_SPLIT
    codes = {Plan.TENSOR_PARALLEL: ReasonCode.TENSOR_PARALLEL, Plan.LAYER_SPLIT: split}
    if cost.plan not in codes:
        return ()
    return (reason(codes[cost.plan], count=cost.count, link=dev.ring_name(cost.count)),)


def split_holdings(e: Estimate, plan: str, count: int) -> tuple[int, int] | None:
    """Weight and KV-cache bytes the busiest card holds when generation is split `plan` over `count` cards
    (the app explains a split plan with them); None where that plan does not apply."""
    if e.generation is None:
        return None
    cost = next((c for c in generation_cost(e, count) if c.plan == plan and c.plan.splits_model), None)
    if cost is None:
        return None
    return int(e.memory.at_peak.weights * cost.weight_share), int(kv_cache_bytes(e) * cost.kv_share)


def generation_curves(result: Estimate) -> tuple[MemoryCurve, MemoryCurve]:
    """The generation estimate's own line (weights + batch x (KV cache + prefill)) and, shifted by what the
    estimate needs over its peak, its required line."""
    m = result.memory
    line = MemoryCurve(((m.fixed_bytes, m.per_sample_bytes),), 0)
    return line, line.transformed(1.0, m.required_bytes - m.peak_bytes, 0.0)


def _held(e: Estimate, cost: PlanCost) -> tuple[float, float]:
    """The busiest card's bytes that do not grow with the batch, and those each sequence adds: its share of the
    weights and of the KV cache (plans.split_cost), the prefill activations and workspaces whole (not split:
    vLLM profiles the same activation peak at -tp 1 and 2, benchmarks/data/llm_memory_runs.csv)."""
    if e.generation is None:
        raise ValueError("generation_memory needs a generate-mode estimate")
    m, w = e.memory, e.workload
    kv_per_sequence = kv_cache_bytes(e) / w.batch
    weights = m.at_peak.weights
    fixed = weights * cost.weight_share + (m.fixed_bytes - weights) + _engine_change(e, cost)
    return fixed, kv_per_sequence * cost.kv_share + (m.per_sample_bytes - kv_per_sequence)


def _engine_change(e: Estimate, cost: PlanCost) -> int:
    """What vLLM 0.17-0.19's graphs and non-torch memory take on the plan's busiest card beyond what they
    take on one card (the estimate's workspace holds the one card's: core/llm/vllm_graphs.py)."""
    engine = e.generation.vllm_engine if e.generation is not None else None
    if engine is None:
        return 0
    return engine.held_bytes(cost.tensor_ways, cost.stages) - engine.held_bytes()


def _after_share_graph_bytes(g: GenerationProfile, cost: PlanCost) -> int:
    """The CUDA graphs vLLM captures after its share on the plan's busiest card."""
    engine = g.vllm_engine
    return g.after_share_graph_bytes if engine is None else engine.graph_bytes(cost.tensor_ways, cost.stages)


def _required_for(e: Estimate, held: int, cost: PlanCost) -> int:
    """What the runtime asks beyond what it holds: vLLM's share of each card (core/llm/runtime.py
    vllm_required_bytes, with the plan's CUDA graphs after the share), else what the allocator cannot reuse
    (required - peak, core/budget.py), whole (conservative)."""
    if e.workload.runtime_used == Runtime.VLLM and e.generation is not None:
        g = e.generation
        graphs = _after_share_graph_bytes(g, cost)
        return vllm_required_bytes(held, e.workload.gpu_memory_utilization, graphs, g.after_share_warmup_bytes)
    return held + e.memory.required_bytes - e.memory.peak_bytes


def generation_required(e: Estimate, cost: PlanCost) -> int:
    """Bytes the busiest card needs at the estimate's batch, as core's generation estimate counts them."""
    fixed, per_sequence = _held(e, cost)
    return _required_for(e, int(fixed + e.workload.batch * per_sequence), cost)


def generation_memory(e: Estimate, cost: PlanCost, usable_bytes: int) -> tuple[int, int]:
    """Bytes each card needs at the estimate's batch (generation_required), and the largest batch that fits
    `usable_bytes`."""
    fixed, per_sequence = _held(e, cost)
    w = e.workload
    if w.runtime_used == Runtime.VLLM and e.generation is not None:
        g = e.generation
        graphs = _after_share_graph_bytes(g, cost)
        limit = vllm_held_limit(usable_bytes, w.gpu_memory_utilization, graphs, g.after_share_warmup_bytes)
    else:
        limit = usable_bytes - (e.memory.required_bytes - e.memory.peak_bytes)
    largest = math.floor((limit - fixed) / per_sequence) if per_sequence > 0 else w.batch
    return generation_required(e, cost), max(largest, 0)


def generation_peak(e: Estimate, cost: PlanCost) -> int:
    """The busiest card's peak under a generation plan: the estimate's, less the weights and cache it sheds,
    with the plan's own vLLM graphs and non-torch memory."""
    state = e.memory.at_peak.weights * (1 - cost.weight_share) + kv_cache_bytes(e) * (1 - cost.kv_share)
    return e.memory.peak_bytes - int(state) + _engine_change(e, cost)
