"""Input shapes for saved models that do not record them (TorchScript, a trusted pickled module).

A few common inputs are tried under FakeTensorMode (no memory, no arithmetic): an ImageNet image, a CIFAR
image, an MNIST digit, a sequence of token ids. The first the model accepts is used; if none fits, the user is
told to wrap the model in a FILE.py whose example_inputs gives the real shape.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from advisor.importers.common import fail

Inputs = tuple[tuple[Any, ...], dict[str, Any]]
CANDIDATES: tuple[tuple[tuple[int, ...], str], ...] = (
    ((3, 224, 224), "float"), ((3, 32, 32), "float"), ((1, 28, 28), "float"), ((128,), "int64"))


def _make(torch: Any, shape: tuple[int, ...], kind: str) -> Callable[[int], Inputs]:
    def example_inputs(batch_size: int) -> Inputs:
        if kind == "int64":
            return (torch.zeros((batch_size, *shape), dtype=torch.int64),), {}
        return (torch.randn((batch_size, *shape)),), {}

    return example_inputs


def _accepts(torch: Any, module: Any, make: Callable[[int], Inputs]) -> bool:
    from torch._subclasses.fake_tensor import FakeTensorMode

    mode = FakeTensorMode(allow_non_fake_inputs=True)
    args, _ = make(2)
    try:
        with torch.no_grad(), mode:
            module(*[mode.from_tensor(a) for a in args])
    except Exception:  # the model refused this shape: try the next one
        return False
    return True


def probe_inputs(path: Path, module: Any) -> Callable[[int], Inputs]:
    import torch

    from advisor.importers.torch_graph import quiet_fake_tensor_log

    training = module.training
    module.eval()  # eval: probing must not touch BatchNorm statistics
    try:
        with quiet_fake_tensor_log():
            for shape, kind in CANDIDATES:
                make = _make(torch, shape, kind)
                if _accepts(torch, module, make):
                    return make
    finally:
        module.train(training)
    tried = ", ".join("x".join(map(str, s)) for s, _ in CANDIDATES)
    raise fail(path, f"the saved model does not record its input shape and accepts none of {tried}; "
                     "write a FILE.py whose build_model() loads it and whose example_inputs() makes its input")
