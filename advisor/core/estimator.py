"""An estimator: one model, estimated by one method for any workload.

The ranking's memory curves, make-it-fit and the app re-run a model at other batches and settings; they
take an Estimator, so the analytic replay of a layer graph and the simulated PyTorch step
(advisor.importers.spec_estimate) are used the same way. `curves` is a method's own closed form of the
peak and required bytes against the batch, where it has one (the analytic replay's lines, core/curve.py);
without it the caller probes `run` at a few batches (advisor.recommend.prepare).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from advisor.core.analytic import estimate
from advisor.core.budget import analytic_curves
from advisor.core.curve import MemoryCurve
from advisor.core.estimate import Estimate
from advisor.core.graph import Graph
from advisor.core.workload import Workload

Curves = Callable[[Estimate], tuple[MemoryCurve, MemoryCurve]]  # an estimate -> (peak curve, required curve)


@dataclass(frozen=True)
class Estimator:
    run: Callable[[Workload], Estimate]
    tokens_per_sample: int  # core.graph.tokens_per_sample's rule: token ids in -> one token per position
    curves: Curves | None = None

    def __call__(self, workload: Workload) -> Estimate:
        return self.run(workload)


def analytic_estimator(graph: Graph) -> Estimator:
    """The analytic replay of `graph`, with its closed-form curves through the estimate's own layer rows."""

    def run(workload: Workload) -> Estimate:
        return estimate(graph, workload)

    def curves(result: Estimate) -> tuple[MemoryCurve, MemoryCurve]:
        return analytic_curves(graph, result.workload, result.layers)

    return Estimator(run, graph.tokens_per_sample, curves)
