"""A tensor whose gradient arrives many times (a recurrent scan reading it a slice at a time): plain PyTorch
adds each later arrival into the first in place (autograd InputBuffer's can_accumulate_inplace), while under
any TorchDispatchMode, as the simulator runs, the engine accumulates out of place (a new tensor per arrival,
the old one freed after). The simulator accounts each such add as plain PyTorch, and so a CUDA run, does
(simulate/accumulation.py), which the replay (core/memory.py, _give_grad) follows too: in place where the
buffer has no other owner, out of place where it has one."""

from __future__ import annotations

from typing import Any, ClassVar

import torch
from torch.profiler import ProfilerActivity, profile
from torch.utils._python_dispatch import TorchDispatchMode

from advisor.importers.simulate.tracking import MemoryTracker


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


# ---- the simulator accounts the engine's accumulation as plain PyTorch does (simulate/accumulation.py)

SLICE = 1024 * 4  # one (1024,) fp32 row: 4096 B, a multiple of the allocator's 512-byte block


class _Keep(torch.autograd.Function):
    """Passes x on; its backward keeps the gradient it hands back, so that buffer has a second owner."""

    kept: ClassVar[list[torch.Tensor]] = []

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor) -> torch.Tensor:
        return x.clone()

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> torch.Tensor:
        out = grad.clone()  # dense: the expanded gradient of a sum, copied
        _Keep.kept.append(out)
        return out


class _Dense(torch.autograd.Function):
    """Identity whose backward makes the expanded gradient of a sum dense (an in-place candidate)."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor) -> torch.Tensor:
        return x.clone()

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> torch.Tensor:
        return grad.contiguous()


def _backward_rise(loss_of: Any) -> tuple[int, int, int]:
    """Bytes live when backward starts, the most backward adds to them, and bytes live after it (every
    gradient freed but h.grad), simulated on the meta device."""
    tracker = MemoryTracker()
    with tracker:
        h = torch.empty(8, 1024, device="meta", requires_grad=True)  # 8 rows: 8*4096 = 32,768 B
        loss = loss_of(h)
        before = tracker.current
        tracker.reset_peak()
        tracker.engine.watch(loss)
        torch.autograd.backward(loss)
        tracker.engine.stop()
        _Keep.kept.clear()
        tracker.at("end", "")
    return before, tracker.peak.bytes - before, tracker.current


def _rows_summed(h: torch.Tensor) -> torch.Tensor:
    y = h * 2  # y's gradient arrives 8 times, one whole-size select_backward per row
    loss = y[0].sum()
    for i in range(1, 8):
        loss = loss + y[i].sum()
    return loss


def test_a_gradient_arriving_8_times_is_added_in_place() -> None:
    before, rise, after = _backward_rise(_rows_summed)
    assert before == 8 * SLICE + 512  # h, the 0-dim loss (y and the partial sums are not kept)
    assert after == before + 8 * SLICE  # + h.grad
    # backward: the 0-dim ones, y's buffer and the arriving select_backward gradient, each 8 rows; out of
    # place every later arrival would add a third 8-row tensor: 24*4096 + 512 = 98,816
    assert rise == 512 + 8 * SLICE + 8 * SLICE == 66_048


def test_a_buffer_with_a_second_owner_is_added_out_of_place() -> None:
    def kept_then_row(h: torch.Tensor) -> torch.Tensor:
        y = h * 2
        return y[1].sum() + _Keep.apply(y).sum()  # _Keep's backward runs first: its gradient is the buffer

    before, rise, after = _backward_rise(kept_then_row)
    assert before == 8 * SLICE + 512
    assert after == before + 8 * SLICE  # + h.grad: each gradient made in backward was freed exactly once
    # the ones, the kept buffer, row 1's select_backward and the new sum: can_accumulate_inplace is false
    assert rise == 512 + 3 * 8 * SLICE == 98_816


def test_the_same_gradient_arriving_twice_is_added_out_of_place() -> None:
    def twice(h: torch.Tensor) -> torch.Tensor:
        return _Dense.apply(h + h).sum()  # AddBackward hands one tensor to both of h's edges

    before, rise, after = _backward_rise(twice)
    assert before == 8 * SLICE + 512
    assert after == before + 8 * SLICE  # + h.grad
    # the ones, the dense gradient (the buffer and the arrival are one tensor: use_count 2) and the sum
    assert rise == 512 + 2 * 8 * SLICE == 66_048
