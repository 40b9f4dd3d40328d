"""A minimal FILE.py loader for the simulator (until advisor.importers.torch_loader lands).

A FILE.py defines build_model() -> nn.Module, example_inputs(batch_size) -> tuple (positional args), dict
(keyword args) or a single tensor, and optionally loss_fn(output, inputs) where inputs is what
example_inputs returned. A .py model file is code the user chose to run.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn

from advisor.core.errors import SpecError
from advisor.importers.simulate.step import Inputs, LossFn


@dataclass(frozen=True)
class LoadedPyModel:
    name: str
    module: nn.Module
    example_inputs: Callable[[int], Inputs]
    loss_fn: LossFn | None


def as_inputs(value: Any) -> Inputs:
    if isinstance(value, dict):
        return (), dict(value)
    if isinstance(value, tuple):
        return value, {}
    if isinstance(value, list):
        return tuple(value), {}
    return (value,), {}


def as_user_form(inputs: Inputs, kind: str) -> Any:
    """The inputs in the form example_inputs returned them (rebuilt, so that no reference to the originals is
    kept: pure half-precision runs replace float inputs by their casts and the originals must die)."""
    args, kwargs = inputs
    if kind == "dict":
        return kwargs
    if kind == "tuple":
        return args
    if kind == "list":
        return list(args)
    return args[0]


def _wrap_loss(user: Callable[[Any, Any], Any], kinds: dict[str, str]) -> LossFn:
    def loss(output: Any, inputs: Inputs) -> torch.Tensor:
        return user(output, as_user_form(inputs, kinds.get("kind", "tuple")))  # type: ignore[no-any-return]
    return loss


def load_py_model(path: str | Path, *, on_meta: bool = True) -> LoadedPyModel:
    """Imports FILE.py and builds its model, on the meta device by default (no weight initialisation)."""
    file = Path(path)
    if not file.is_file():
        raise SpecError(f"{path}: no such file")
    spec = importlib.util.spec_from_file_location(f"advisor_model_{file.stem}", file)
    if spec is None or spec.loader is None:
        raise SpecError(f"{path}: cannot be imported as Python")
    code = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(file.resolve().parent))  # the file may import its siblings
    try:
        spec.loader.exec_module(code)
    finally:
        sys.path.remove(str(file.resolve().parent))
    for needed in ("build_model", "example_inputs"):
        if not callable(getattr(code, needed, None)):
            raise SpecError(f"{path}: defines no {needed}()")
    if on_meta:
        with torch.device("meta"):
            module = code.build_model()
    else:
        module = code.build_model()
    if not isinstance(module, nn.Module):
        raise SpecError(f"{path}: build_model() returned {type(module).__name__}, not an nn.Module")
    kinds: dict[str, str] = {}

    def make(batch: int) -> Inputs:
        value = code.example_inputs(batch)
        kinds["kind"] = type(value).__name__ if isinstance(value, (dict, tuple, list)) else "single"
        return as_inputs(value)

    user_loss = getattr(code, "loss_fn", None)
    loss = _wrap_loss(user_loss, kinds) if callable(user_loss) else None
    return LoadedPyModel(getattr(code, "NAME", file.stem), module, make, loss)
