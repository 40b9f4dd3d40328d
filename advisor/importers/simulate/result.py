"""The simulated step, as the same Estimate the analytic path returns (method="simulated")."""

from __future__ import annotations

from torch import nn

from advisor.core.allocator import free_replay, required_budget_bytes
from advisor.core.budget import REPLAY_MARGIN_BYTES, conv_workspace_margin_bytes
from advisor.core.estimate import Estimate, LayerRow, MemoryEstimate, memory_estimate
from advisor.core.overheads import DEFAULT_OVERHEAD
from advisor.core.tracker import CategoryBytes, TimelinePoint
from advisor.core.workload import Precision, Workload
from advisor.importers.simulate.hooks import LayerInfo
from advisor.importers.simulate.step import LossFn, MakeInputs, StepRun, run_step


def _layer_rows(run: StepRun, training: bool) -> tuple[LayerRow, ...]:
    """A row per module the watch reports (leaves and modules with parameters of their own), then one per
    other place that launched kernels: a container's own ops (a residual add in a block's forward), the loss."""
    flops, recorded, watch = run.tracker.flops, run.tracker.kernels, run.watch
    infos = list(watch.layers.values())
    known = {info.name for info in infos}
    infos += [LayerInfo(name, watch.kinds.get(name, name), 0) for name in recorded.kernels if name not in known]
    rows = []
    for info in infos:
        forward = flops.layer("forward", info.name)
        rows.append(
            LayerRow(
                name=info.name,
                kind=info.kind,
                output_shape=info.output_shape,
                param_count=info.param_count,
                forward_macs=forward // 2,
                forward_flops=forward,
                backward_flops=flops.layer("backward", info.name) if training else 0,
                output_bytes=info.output_bytes,
                kept_bytes=run.kept_by_layer.get(info.name, 0),
                kernels=tuple(recorded.kernels.get(info.name, ())),
                host_ops=recorded.host_ops.get(info.name, 0),
                autograd_nodes=recorded.autograd_nodes.get(info.name, 0) if training else 0,
                param_tensors=watch.trainable_tensors.get(info.name, 0) if training else 0,
            )
        )
    return tuple(rows)


def _memory(run: StepRun, workload: Workload, rows: tuple[LayerRow, ...]) -> MemoryEstimate:
    peak, events = run.tracker.peak, run.tracker.events
    free = free_replay(events, run.tracker.measured_from)  # one replay: the reservation and the bisection's bounds
    return memory_estimate(
        peak_bytes=max(peak.bytes, free.measured_allocated_bytes),
        at_peak=CategoryBytes(**peak.totals),
        peak_phase=peak.phase,
        peak_layer=peak.layer,
        batch=workload.batch,
        replayed_reserved_bytes=free.reserved_bytes,
        replayed_required_bytes=required_budget_bytes(events, free),
        conv_margin_bytes=conv_workspace_margin_bytes(rows),
    )


def simulate_estimate(
    module: nn.Module, make_inputs: MakeInputs, workload: Workload, loss_fn: LossFn | None = None, name: str = "model"
) -> Estimate:
    """Runs two steps of `module` on the meta device with CUDA semantics and measures the second.

    make_inputs(batch) -> (args, kwargs) is called under torch.device("meta"); loss_fn(output, (args, kwargs))
    defaults to output.loss or cross-entropy on (N, C) logits. The module may live on the CPU (it is moved to
    the meta device) or be built on the meta device already (faster: no weight initialisation)."""
    run = run_step(module, make_inputs, workload, loss_fn)
    rows = _layer_rows(run, workload.training)
    forward = run.tracker.flops.total("forward")
    backward = run.tracker.flops.total("backward") if workload.training else 0
    timeline = tuple(TimelinePoint(p, layer, b) for p, layer, b in run.tracker.timeline)
    return Estimate(
        model=name,
        workload=workload,
        method="simulated",
        param_count=run.param_count,
        trainable_param_count=run.trainable_param_count if workload.training else 0,
        layers=rows,
        forward_macs=forward // 2,
        forward_flops=forward,
        step_flops=forward + backward,
        memory=_memory(run, workload, rows),
        timeline=timeline,
        assumptions=_assumptions(workload, run.notes),
    )


def _assumptions(workload: Workload, notes: list[str]) -> tuple[str, ...]:
    out = [
        "Simulated: the module's own forward, loss, backward and optimizer step ran on the meta device (no "
        "values) twice; the second step is measured, as torch.cuda.max_memory_allocated() over steady-state "
        "iterations; every allocation is rounded up to 512 bytes.",
        "CUDA behaviour is modelled where meta/CPU execution differs: autocast follows CUDA's op lists, "
        "scaled-dot-product attention uses the fused kernel CUDA picks (flash for half precision without a "
        "mask, else memory-efficient) with its backward workspaces; optimizers use foreach implementations.",
        "cuDNN/cuBLAS workspaces are not in peak_bytes (they depend on the algorithm cuDNN picks); "
        "data-dependent values (.item()) are stand-ins (True after all(), False after any(), else 1).",
        "reserved_bytes replays every allocation and free through a model of the CUDA caching allocator; "
        "required_bytes is the smallest budget in which that replay runs when the allocator is limited "
        f"(it releases cached segments before it gives up), plus {REPLAY_MARGIN_BYTES // 2**20} MiB and, "
        "with convolutions, the largest convolution output for cuDNN's workspace; device_total_bytes adds "
        f"the CUDA context and driver reservation {DEFAULT_OVERHEAD.source}.",
        "FLOPs count 2 x multiply-adds of matmuls, convolutions and attention (torch.utils.flop_counter "
        "formulas; a convolution's backward counts its forward once per gradient).",
    ]
    if workload.precision is Precision.AMP_FP16 and workload.training:
        out.append("amp_fp16: GradScaler is modelled as the scaled loss; unscaling is in place.")
    return tuple(out + notes)
