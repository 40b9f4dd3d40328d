"""Why the simulated step can exceed the analytic replay where a tensor's gradient arrives many times (a
recurrent scan read a slice at a time): plain PyTorch adds each later arrival into the first in place
(autograd InputBuffer's can_accumulate_inplace), while under any TorchDispatchMode, as the simulator runs, the
engine accumulates out of place (a new tensor per arrival, the old one freed after). The replay
(core/memory.py, _give_grad) follows plain PyTorch, which is what a CUDA run does."""

from __future__ import annotations

from typing import Any

import torch
from torch.profiler import ProfilerActivity, profile
from torch.utils._python_dispatch import TorchDispatchMode


def _scan_loss() -> torch.Tensor:
    h = torch.randn(8, 64, requires_grad=True)
    y = h * 2
    state = y[0]
    for i in range(1, 8):
        state = state * y[i]
    return state.sum()


class _Ops(TorchDispatchMode):  # type: ignore[misc]
    def __init__(self) -> None:
        super().__init__()
        self.names: list[str] = []

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        self.names.append(str(func))
        return func(*args, **(kwargs or {}))


def test_plain_backward_accumulates_in_place() -> None:
    loss = _scan_loss()
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        loss.backward()
    names = [e.name for e in prof.events()]
    # y gets 8 slice gradients: the first becomes the buffer, the other 7 are added into it in place
    assert names.count("aten::select_backward") == 8 and names.count("aten::add_") == 7
    assert names.count("aten::add") == 0


def test_under_a_dispatch_mode_the_engine_accumulates_out_of_place() -> None:
    loss = _scan_loss()
    with _Ops() as mode:
        loss.backward()
    assert mode.names.count("aten.add.Tensor") == 7  # one new y-sized tensor per later arrival
