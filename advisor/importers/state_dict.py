"""Weights-only files (`torch.save(model.state_dict())` as .pth/.pt/.bin): parameter counts, nothing more.

`torch.load(weights_only=True)` unpickles only tensors and plain containers; anything else in the pickle (a
whole pickled module, a class with __reduce__) is refused before it runs. Without the architecture there are
no layer shapes, so the graph has no activations: its name says so and its one layer holds the weights.
"""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any

from advisor.core.graph import Graph, GraphBuilder
from advisor.core.ops import Input
from advisor.core.ops.generic import Opaque
from advisor.importers.common import fail, one_line, optional_module
from advisor.importers.zip_limits import checked_members

# BatchNorm's running statistics are saved with the weights but are buffers, not trainable parameters.
BUFFER_SUFFIXES = ("running_mean", "running_var", "num_batches_tracked")
WRAPPER_KEYS = ("state_dict", "model_state_dict", "model", "module", "net")
TRUST_HINT = "it holds pickled Python objects, which run code when loaded; if you trust this file, pass --trust-pickle"


def is_torchscript(path: Path) -> bool:
    """TorchScript archives carry constants.pkl and compiled code; torch.save archives only data.pkl."""
    try:
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
    except Exception:  # zipfile raises many kinds on damaged archives (BadZipFile, NotImplementedError...)
        return False
    return any(n.endswith("/constants.pkl") for n in names) and any("/code/" in n for n in names)


def load_weights(path: Path) -> dict[str, Any]:
    """The tensors of a weights-only file; SpecError for pickled code, damage or another format."""
    torch = optional_module("torch", str(path))
    if zipfile.is_zipfile(path):
        checked_members(path)  # a 1 GiB deflated data.pkl is refused from the zip directory (issue 29)
    try:
        obj = torch.load(str(path), map_location="meta", weights_only=True)
    except Exception as error:
        if isinstance(error, __import__("pickle").UnpicklingError) and "Weights only load failed" in str(error):
            raise fail(path, TRUST_HINT) from None
        raise fail(
            path,
            f"not a readable torch file (truncated or another format): "
            f"{one_line(f'{type(error).__name__}: {error}', 160)}",
        ) from None
    tensors = _tensor_dict(obj, torch)
    if not tensors:
        raise fail(path, f"holds no tensors ({type(obj).__name__}); not a state_dict")
    return tensors


def _tensor_dict(obj: Any, torch: Any) -> dict[str, Any]:
    """A state_dict, or the one inside a training checkpoint ({'model': ..., 'optimizer': ...})."""
    if not isinstance(obj, dict):
        return {}
    flat = {str(k): v for k, v in obj.items() if isinstance(v, torch.Tensor)}
    if flat:
        return flat
    for key in WRAPPER_KEYS:
        inner = obj.get(key)
        if isinstance(inner, dict):
            found = _tensor_dict(inner, torch)
            if found:
                return found
    return {}


def parameter_count(tensors: dict[str, Any]) -> int:
    """Floating-point tensors that are not known buffers: what the model trains."""
    return sum(
        int(t.numel()) for name, t in tensors.items() if t.is_floating_point() and not name.endswith(BUFFER_SUFFIXES)
    )


def weights_only_graph(name: str, params: int, what: str) -> Graph:
    """A graph that carries a parameter count and says that the architecture (so activations) is unknown."""
    builder = GraphBuilder(f"{name} ({what}: parameters only, no architecture, so no activation memory)")
    x = builder.add(Input((1,), "float"), [], "input")
    builder.add(
        Opaque(
            "weights only (layers unknown)", (1,), params=params, keeps_inputs=False, input_count=1, flops_per_element=0
        ),
        [x],
        "weights",
    )
    return builder.build()


def state_dict_graph(path: Path) -> Graph:
    tensors = load_weights(path)
    return weights_only_graph(path.name, parameter_count(tensors), "a state_dict")
