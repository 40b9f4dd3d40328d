"""Values for data-dependent reads of meta tensors.

Meta tensors hold no values, so `.item()` (data-dependent control flow such as transformers' `if
mask.all():` before it drops a causal mask) has nothing to read. A stand-in answers instead: True after
all()/equal(), False after any() and the isnan/isinf family, else 1. The simulator's MemoryTracker and the
analytic trace on the meta device give the same answers, so both follow the same branch.
"""

from __future__ import annotations

from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

aten = torch.ops.aten
_TRUE_AFTER = {aten.all, aten.equal}
_FALSE_AFTER = {aten.any, aten.isnan, aten.isinf, aten.isneginf, aten.isposinf}


class StandIns:
    """Remembers which meta storages came out of all()/any()-like ops, to answer their .item()."""

    def __init__(self) -> None:
        self.hints: dict[int, bool] = {}

    def wants(self, func: Any, args: tuple[Any, ...]) -> bool:
        return bool(func is aten._local_scalar_dense.default and args[0].device.type == "meta")

    def note(self, func: Any, out: Any) -> None:
        packet = func._overloadpacket
        if packet in _TRUE_AFTER or packet in _FALSE_AFTER:
            for tensor in tree_flatten(out)[0]:
                if isinstance(tensor, torch.Tensor) and tensor.device.type == "meta":
                    self.hints[id(tensor.untyped_storage())] = packet in _TRUE_AFTER

    def forget(self, storage_id: int) -> None:
        self.hints.pop(storage_id, None)

    def value(self, tensor: torch.Tensor) -> bool | int | float:
        hint = self.hints.get(id(tensor.untyped_storage()))
        if tensor.dtype == torch.bool:
            return bool(hint) if hint is not None else True
        return 1.0 if tensor.is_floating_point() else 1


class MetaScalars(TorchDispatchMode):  # type: ignore[no-untyped-call]
    """Stand-ins for .item() on meta tensors, for code that runs a module on the meta device outside the
    simulator (the analytic trace of hf: models). Storage ids are only compared while the pass runs."""

    def __init__(self) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        self.stand_ins = StandIns()

    def __torch_dispatch__(
        self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: dict[str, Any] | None = None
    ) -> Any:
        if self.stand_ins.wants(func, args):
            return self.stand_ins.value(args[0])
        out = func(*args, **(kwargs or {}))
        self.stand_ins.note(func, out)
        return out
