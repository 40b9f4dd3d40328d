"""From a SPEC to an Estimate, by the right method (DESIGN.md, "Two ways to estimate").

PyTorch modules given as FILE.py, torchvision:, timm: or hf: are simulated (their real training step on
the meta device, method "simulated"), except hf: decoders in generation, quantized or LoRA workloads, which
the analytic decoder description covers; everything else (zoo, .onnx, .safetensors, .json, TorchScript,
torch.export, state_dicts) is estimated analytically from its layer graph (spec_graph.py). `method` forces
one. A simulation that cannot follow the step on the meta device falls back to the layer graph (method
"auto" only), and says so in the estimate's assumptions.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import replace
from typing import Any, Literal, get_args

from advisor.core.errors import SpecError
from advisor.core.estimate import Estimate
from advisor.core.estimator import Estimator, analytic_estimator
from advisor.core.graph import tokens_per_sample
from advisor.core.llm.generate import not_a_decoder
from advisor.core.workload import Finetune, TransformersRelease, WeightFormat, Workload
from advisor.importers.spec_graph import LIBRARY_FORMS, load_graph
from advisor.importers.stored_estimate import with_stored

Method = Literal["auto", "analytic", "simulated"]
METHODS: tuple[str, ...] = get_args(Method)


def simulatable(spec: str) -> bool:
    return spec.lower().endswith(".py") or spec.startswith(LIBRARY_FORMS)


def _token_count(make_inputs: Callable[[int], Any]) -> int:
    """Tokens per sample of the tensors a one-sample batch passes (core.graph.tokens_per_sample's rule)."""
    import torch

    with torch.device("meta"):
        args, kwargs = make_inputs(1)
    tensors = [v for v in (*args, *kwargs.values()) if isinstance(v, torch.Tensor) and v.dim() > 0]
    return tokens_per_sample((str(t.dtype).removeprefix("torch."), tuple(t.shape[1:])) for t in tensors)


def simulator(spec: str, seq_len: int | None = None, trust_pickle: bool = False) -> Estimator:
    """Simulated Estimates of the PyTorch module the spec names (loaded once, estimated for any workload)."""
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

    return Estimator(run, _token_count(loaded.example_inputs))


def choose_method(spec: str, method: str, workload: Workload | None = None) -> Literal["analytic", "simulated"]:
    if method == "simulated" and not simulatable(spec):
        raise SpecError(
            f"{spec}: only PyTorch modules (FILE.py, torchvision:, timm:, hf:) can be simulated; use --method analytic"
        )
    if method == "simulated" and workload is not None and workload.generating:
        # the simulation runs one forward or training step: it has no KV cache and no decode loop, so its
        # answer would be another workload's (and no prefill or decode speed)
        raise SpecError(
            f"{spec}: generation (prefill, then decoding with a KV cache) is estimated from the "
            "decoder's description, not simulated; use --method analytic or auto"
        )
    if method == "simulated" and workload is not None and _older_transformers(spec, workload):
        # the simulation runs the installed transformers, whose loss is the newest release's
        raise SpecError(
            f"{spec}: --transformers-version {workload.transformers_version} is followed by the decoder's "
            "description, not simulated (the simulation runs the installed transformers); use --method "
            "analytic or auto"
        )
    if method == "auto" and workload is not None and (workload.generating or _llm_hub_workload(spec, workload)):
        # only core's decoder model has a KV cache and a decode loop (any spec); it also describes an hf:
        # decoder's quantized storage and adapters
        return "analytic"
    return "simulated" if method != "analytic" and simulatable(spec) else "analytic"


def _llm_hub_workload(spec: str, w: Workload) -> bool:
    return spec.startswith("hf:") and (
        w.finetune != Finetune.FULL
        or w.weights not in (None, WeightFormat.FP32, WeightFormat.BF16, WeightFormat.FP16)
        or _older_transformers(spec, w)
    )


def _older_transformers(spec: str, w: Workload) -> bool:
    """A training step of an hf: model under an older transformers release's loss (TransformersRelease)."""
    return spec.startswith("hf:") and w.training and w.transformers_version != TransformersRelease.V5


def spec_estimator(
    spec: str,
    workload: Workload | None = None,
    *,
    seq_len: int | None = None,
    trust_pickle: bool = False,
    method: str = "auto",
) -> Estimator:
    """The estimator the method choice picks for `spec` (and `workload`: hf: decoders in LLM workloads); a
    checkpoint that says how it stores its weights (Hub quantization_config, GGUF) is run as stored."""
    from advisor.importers.hf_hub import is_hub_spec

    if is_hub_spec(spec):
        from advisor.importers.hf_hub_estimate import hub_estimator

        return hub_estimator(spec, workload, seq_len=seq_len, method=method)
    if choose_method(spec, method, workload) == "analytic":
        if workload is not None and workload.generating:
            _refuse_generation_without_decoder(spec)
        graph = load_graph(spec, seq_len, trust_pickle=trust_pickle)
        return with_stored(analytic_estimator(graph), graph.decoder.stored if graph.decoder else None)
    simulated = simulator(spec, seq_len, trust_pickle)
    if method != "auto":
        return simulated

    def run(w: Workload) -> Estimate:
        try:
            return simulated.run(w)
        except SpecError as error:
            if not _simulation_failed(error):
                raise
            # the step could not be followed on the meta device: the layer graph still answers, and says why
            analytic = analytic_estimator(load_graph(spec, seq_len, trust_pickle=trust_pickle)).run(w)
            return replace(
                analytic, assumptions=(*analytic.assumptions, f"{spec}: {error}; estimated analytically instead")
            )

    return replace(simulated, run=run)


def _refuse_generation_without_decoder(spec: str) -> None:
    """An hf:CONFIG.json that core's decoder description does not cover (Mamba, Jamba, encoders) was traced
    through transformers, 5 s for two Jamba layers on 2 cores, before generation refused it: refuse it first."""
    if not (spec.startswith("hf:") and spec.lower().endswith(".json")):
        return
    from advisor.importers import hf_config
    from advisor.importers.common import existing_file, read_config

    path = existing_file(spec[3:])
    if not hf_config.describes_decoder(path):
        raise not_a_decoder(str(read_config(path).get("model_type") or path.name))


def estimate_spec(
    spec: str, workload: Workload, *, seq_len: int | None = None, trust_pickle: bool = False, method: str = "auto"
) -> Estimate:
    return spec_estimator(spec, workload, seq_len=seq_len, trust_pickle=trust_pickle, method=method).run(workload)


def _simulation_failed(error: SpecError) -> bool:
    """A SimulationError can only come from the simulator's module, so it is looked up where it is loaded
    (importing it would import torch, which may be what is missing)."""
    step = sys.modules.get("advisor.importers.simulate.step")
    return step is not None and isinstance(error, step.SimulationError)
