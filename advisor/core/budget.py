"""required_bytes: the smallest allocator budget a step runs in. One home for every caller (the estimate,
the simulated estimate, the ranking's memory curves, make-it-fit and the charts).

required = what the caching-allocator replay needs under a limit (core/allocator.py: segments that hold a
live block cannot be returned, so their free remainder is lost) + margins where the replay is unsure:
- convolutions: cuDNN takes a workspace from the same allocator for the algorithm its heuristics pick,
  which cannot be known without the card; the margin is the largest convolution's output over the batch
  (GEMM-based algorithms commonly need workspaces of that order; PyTorch falls back to algorithms that need
  less when the allocation fails, aten/src/ATen/native/cudnn/Conv_v8.cpp try_plans, so a larger workspace
  does not decide the fit);
- the replay's own granule, in bytes rather than a share of the peak (a share grew to gigabytes on
  long-context LLM steps whose replay already holds their fragmentation): one 20 MiB segment
  (core/allocator.py LARGE_SEGMENT), the size in which the allocator, and the replay, places every 1-10 MiB
  request, so the most one request placed differently from the replay moves the budget. The cuBLAS/cuDNN
  workspaces the allocator also holds are not added here: the fit's usable memory leaves them out already
  (recommend/devices.py PROCESS_OVERHEAD_BYTES, core/overheads.py workspace_bytes, measured on the H200).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Protocol

from advisor.core.allocator import LARGE_SEGMENT, free_replay, required_budget_bytes, training_loop_events
from advisor.core.curve import MemoryCurve, memory_curve
from advisor.core.graph import Graph
from advisor.core.loss_head import step_graph
from advisor.core.replay import replay_step
from advisor.core.tracker import Key
from advisor.core.workload import Workload

REPLAY_MARGIN_BYTES = LARGE_SEGMENT  # 20 MiB
# Layer kinds of the analytic graph and the nn.Module class names a simulated estimate reports.
CONV_KINDS = frozenset(
    {"conv", "conv_transpose", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"}
)


class SizedLayer(Protocol):
    """What the margin needs of a layer row (core.estimate.LayerRow, analytic or simulated)."""

    @property
    def kind(self) -> str: ...

    @property
    def output_bytes(self) -> int: ...  # at the estimate's batch


def conv_workspace_margin_bytes(layers: Iterable[SizedLayer]) -> int:
    """The workspace margin of the largest convolution: its output over the batch."""
    return max((layer.output_bytes for layer in layers if layer.kind in CONV_KINDS), default=0)


def required_bytes(replayed_bytes: int, peak_bytes: int, conv_margin_bytes: int) -> int:
    """The budget for one estimate: the replay's answer (at least the peak) plus the margins."""
    return max(replayed_bytes, peak_bytes) + conv_margin_bytes + REPLAY_MARGIN_BYTES


def required_for_peak(peak_bytes: int, estimated_peak_bytes: int, estimated_required_bytes: int) -> int:
    """The budget of a variant of an estimated step whose peak moved (model state sharded off the card, an
    accumulated micro-step, an 8-bit optimizer): the estimate's overhead over its peak carries over."""
    return peak_bytes + max(estimated_required_bytes - estimated_peak_bytes, 0)


def replayed_required_bytes(step_events: Sequence[tuple[Key, int]], expandable_segments: bool) -> int:
    """The allocator replay of a training loop (or inference loop) built from one analytic step's events.
    With PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True the allocator maps and unmaps 2 MiB pages of one
    growing segment per pool (c10/cuda/CUDACachingAllocator.cpp ExpandableSegment) and on a failed request
    unmaps every free page, so a freed block never strands memory in a segment another block pins: the
    budget is the most the loop holds at once, page-rounded blocks and all."""
    events = training_loop_events(step_events)
    if expandable_segments:
        return free_replay(events).allocated_bytes
    return required_budget_bytes(events)


def required_from_peaks(
    peak_curve: MemoryCurve, probes: Sequence[tuple[int, int]], conv_margin_per_sample: float
) -> MemoryCurve:
    """required(batch) from the peak curve: the replay's fragmentation (required - peak) measured at two
    batches and taken as affine in the batch between and beyond them, the convolution margin per sample, and
    the bytes the replay cannot see (REPLAY_MARGIN_BYTES). Fragmentation is never negative (required_bytes
    takes at least the peak), so below the first probe the line stops at the peak curve: a LoRA step whose
    logits strand 14 times more at batch 64 than at 16 had its line cross under the peak at batch 1."""
    (b0, f0), (b1, f1) = sorted(probes)
    slope = max((f1 - f0) / (b1 - b0), 0.0)
    fragmented = peak_curve.transformed(1, f0 - b0 * slope + REPLAY_MARGIN_BYTES, slope + conv_margin_per_sample)
    return fragmented.maximum(peak_curve.transformed(1, REPLAY_MARGIN_BYTES, conv_margin_per_sample))


_PROBES = (16, 64)


def required_curve(
    graph: Graph, workload: Workload, peak_curve: MemoryCurve, conv_margin_per_sample: float
) -> MemoryCurve:
    """required(batch) of an analytic graph (its loss head is added when training)."""
    graph = step_graph(graph, workload)
    probes = []
    for batch in _PROBES:
        profile = replay_step(graph, replace(workload, batch=batch))
        probes.append(
            (batch, replayed_required_bytes(profile.events, workload.expandable_segments) - profile.peak_bytes)
        )
    return required_from_peaks(peak_curve, probes, conv_margin_per_sample)


def analytic_curves(graph: Graph, workload: Workload, layers: Iterable[SizedLayer]) -> tuple[MemoryCurve, MemoryCurve]:
    """The peak curve and the required curve of an analytic graph; `layers` are the rows of its estimate at
    the workload's batch (their largest convolution sets the workspace margin, per sample)."""
    peaks = memory_curve(graph, workload)
    per_sample = conv_workspace_margin_bytes(layers) / workload.batch
    return peaks, required_curve(graph, workload, peaks, per_sample)
