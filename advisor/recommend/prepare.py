"""What ranking needs from a model, built in one place whichever way it is estimated: the estimate at the
workload's batch, its peak and required bytes against the batch, and its card-independent work.

The required curve decides fit and the largest batch on each card (core/budget.py). Where the estimator
has a closed form of its curves (the analytic replay's lines) they come from it; a generate-mode estimate
is its own line (weights + batch x (KV cache + prefill)); otherwise (the simulated PyTorch step) the peak
and required bytes are measured at batches 1, 8, 64, ... and the curves run through those points.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from advisor.core.curve import MemoryCurve, curve_through
from advisor.core.estimate import Estimate, MemoryEstimate
from advisor.core.estimator import Estimator, analytic_estimator
from advisor.core.graph import Graph
from advisor.core.workload import Workload
from advisor.importers.spec_estimate import spec_estimator
from advisor.importers.stored_estimate import with_stored
from advisor.recommend.serving import generation_curves
from advisor.recommend.timing import StepWork, step_work

# A probed model's curves run through its peaks at batches 1, 8, 64, ... (x8, plus the user's batch) until
# the peak passes the largest card anyone buys: on the meta device a large batch costs no more time, and
# the model state can set the peak up to large batches before activations take over.
_PROBE_FACTOR = 8
_PROBE_UNTIL_BYTES = 512 * 2**30
_PROBE_MAX_BATCH = 1 << 21


@dataclass(frozen=True)
class RankingInput:
    """Every card is judged from these without re-running the model."""

    estimate: Estimate
    curve: MemoryCurve  # peak bytes against the batch
    work: StepWork
    required: MemoryCurve  # required bytes against the batch


def prepare(estimator: Estimator, workload: Workload) -> RankingInput:
    """Estimates `workload` once, and the curves as the estimator allows (see the module's docstring)."""
    result = estimator.run(workload)
    if result.generation is not None:
        peaks, required = generation_curves(result)
    elif estimator.curves is not None:
        peaks, required = estimator.curves(result)
    else:
        peaks, required = _probed_curves(estimator, result)
    return RankingInput(result, peaks, step_work(result, estimator.tokens_per_sample), required)


def _probed_curves(estimator: Estimator, result: Estimate) -> tuple[MemoryCurve, MemoryCurve]:
    workload = result.workload
    memories: dict[int, MemoryEstimate] = {workload.batch: result.memory}
    batch = 1
    while batch <= _PROBE_MAX_BATCH and max(m.peak_bytes for m in memories.values()) < _PROBE_UNTIL_BYTES:
        if batch not in memories:
            memories[batch] = estimator.run(replace(workload, batch=batch)).memory
        batch *= _PROBE_FACTOR
    peaks = curve_through([(b, m.peak_bytes) for b, m in memories.items()])
    return peaks, curve_through([(b, m.required_bytes) for b, m in memories.items()])


def prepare_graph(graph: Graph, workload: Workload) -> RankingInput:
    """The analytic estimate of a layer graph (what the app's builder shows while a slider moves); a loaded
    checkpoint that says how it stores its weights (GGUF, a quantized Hub model) runs as stored, as on the
    command line."""
    stored = graph.decoder.stored if graph.decoder is not None else None
    return prepare(with_stored(analytic_estimator(graph), stored), workload)


def prepare_spec(
    spec: str, workload: Workload, *, seq_len: int | None = None, trust_pickle: bool = False, method: str = "auto"
) -> RankingInput:
    """A SPEC by the method `advisor estimate` picks for it (importers/spec_estimate.py)."""
    estimator = spec_estimator(spec, workload, seq_len=seq_len, trust_pickle=trust_pickle, method=method)
    return prepare(estimator, workload)
