"""From a SPEC to an Estimate (and to what ranking needs), by the right method.

PyTorch modules given as FILE.py, torchvision:, timm: or hf: are simulated (their real training step on
the meta device, method "simulated"), except hf: decoders in generation, quantized or LoRA workloads, which
the analytic decoder description covers; everything else (zoo, .onnx, .safetensors, .json, TorchScript,
torch.export, state_dicts) is estimated analytically from its layer graph. `method` forces one.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Literal

from advisor.core.curve import curve_through
from advisor.core.errors import SpecError
from advisor.core.estimate import Estimate, estimate
from advisor.core.workload import Workload
from advisor.recommend.ranking import Job, prepare
from advisor.recommend.timing import step_work
from advisor.specs import LIBRARY_FORMS, load_graph

Method = Literal["auto", "analytic", "simulated"]
METHODS: tuple[str, ...] = ("auto", "analytic", "simulated")
# A simulated model's memory curve comes from its peak at batches 1, 8, 64, ... (x8, plus the user's batch)
# until the peak passes the largest card anyone buys: on the meta device a large batch costs no more time,
# and the model state can set the peak up to large batches before activations take over.
_PROBE_FACTOR = 8
_PROBE_UNTIL_BYTES = 512 * 2**30
_PROBE_MAX_BATCH = 1 << 21


def simulatable(spec: str) -> bool:
    return spec.lower().endswith(".py") or spec.startswith(LIBRARY_FORMS)


@dataclass(frozen=True)
class _Simulator:
    run: Callable[[Workload], Estimate]  # the module is loaded once
    tokens_per_sample: int  # as Graph.tokens_per_sample counts them: token ids in, one token per position


def _token_count(make_inputs: Callable[[int], Any]) -> int:
    """The length of the first (1, L) integer tensor of a one-sample batch (token ids), else 1."""
    import torch

    with torch.device("meta"):
        args, kwargs = make_inputs(1)
    for value in (*args, *kwargs.values()):
        if isinstance(value, torch.Tensor) and value.dtype == torch.int64 and value.dim() == 2:
            return int(value.shape[1])
    return 1


def _simulator(spec: str, seq_len: int | None, trust_pickle: bool) -> _Simulator:
    """Simulated Estimates of the module the spec names, and its tokens per sample."""
    from advisor.importers.torch_loader import import_torch, load_module

    import_torch(spec)  # without torch: one line saying which extra installs it, before simulate imports it
    from advisor.importers.simulate import simulate_estimate

    loaded = load_module(spec, trust_pickle=trust_pickle, seq_len=seq_len)
    user_loss = loaded.loss_fn
    # FILE.py's loss_fn(output, inputs) gets what example_inputs returned: the arguments, or the keywords
    loss = None if user_loss is None else (lambda out, given: user_loss(out, given[0] or given[1]))

    def run(workload: Workload) -> Estimate:
        inputs = loaded.train_inputs if workload.training and loaded.train_inputs else loaded.example_inputs
        return simulate_estimate(loaded.module, inputs, workload, loss, loaded.name)

    return _Simulator(run, _token_count(loaded.example_inputs))


def _choose(spec: str, method: str, workload: Workload | None = None) -> str:
    if method == "simulated" and not simulatable(spec):
        raise SpecError(f"{spec}: only PyTorch modules (FILE.py, torchvision:, timm:, hf:) can be simulated; "
                        "use --method analytic")
    if method == "auto" and workload is not None and spec.startswith("hf:") and _llm_workload(workload):
        return "analytic"  # generation, quantized storage and adapters are described by core's decoder model
    return "simulated" if method != "analytic" and simulatable(spec) else "analytic"


def _llm_workload(w: Workload) -> bool:
    return w.generating or w.finetune != "full" or w.weights not in (None, "fp32", "bf16", "fp16")


def estimate_spec(spec: str, workload: Workload, *, seq_len: int | None = None, trust_pickle: bool = False,
                  method: str = "auto") -> Estimate:
    if _choose(spec, method, workload) == "simulated":
        try:
            return _simulator(spec, seq_len, trust_pickle).run(workload)
        except SpecError as error:
            if method != "auto" or not _simulation_failed(error):
                raise
            # the step could not be followed on the meta device: the layer graph still answers, and says why
            analytic = estimate(load_graph(spec, seq_len, trust_pickle=trust_pickle), workload)
            return replace(analytic, assumptions=(*analytic.assumptions, f"{spec}: {error}; estimated "
                                                  "analytically instead"))
    return estimate(load_graph(spec, seq_len, trust_pickle=trust_pickle), workload)


def _simulation_failed(error: SpecError) -> bool:
    """A SimulationError can only come from the simulator's module, so it is looked up where it is loaded
    (importing it would import torch, which may be what is missing)."""
    step = sys.modules.get("advisor.importers.simulate.step")
    return step is not None and isinstance(error, step.SimulationError)


def prepare_spec(spec: str, workload: Workload, *, seq_len: int | None = None, trust_pickle: bool = False,
                 method: str = "auto") -> Job:
    """What ranking needs. Simulated: peaks and required bytes measured at a few more batches give the
    memory curves."""
    if _choose(spec, method, workload) == "analytic":
        return prepare(load_graph(spec, seq_len, trust_pickle=trust_pickle), workload)
    simulation = _simulator(spec, seq_len, trust_pickle)
    run = simulation.run
    result = run(workload)
    memories = {workload.batch: result.memory}
    batch = 1
    while batch <= _PROBE_MAX_BATCH and max(m.peak_bytes for m in memories.values()) < _PROBE_UNTIL_BYTES:
        if batch not in memories:
            memories[batch] = run(replace(workload, batch=batch)).memory
        batch *= _PROBE_FACTOR
    peaks = curve_through([(b, m.peak_bytes) for b, m in memories.items()])
    required = curve_through([(b, m.required_bytes) for b, m in memories.items()])
    return Job(result, peaks, step_work(result, simulation.tokens_per_sample), required)


def simulator(spec: str, seq_len: int | None = None, trust_pickle: bool = False) -> Callable[[Workload], Estimate]:
    """A function workload -> simulated Estimate of the PyTorch module the spec names (loaded once), for
    callers that estimate many variants of one workload (advisor fit)."""
    return _simulator(spec, seq_len, trust_pickle).run
