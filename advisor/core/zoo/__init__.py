"""Built-in architectures, built layer by layer from their definitions (not from pasted totals).

Each family module exposes MODELS: vision builders take no argument (their eval input size), sequence
models take `seq_len` (its default, where given, is the model's usual length).
"""

from __future__ import annotations

import difflib
import importlib
import inspect
from collections.abc import Callable
from functools import cache

from advisor.core.errors import SpecError
from advisor.core.graph import Graph

FAMILY_MODULES = ("advisor.core.zoo.seed", "advisor.core.zoo.vision", "advisor.core.zoo.text", "advisor.core.zoo.llm")
DEFAULT_SEQ_LEN = 512


@cache
def _registry() -> dict[str, Callable[..., Graph]]:
    models: dict[str, Callable[..., Graph]] = {}
    for module_name in FAMILY_MODULES:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as error:
            if error.name != module_name:
                raise
            continue
        models.update(module.MODELS)
    return models


def zoo_names() -> list[str]:
    return sorted(_registry())


def takes_seq_len(name: str) -> bool:
    return "seq_len" in inspect.signature(_lookup(name)).parameters


def _lookup(name: str) -> Callable[..., Graph]:
    registry = _registry()
    if name not in registry:
        close = difflib.get_close_matches(name, registry, n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else "; `advisor estimate --list` shows them"
        raise SpecError(f"unknown zoo model {name!r}{hint}")
    return registry[name]


def build(name: str, seq_len: int | None = None) -> Graph:
    builder = _lookup(name)
    if not takes_seq_len(name):
        if seq_len is not None:
            raise SpecError(f"--seq-len: {name} is not a sequence model")
        return builder()
    if seq_len is None:
        default = inspect.signature(builder).parameters["seq_len"].default
        seq_len = DEFAULT_SEQ_LEN if default is inspect.Parameter.empty else default
    if seq_len < 1:
        raise SpecError(f"--seq-len: must be at least 1, got {seq_len}")
    return builder(seq_len)
