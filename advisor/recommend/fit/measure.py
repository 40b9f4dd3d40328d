"""Measures one way of running a workload on one card: re-estimates it (never a rule of thumb) and times it.

A `Variant` is the workload plus what the workload controls cannot say: in-place activations, frozen
layers, 8-bit optimizer state, gradient accumulation, another sequence length. Memory comes from the
estimator (the analytic replay of the step, or the simulated PyTorch step for imported modules where the
change is one the simulator runs); time from the per-layer roofline of advisor.recommend.timing.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Literal

from advisor.catalog.records import CardRecord
from advisor.core.analytic import estimate
from advisor.core.budget import analytic_curves, required_for_peak
from advisor.core.curve import MemoryCurve
from advisor.core.estimate import Estimate
from advisor.core.graph import Graph
from advisor.core.loss_head import with_loss_head
from advisor.core.replay import replay_step, step_plan
from advisor.core.tracker import Store
from advisor.core.workload import Finetune, Workload
from advisor.recommend.devices import Device, device, generation_rates
from advisor.recommend.generation_speed import generation_speed
from advisor.recommend.rewrites import freeze_before, trainable_layers, with_inplace_activations
from advisor.recommend.serving import generation_curves, generation_run
from advisor.recommend.timing import step_seconds, step_work


@dataclass(frozen=True)
class Subject:
    """The model as the estimator sees it, and how to get it at another sequence length or by simulation."""

    graph: Graph
    workload: Workload
    seq_len: int | None = None  # tokens per sample of a sequence model, None for others
    rebuild: Callable[[int], Graph] | None = None  # the graph at another sequence length
    simulate: Callable[[Workload], Estimate] | None = None  # the simulated step of an imported module


@dataclass(frozen=True)
class Variant:
    workload: Workload
    inplace: bool = False
    freeze: str = ""  # "": train everything; "half": freeze the first half of the blocks; "head": all but it
    accumulate: int = 1  # micro-steps per optimizer step (gradient accumulation)
    seq_len: int | None = None  # None: the subject's


@dataclass(frozen=True)
class Target:
    """The chosen card, as fitting needs it."""

    name: str
    usable_bytes: int
    bf16: bool  # has a bf16 tensor/matrix path (Ampere and later, CDNA 2+, ...)
    card: CardRecord = field(repr=False)

    def device(self, workload: Workload) -> Device:
        return device(self.card, workload)


def target(card: CardRecord) -> Target:
    return Target(card.name, device(card, Workload()).usable_bytes, bool(card.bf16_tflops), card)


# an estimate's own method (8-bit optimizer state was once "modelled": scaled on the estimate; it is now the
# estimators' own optimizer, core/optimizers.py and importers/simulate/optimizers.py)
MeasuredMethod = Literal["analytic", "simulated"]


@dataclass(frozen=True)
class Measured:
    peak_bytes: int
    required_bytes: int
    step_time_s: float  # one optimizer step (with accumulation: all its micro-steps)
    samples_per_step: int
    throughput: float  # samples/s, or tokens/s for sequence models
    step_flops: int  # including recomputation under checkpointing
    method: MeasuredMethod
    estimate: Estimate = field(repr=False)

    def fits(self, usable_bytes: int) -> bool:
        return self.required_bytes <= usable_bytes


def accumulated_peak(graph: Graph, workload: Workload) -> int:
    """Peak of a micro-step under gradient accumulation: .grad stays allocated from the first micro-step on,
    so the forward and backward of the later ones run beside all the gradients. Replays the simulated
    step's allocations with the gradients live from the start; each layer's new gradient is a temporary
    added into .grad (AccumulateGrad) and freed at once."""
    profile = replay_step(with_loss_head(graph), workload)
    grads = sum(size for key, size in profile.events if key.store == Store.PARAM_GRAD and size > 0)
    current = peak = grads
    for key, size in profile.events:
        if key.store == Store.PARAM_GRAD:
            peak = max(peak, current + size)  # the new gradient, before it is added in
            continue
        current += size
        peak = max(peak, current)
    return peak


class Measurer:
    """Measures variants of one subject on one card; results are cached (combinations share members)."""

    def __init__(self, subject: Subject, card: Target) -> None:
        self.subject, self.card = subject, card
        self._cache: dict[Variant, Measured] = {}
        self._graphs: dict[tuple[int | None, bool, str], Graph] = {}

    def graph(self, v: Variant) -> Graph:
        key = (v.seq_len, v.inplace, v.freeze)
        if key not in self._graphs:
            graph = self.subject.graph
            if v.seq_len is not None and v.seq_len != self.subject.seq_len and self.subject.rebuild:
                graph = self.subject.rebuild(v.seq_len)
            if v.inplace:
                graph = with_inplace_activations(graph)
            if v.freeze:
                graph = freeze_before(graph, first_trained(graph, v.freeze))
            self._graphs[key] = graph
        return self._graphs[key]

    def simulated(self, v: Variant) -> bool:
        """The simulator runs changes of the workload itself; graph rewrites and models go analytic."""
        return (
            self.subject.simulate is not None
            and not v.inplace
            and not v.freeze
            and v.accumulate == 1
            and v.seq_len in (None, self.subject.seq_len)
            # a 4-bit base runs bitsandbytes' kernels, which the meta device has not (simulate/adapters.py)
            and v.workload.finetune != Finetune.QLORA
        )

    def measure(self, v: Variant) -> Measured:
        if v not in self._cache:
            self._cache[v] = self._measure(v)
        return self._cache[v]

    def required_curve(self, v: Variant) -> MemoryCurve:
        """Required bytes against the batch (core/budget.py), for the largest batch that fits."""
        result = self.measure(v).estimate
        if v.workload.generating:
            return generation_curves(result)[1]
        graph = self.graph(v)
        return analytic_curves(graph, v.workload, result.layers)[1]

    def _measure(self, v: Variant) -> Measured:
        graph, w = self.graph(v), v.workload
        simulate = self.subject.simulate
        result = simulate(w) if simulate is not None and self.simulated(v) else estimate(graph, w)
        peak = accumulated_peak(graph, w) if v.accumulate > 1 else result.memory.peak_bytes
        method: MeasuredMethod = result.method
        work = step_work(result, graph.tokens_per_sample)
        flops = result.step_flops
        if w.checkpointing and w.training:  # the rows carry the recomputed forward's kernels (both estimators)
            flops += _recompute_flops(result, graph)
        dev = self.card.device(w)
        run = generation_run(result)
        if run is not None:  # generate: one decode step, generated tokens/s over the batch
            # required: core's rule (weights and KV cache are allocated once, they do not churn)
            speed = generation_speed(run, generation_rates(self.card.card))
            return Measured(
                peak,
                result.memory.required_bytes,
                speed.decode_step_s,
                w.batch,
                speed.decode_tokens_per_s,
                int(result.forward_flops),
                method,
                result,
            )
        if v.accumulate > 1:
            micro = step_seconds(replace(work, optimizer_bytes=0.0), dev)
            seconds = v.accumulate * micro + step_seconds(replace(work, layers=()), dev)
        else:
            seconds = step_seconds(work, dev)
        samples = w.batch * v.accumulate
        required = required_for_peak(peak, result.memory.peak_bytes, result.memory.required_bytes)
        return Measured(
            peak,
            required,
            seconds,
            samples,
            samples * work.tokens_per_sample / seconds,
            v.accumulate * flops,
            method,
            result,
        )


def first_trained(graph: Graph, freeze: str) -> int:
    """Index of the first trained layer: "head" trains the last layer with parameters; "half" the second
    half of the named blocks (transformer layers, residual stages' blocks), or of the layers if none."""
    layers = trainable_layers(graph)
    if freeze == "head" or not layers:
        return layers[-1] if layers else len(graph.nodes)
    blocks = graph.blocks()
    if len(blocks) >= 2:
        return blocks[len(blocks) // 2][1][0]
    return layers[len(layers) // 2]


def _recompute_flops(result: Estimate, graph: Graph) -> int:
    """The FLOPs of the second forward of the recomputed layers (checkpointing costs compute, not memory)."""
    return sum(result.layers[i].forward_flops for i in recompute_rows(result, graph))


def recompute_rows(result: Estimate, graph: Graph) -> list[int]:
    """Layers gradient checkpointing runs forward a second time, in backward: the blocks the memory replay
    recomputes (StepPlan.blocks). A simulated estimate has no blocks: about one whole forward."""
    if result.method != "analytic":
        return list(range(len(result.layers)))
    sim = step_plan(with_loss_head(graph), result.workload)
    return [i for block in sim.blocks for i in block if i < len(result.layers)]


def largest_fitting_batch(measurer: Measurer, v: Variant, usable_bytes: int) -> int:
    """The largest batch whose required bytes fit: from the memory curve, checked by re-estimating (the
    curve ignores a little rounding), stepping down until the estimate agrees."""
    batch = measurer.required_curve(v).max_batch(usable_bytes, limit=v.workload.batch)
    while batch >= 1 and not measurer.measure(replace(v, workload=replace(v.workload, batch=batch))).fits(usable_bytes):
        batch = min(batch - 1, math.floor(batch * 0.97))
    return max(batch, 0)
