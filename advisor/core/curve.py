"""Peak memory as a function of the batch: the upper envelope of fixed + batch x per-sample lines.

Every moment of the step holds some tensors that do not depend on the batch (weights, optimizer state,
gradients) and some that grow linearly with it (activations). So each moment is a line in the batch, and
the peak is their maximum: a convex, piecewise-linear curve. "total = model part + batch x per-sample part"
holds on each piece; the pieces change where a different moment of the step becomes the peak (small batches:
the optimizer step; large: the end of the forward pass). Two replays at different batches give every line,
so the largest batch that fits any budget is found without searching.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, replace

from advisor.core.graph import Graph
from advisor.core.loss_head import step_graph
from advisor.core.replay import replay_step
from advisor.core.tracker import BLOCK_BYTES
from advisor.core.workload import Workload

_PROBE_BATCHES = (8, 16)


@dataclass(frozen=True)
class MemoryCurve:
    lines: tuple[tuple[float, float], ...]  # (fixed_bytes, per_sample_bytes) on the upper envelope
    slack_bytes: int  # allocation rounding the lines cannot see: at most one block per live tensor

    def peak_bytes(self, batch: int) -> int:
        return math.ceil(max(a + batch * c for a, c in self.lines)) + self.slack_bytes

    def max_batch(self, peak_budget_bytes: float, limit: int = 1 << 20) -> int:
        """Largest batch whose peak stays within the budget (0: not even one sample)."""
        best = limit
        for fixed, per_sample in self.lines:
            room = peak_budget_bytes - self.slack_bytes - fixed
            if room < per_sample:  # not even batch 1 (covers per_sample == 0 with room < 0 too)
                return 0
            if per_sample > 0:
                best = min(best, math.floor(room / per_sample))
        return best

    def transformed(self, factor: float, fixed_bytes: float, per_sample_bytes: float) -> MemoryCurve:
        """factor x this curve + fixed + batch x per-sample: still the upper envelope of the same lines (an
        increasing affine map of every line keeps their order at each batch)."""
        return MemoryCurve(
            tuple((factor * a + fixed_bytes, factor * c + per_sample_bytes) for a, c in self.lines),
            math.ceil(self.slack_bytes * factor),
        )

    def maximum(self, other: MemoryCurve) -> MemoryCurve:
        """max(this, other) at every batch: the upper envelope of both curves' lines."""
        return MemoryCurve(_upper_envelope([*self.lines, *other.lines]), max(self.slack_bytes, other.slack_bytes))


def _upper_envelope(lines: list[tuple[float, float]]) -> tuple[tuple[float, float], ...]:
    """Lines that are the maximum somewhere on batch >= 1 (monotone-chain hull over slopes)."""
    by_slope: dict[float, float] = {}
    for fixed, slope in lines:
        by_slope[slope] = max(fixed, by_slope.get(slope, -math.inf))
    hull: list[tuple[float, float]] = []
    for slope, fixed in sorted(by_slope.items()):
        while hull:
            top_fixed, top_slope = hull[-1]
            if fixed + slope >= top_fixed + top_slope:  # dominates the top line from batch 1 on
                hull.pop()
                continue
            if len(hull) >= 2:
                prev_fixed, prev_slope = hull[-2]
                # the top line is never the maximum if the new line overtakes prev before top does
                cross_new = (prev_fixed - fixed) / (slope - prev_slope)
                cross_top = (prev_fixed - top_fixed) / (top_slope - prev_slope)
                if cross_new <= cross_top:
                    hull.pop()
                    continue
            break
        hull.append((fixed, slope))
    return tuple(hull)


def curve_through(points: list[tuple[int, int]]) -> MemoryCurve:
    """The curve through measured (batch, peak bytes) points: lines through neighbouring points, of which the
    peak is the maximum (exact at the points for a convex curve; beyond the last, its slope continues)."""
    ordered = sorted(set(points))
    if len(ordered) < 2:
        raise ValueError("a memory curve needs peaks at two batch sizes at least")
    lines = []
    for (b0, p0), (b1, p1) in itertools.pairwise(ordered):
        slope = (p1 - p0) / (b1 - b0)
        lines.append((p0 - b0 * slope, slope))
    return MemoryCurve(_upper_envelope(lines), 0)


def memory_curve(graph: Graph, workload: Workload) -> MemoryCurve:
    """Peak bytes against the batch of the step `workload` runs (with its loss head when training)."""
    graph = step_graph(graph, workload)
    low, high = (replay_step(graph, replace(workload, batch=b)) for b in _PROBE_BATCHES)
    step = _PROBE_BATCHES[1] - _PROBE_BATCHES[0]
    lines = []
    for total_low, total_high in zip(low.after_alloc, high.after_alloc, strict=True):
        per_sample = (total_high - total_low) / step
        lines.append((total_low - _PROBE_BATCHES[0] * per_sample, per_sample))
    slack = max(low.live_count_max, high.live_count_max) * BLOCK_BYTES
    return MemoryCurve(_upper_envelope(lines), slack)
