"""Every device allocation and free of a simulated step, seen at the dispatcher.

The step runs on the meta device, which stands for the CUDA card: every meta storage is device memory. A
TorchDispatchMode sees each op's outputs; a storage not seen before is a new allocation of its nbytes,
rounded up as the CUDA caching allocator rounds every request (c10/cuda/CUDACachingAllocator.cpp,
kMinBlockSize = 512). A weakref finalizer on the storage's Python object marks its free: storages keep
one Python object for their whole life (PyObject preservation), so the callback runs exactly when the
storage dies - the mechanism torch/distributed/_tools/mem_tracker.py relies on too.

Meta tensors hold no values: `.item()` on one gets a stand-in (simulate/standins.py).

The autograd engine adds a gradient's later arrivals out of place under a dispatch mode where plain PyTorch
adds them in place (simulate/accumulation.py). Such an add's result is held back, counted nowhere, until the
next event: if that is the release of the buffer it read, nothing else owned the buffer, and the result
takes over the buffer's block as old_var.add_(var) would (no allocation, no free); anything else first
counts the result as the new allocation it was.
"""

from __future__ import annotations

import itertools
import weakref
from dataclasses import dataclass, field
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

from advisor.core.tracker import CATEGORIES, Key, rounded
from advisor.importers.simulate.accumulation import EngineWindow
from advisor.importers.simulate.attention import backward_workspace_bytes
from advisor.importers.simulate.flops import FlopCounter
from advisor.importers.simulate.kernel_record import KernelRecorder
from advisor.importers.simulate.standins import StandIns

aten = torch.ops.aten


@dataclass
class Block:
    key: Key
    size: int
    category: str
    layer: str
    phase: str


@dataclass
class Peak:
    bytes: int = 0
    totals: dict[str, int] = field(default_factory=lambda: dict.fromkeys(CATEGORIES, 0))
    phase: str = "setup"
    layer: str = ""


def _composite(func: Any) -> bool:
    """An op CUDA runs as its parts. One with its own backend kernel as well (silu_backward: CPU and CUDA
    kernels beside math_silu_backward, native_functions.yaml) runs that kernel: the dispatcher prefers a
    backend kernel to CompositeImplicitAutograd, so it stays whole where the meta device can run it. The CPU
    kernel stands for CUDA's, which a CPU build does not register."""
    has = torch._C._dispatch_has_kernel_for_dispatch_key
    name = func.name()
    return bool(has(name, "CompositeImplicitAutograd")) and not (has(name, "CPU") and has(name, "Meta"))


class MemoryTracker(TorchDispatchMode):  # type: ignore[no-untyped-call]
    def __init__(self) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        self.live: dict[int, Block] = {}
        self.totals = dict.fromkeys(CATEGORIES, 0)
        self.current = 0
        self.peak = Peak()
        self.phase, self.layer = "setup", ""
        self.default_category = "weights"
        self.events: list[tuple[Key, int]] = []
        self.measured_from = 0
        self.timeline: list[tuple[str, str, int]] = []
        self.flops = FlopCounter()
        self.kernels = KernelRecorder()
        self._ids = itertools.count()
        self.stand_ins = StandIns()
        self.engine = EngineWindow()
        self._held: tuple[int, int] | None = None  # (result, buffer) storage ids of an add held back

    # ---- where we are
    def at(self, phase: str, layer: str) -> None:
        self._settle()
        if (phase, layer) != (self.phase, self.layer):
            self.timeline.append((self.phase, self.layer, self.current))
            self.phase, self.layer = phase, layer

    def reset_peak(self) -> None:
        self._settle()
        self.peak = Peak(self.current, dict(self.totals), self.phase, self.layer)
        self.measured_from = len(self.events)
        self.timeline.clear()
        self.flops.reset()
        self.kernels.reset()

    # ---- allocations
    def track(self, tensor: torch.Tensor, category: str | None = None) -> None:
        """Counts the tensor's storage if it is device memory not seen yet."""
        self._settle()
        if tensor.device.type != "meta":
            return
        storage = tensor.untyped_storage()
        if id(storage) in self.live:
            if category is not None:
                self.recategorize(tensor, category)
            return
        block = self._register(storage, category)
        if block.size:
            self._add(block)

    def _register(self, storage: torch.UntypedStorage, category: str | None) -> Block:
        sid = id(storage)
        size = rounded(storage.nbytes())
        block = Block(Key("t", next(self._ids), 0), size, category or self.default_category, self.layer, self.phase)
        self.live[sid] = block
        weakref.finalize(storage, self._release, sid)
        return block

    def _hold(self, result: torch.Tensor, buffer: torch.Tensor) -> None:
        """The engine's `buffer + arrival`: registered, not yet counted (see the module's docstring)."""
        storage, buffer_id = result.untyped_storage(), id(buffer.untyped_storage())
        if id(storage) in self.live or buffer_id not in self.live:
            self.track(result)
            return
        self._register(storage, None)
        self._held = (id(storage), buffer_id)

    def _settle(self, released: int | None = None) -> bool:
        """Decides a held add at the next event; True when that event was its buffer's release."""
        if self._held is None:
            return False
        result, buffer = self._held
        self._held = None
        if released == buffer:  # in place: the result is the buffer
            self.live[result] = self.live.pop(buffer)
            self.stand_ins.forget(buffer)
            return True
        block = self.live.get(result)
        if block is not None and block.size:
            self._add(block)
        return False

    def _add(self, block: Block) -> None:
        self.totals[block.category] += block.size
        self.current += block.size
        self.events.append((block.key, block.size))
        if self.current > self.peak.bytes:
            self.peak = Peak(self.current, dict(self.totals), self.phase, self.layer)

    def _release(self, sid: int) -> None:
        if self._settle(sid):
            return
        self.stand_ins.forget(sid)
        block = self.live.pop(sid, None)
        if block is None or not block.size:
            return
        self.totals[block.category] -= block.size
        self.current -= block.size
        self.events.append((block.key, -block.size))

    def transient(self, nbytes: int) -> None:
        """A workspace a CUDA kernel takes from the allocator while it runs."""
        self._settle()
        block = Block(Key("w", next(self._ids), 0), rounded(nbytes), "temporaries", self.layer, self.phase)
        if block.size:
            self._add(block)
            self.totals["temporaries"] -= block.size
            self.current -= block.size
            self.events.append((block.key, -block.size))

    def recategorize(self, tensor: torch.Tensor, category: str) -> None:
        self._settle()
        if tensor.device.type != "meta":
            return
        block = self.live.get(id(tensor.untyped_storage()))
        if block is None:
            self.track(tensor, category)
            return
        if block.category != category:
            self.totals[block.category] -= block.size
            self.totals[category] += block.size
            block.category = category

    def category_of(self, tensor: torch.Tensor) -> str | None:
        self._settle()
        block = self.live.get(id(tensor.untyped_storage()))
        return None if block is None else block.category

    # ---- the dispatcher
    def __torch_dispatch__(
        self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: dict[str, Any] | None = None
    ) -> Any:
        kwargs = kwargs or {}
        self._settle()
        if self.stand_ins.wants(func, args):
            return self.stand_ins.value(args[0])
        if _composite(func):  # under inference_mode composites reach this mode undecomposed: see their parts
            with self:
                out = func.decompose(*args, **kwargs)
            if out is not NotImplemented:
                return out
        out = func(*args, **kwargs)
        buffer = self.engine.in_place_operand(func, args, kwargs, out)
        if buffer is not None and out.device.type == "meta":
            self._hold(out, buffer)
        else:
            for tensor in tree_flatten(out)[0]:
                if isinstance(tensor, torch.Tensor):
                    self.track(tensor)
        for nbytes in backward_workspace_bytes(func, args):
            self.transient(nbytes)
        self.stand_ins.note(func, out)
        self.flops.count(func, args, kwargs, out, self.phase, self.layer)
        self.kernels.record(func, args, kwargs, out, self.phase, self.layer)
        return out
