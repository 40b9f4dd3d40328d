"""One result type for every way of estimating: totals, per-layer rows, the memory breakdown at the peak,
the timeline of the step, and the assumptions behind the numbers."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Literal

from advisor.core.allocator import peak_reserved_bytes
from advisor.core.budget import (
    REPLAY_MARGIN_BYTES,
    conv_workspace_margin_bytes,
    replayed_required_bytes,
    required_bytes,
)
from advisor.core.generation import GenerationProfile
from advisor.core.gradients import requires_grad, trainable_count
from advisor.core.graph import Graph
from advisor.core.kernels import Kernel, Pass, forward_kernels
from advisor.core.layer_kernels import graph_kernels
from advisor.core.loss_head import step_graph
from advisor.core.offload import host_bytes, offload_notes
from advisor.core.optimizers import optimizer_notes
from advisor.core.overheads import DEFAULT_OVERHEAD, device_total_bytes
from advisor.core.replay import replay_step
from advisor.core.tracker import CategoryBytes, Key, TimelinePoint
from advisor.core.workload import OPTIMIZER_STATE_SLOTS, Workload, default_notes


@dataclass(frozen=True, kw_only=True)
class LayerRow:
    """One layer of an estimate. Keyword-only with no defaults: a field an estimator forgets is an error."""

    name: str
    kind: str
    output_shape: tuple[int, ...]  # per sample
    param_count: int
    forward_macs: int  # multiply-adds, at the workload's batch
    forward_flops: int  # 2 x MACs + other arithmetic
    backward_flops: int
    output_bytes: int
    kept_bytes: int  # what autograd holds for backward at the end of the forward pass
    kernels: tuple[Kernel, ...]  # what the layer launches in the step (core.kernels), the time model's input
    host_ops: int  # forward ops Python dispatches for it that launch kernels
    autograd_nodes: int  # of those, the ones backward runs a node for (0 in inference)
    param_tensors: int  # trainable parameter tensors (the optimizer's foreach lists walk them)


@dataclass(frozen=True)
class MemoryEstimate:
    peak_bytes: int  # predicted torch.cuda.max_memory_allocated() of a steady-state step
    reserved_bytes: int  # predicted caching-allocator reservation with plenty of memory
    required_bytes: int  # smallest allocator budget the step runs in
    device_total_bytes: int  # nvidia-smi's view: reserved + workspaces + CUDA context + driver
    at_peak: CategoryBytes
    peak_phase: str
    peak_layer: str
    fixed_bytes: int  # part of the peak that does not grow with the batch
    per_sample_bytes: float  # the rest, per sample: peak = fixed + batch x per_sample at this batch


OPTIMIZER_PHASE = "optimizer step"  # the peak's phase when the optimizer's step sets it (analytic and simulated)


def memory_estimate(
    *,
    peak_bytes: int,
    at_peak: CategoryBytes,
    peak_phase: str,
    peak_layer: str,
    batch: int,
    replayed_reserved_bytes: int,
    replayed_required_bytes: int,
    conv_margin_bytes: int = 0,
    fixed_temporaries_bytes: int = 0,
) -> MemoryEstimate:
    """The memory figures of one estimate, whichever way it was made (DESIGN.md, Memory vocabulary).

    reserved_bytes is the allocator replay's reservation, never below the peak; required_bytes adds the
    margins of core/budget.py to the replay under a limit; device_total_bytes adds the context overhead.
    fixed_bytes is the model state at the peak (weights, gradients, optimizer_state: none of them depends on
    the batch) plus the temporaries that do not: all of them when the optimizer's step sets the peak (it
    works on parameter-sized tensors only), else `fixed_temporaries_bytes`, those the estimator can tell apart
    (the analytic replay knows its cached half-precision weight copies and gradient casts; a simulation and
    generation name none). Activations, inputs and the KV cache grow with the batch."""
    temporaries = at_peak.temporaries if peak_phase == OPTIMIZER_PHASE else fixed_temporaries_bytes
    fixed = at_peak.weights + at_peak.gradients + at_peak.optimizer_state + temporaries
    reserved = max(replayed_reserved_bytes, peak_bytes)
    return MemoryEstimate(
        peak_bytes,
        reserved,
        required_bytes(replayed_required_bytes, peak_bytes, conv_margin_bytes),
        device_total_bytes(reserved),
        at_peak,
        peak_phase,
        peak_layer,
        fixed,
        (peak_bytes - fixed) / batch,
    )


EstimateMethod = Literal["analytic", "simulated"]  # layer formulas, or the meta-device PyTorch step


@dataclass(frozen=True, kw_only=True)
class Estimate:
    model: str
    workload: Workload
    method: EstimateMethod
    param_count: int
    # parameters that get a gradient in this step: all of them in full training, the adapters under LoRA,
    # none outside training (what DDP's gradient buckets and the gradient all-reduce hold, recommend/plans.py)
    trainable_param_count: int
    layers: tuple[LayerRow, ...]
    forward_macs: int
    forward_flops: int
    step_flops: int  # forward + backward in training, forward alone in inference
    memory: MemoryEstimate
    timeline: tuple[TimelinePoint, ...]
    assumptions: tuple[str, ...]
    generation: GenerationProfile | None = None  # filled in generate mode (decoder language models)
    # the analytic replay's allocation events of one step (+size, -size), for a plan that replays them through
    # the allocator as one of several cards holds them (recommend/plans.py); () where no replay made them
    step_events: tuple[tuple[Key, int], ...] = field(default=(), repr=False, compare=False)


def _recomputed(graph: Graph, workload: Workload) -> set[int]:
    """Nodes whose forward gradient checkpointing runs again inside backward (torch.utils.checkpoint's
    recompute_fn); the simulated path records those kernels as it dispatches them, in the backward phase."""
    if not (workload.training and workload.checkpointing):
        return set()
    return {i for segment in graph.checkpoint_segments() for i in segment}


def _with_recompute(kernels: tuple[Kernel, ...]) -> tuple[Kernel, ...]:
    return kernels + tuple(replace(k, pass_=Pass.BACKWARD) for k in forward_kernels(kernels))


def layer_rows(graph: Graph, workload: Workload, kept: tuple[int, ...], dtype_bytes: int) -> list[LayerRow]:
    rows, needs_grad, recomputed = [], requires_grad(graph, workload), _recomputed(graph, workload)
    for i, (node, work) in enumerate(zip(graph.nodes, graph_kernels(graph, workload, needs_grad), strict=True)):
        specs = graph.input_specs(node)
        scale = workload.batch if node.output.batched else 1
        input_grad = any(needs_grad[s] for s in node.inputs)
        rows.append(
            LayerRow(
                name=node.name,
                kind=node.op.kind,
                output_shape=node.output.shape,
                param_count=node.op.param_count(specs),
                forward_macs=node.op.forward_macs(specs, node.output) * scale,
                forward_flops=node.op.forward_flops(specs, node.output) * scale,
                backward_flops=node.op.backward_flops(specs, node.output, input_grad) * scale
                if workload.training
                else 0,
                output_bytes=0 if node.op.is_view else node.output.numel * scale * dtype_bytes,
                kept_bytes=kept[i],
                kernels=_with_recompute(work.kernels) if i in recomputed else work.kernels,
                host_ops=work.host_ops,
                autograd_nodes=work.autograd_nodes,
                param_tensors=work.param_tensors,
            )
        )
    return rows


def adapter_dtype_name(workload: Workload) -> str:
    """What the LoRA adapters are kept in: fp32 (PEFT's upcast, or an fp32/autocast base) or the half base's."""
    return "fp32" if workload.trainable_dtype_bytes == 4 else workload.compute_dtype


def estimate_step(graph: Graph, workload: Workload) -> Estimate:
    """One training or inference step of `graph` (core/analytic.py estimate chooses it, or generation)."""
    graph = step_graph(graph, workload)
    profile = replay_step(graph, workload)
    rows = layer_rows(graph, workload, profile.kept_bytes, workload.activation_bytes)
    at, events = profile.at_peak, profile.events
    memory = memory_estimate(
        peak_bytes=profile.peak_bytes,
        at_peak=at,
        peak_phase=profile.peak_phase,
        peak_layer=profile.peak_layer,
        batch=workload.batch,
        replayed_reserved_bytes=peak_reserved_bytes(events),
        replayed_required_bytes=replayed_required_bytes(events, workload.expandable_segments),
        conv_margin_bytes=conv_workspace_margin_bytes(rows),
        # the replay counts every batch-independent allocation (core/tracker.py FIXED_KINDS) in fixed_bytes
        fixed_temporaries_bytes=profile.fixed_bytes - at.weights - at.gradients - at.optimizer_state,
    )
    forward_flops = sum(r.forward_flops for r in rows)
    params, trainable = sum(r.param_count for r in rows), trainable_count(graph, workload)
    host = host_bytes(workload, params, trainable, 4 * OPTIMIZER_STATE_SLOTS[workload.optimizer])
    return Estimate(
        model=graph.name,
        workload=workload,
        method="analytic",
        param_count=params,
        trainable_param_count=trainable,
        layers=tuple(rows),
        forward_macs=sum(r.forward_macs for r in rows),
        forward_flops=forward_flops,
        step_flops=forward_flops + sum(r.backward_flops for r in rows),
        memory=memory,
        timeline=profile.timeline,
        assumptions=_assumptions(workload) + tuple(offload_notes(workload, host)),
        step_events=events,
    )


def _assumptions(workload: Workload) -> tuple[str, ...]:
    notes = [
        "FLOPs = 2 x MACs (multiply-adds of conv/linear/matmul) + elementwise arithmetic; "
        "MACs count multiply-adds only.",
        "Memory replays one steady-state step of PyTorch's eager autograd on CUDA: saved tensors, "
        "activation gradients, in-place ops and views; every allocation rounded up to 512 bytes.",
        "Attention memory follows the fused SDPA kernels (output and log-sum-exp kept, no seq x seq matrix).",
        "cuDNN/cuBLAS workspaces are not in peak_bytes (they depend on the algorithm cuDNN picks).",
        "required_bytes replays the training loop through a model of the CUDA caching allocator limited to a "
        "budget (cached segments are released before it gives up) and finds the smallest budget that runs, "
        f"plus {REPLAY_MARGIN_BYTES // 2**20} MiB (one large-pool segment, the replay's granule) and, with "
        "convolutions, "
        "the largest convolution output for cuDNN's workspace; device_total_bytes adds "
        f"the CUDA context and driver reservation {DEFAULT_OVERHEAD.source}.",
        "peak = fixed + batch x per-sample only while the peak stays in the same phase of the step; "
        "at small batches the optimizer step or the weights can set the peak instead.",
    ]
    if workload.training and workload.drops_logits:
        notes.append(
            "Training: zero_grad(set_to_none=True), foreach optimizer implementations (Adam keeps "
            "two states and one parameter-sized temporary in its step); the loop drops the model output "
            "before backward and keeps only the loss (transformers' Trainer, torchtune)."
        )
    elif workload.training:
        notes.append(
            "Training: zero_grad(set_to_none=True), foreach optimizer implementations (Adam keeps "
            "two states and one parameter-sized temporary in its step); the model output is kept "
            "by the caller until the step ends."
        )
    if workload.amp:
        notes.append(
            "Autocast: weights stay fp32; matmul/conv inputs and weights are cast to half "
            "(weight copies cached for the forward and kept for backward); softmax, layer norm and "
            "losses run in fp32."
        )
    if workload.adapters:
        notes.append(
            f"{workload.finetune.upper()}: base weights frozen in {workload.weight_format}; rank-"
            f"{workload.lora_rank} adapters (A: r x in, B: out x r, kept in {adapter_dtype_name(workload)}) on "
            f"{', '.join(workload.adapters)} of the dense layers (not on routed experts) carry the only "
            "gradients and optimizer state; a frozen linear keeps nothing of its input for backward."
        )
    elif workload.weights is not None and not workload.training:
        notes.append(
            f"Weights stored as {workload.weight_format}: the blocks' linear layers in that format with "
            "its scales; embeddings, norms and the LM head in 16 bit."
        )
    if workload.checkpointing:
        notes.append(
            "Gradient checkpointing recomputes each block (residual block or transformer layer) "
            "in backward; only block inputs are kept in forward (about one extra forward of compute)."
        )
    return tuple(notes + optimizer_notes(workload.optimizer, workload.training) + default_notes(workload))
