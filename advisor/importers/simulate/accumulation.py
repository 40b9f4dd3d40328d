"""Which aten.add.Tensor of a simulated backward is the autograd engine adding a gradient's later arrival into
its input buffer, and could plain PyTorch have added it in place.

A tensor whose gradient arrives more than once (a recurrent scan reading it a slice at a time, a residual
stream, a weight used twice) has its arrivals summed in the consumer's InputBuffer. PyTorch's engine
(torch/csrc/autograd/input_buffer.cpp, accumulate() and can_accumulate_inplace(), alike in the 2.x sources;
tests/importers/test_grad_accumulation.py shows the pinned version doing it)
adds a later arrival into the first in place, old_var.add_(var), when grad mode is off and old_var is a vanilla
tensor (not subclass-like, not a zero tensor, not nested) that is non-overlapping and dense and whose
TensorImpl and storage have no other owner (use_count 1), and var is not subclass-like. Otherwise it runs
buffer[pos] = old_var + var: a new tensor, then old_var's release.

Under any TorchDispatchMode every tensor is subclass-like (ATen/TensorSubclassLikeUtils.h asks
dispatch_mode_enabled(); meta tensors are too, MetaBit is in kTensorSubclassLike), so while the simulator
records, the engine always takes the out-of-place branch. This module finds those adds; the tracker
(simulate/tracking.py) then accounts one in place when the trace shows that nothing else owned old_var: its
storage is the very next thing released, before any other event.

When the engine adds: Engine::evaluate_function delivers a node's outputs to the input buffers after the
node's function and its post hooks have run (engine.cpp call_function), and the next node's pre hooks run
before its function. So a post hook on every node that has outputs opens a window, a pre hook on every node
closes it, and an add inside the window whose second operand is one of the node's outputs is a delivery.
Post hooks keep the node's incoming gradients alive only as long as call_function already does (its
`inputs` vector lives to its end either way); nodes without outputs (AccumulateGrad, whose gradient stealing
counts the post hooks' extra reference) get no post hook.
"""

from __future__ import annotations

from typing import Any, TypeGuard

import torch
from torch.utils.hooks import RemovableHandle

aten = torch.ops.aten


def non_overlapping_and_dense(tensor: torch.Tensor) -> bool:
    """c10/core/TensorImpl.cpp compute_non_overlapping_and_dense: ordered by stride, the dimensions longer
    than one tile memory exactly (each stride is the product of the shorter strides' sizes)."""
    expected = 1
    for stride, size in sorted((st, sz) for sz, st in zip(tensor.shape, tensor.stride(), strict=True) if sz > 1):
        if stride != expected:
            return False
        expected *= size
    return True


def _vanilla(tensor: Any) -> TypeGuard[torch.Tensor]:
    """A plain strided tensor: what can_accumulate_inplace() calls vanilla, sparse and nested excluded."""
    return (
        type(tensor) is torch.Tensor
        and tensor.layout == torch.strided
        and not tensor.is_nested
        and not tensor._is_zerotensor()
    )


class EngineWindow:
    """Open between a backward node's post hooks and the next node's pre hooks: what the engine does then."""

    def __init__(self) -> None:
        self.open = False
        self.arrivals: frozenset[int] = frozenset()  # storage ids of the gradients the last node produced
        self._handles: list[RemovableHandle] = []

    def watch(self, root: torch.Tensor) -> None:
        """Hooks every node of the graph behind `root` (what torch.autograd.backward(root) will run)."""
        seen: set[int] = set()
        stack = [root.grad_fn]
        while stack:
            node = stack.pop()
            if node is None or id(node) in seen:
                continue
            seen.add(id(node))
            self._handles.append(node.register_prehook(self._close))
            if node.next_functions:
                self._handles.append(node.register_hook(self._open))
            stack.extend(next_node for next_node, _ in node.next_functions)

    def stop(self) -> None:
        for handle in self._handles:
            handle.remove()
        self._handles.clear()
        self.open, self.arrivals = False, frozenset()

    def _close(self, grad_outputs: Any) -> None:
        self.open = False

    def _open(self, grad_inputs: Any, grad_outputs: Any) -> None:
        self.open = True
        self.arrivals = frozenset(id(g.untyped_storage()) for g in grad_inputs if _vanilla(g))  # sparse: no storage

    def in_place_operand(
        self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any], out: Any
    ) -> torch.Tensor | None:
        """old_var when this op is the engine's `old_var + var` that plain PyTorch would do as
        old_var.add_(var), provided old_var has no other owner (the tracker checks that in the trace)."""
        if not self.open or func is not aten.add.Tensor or kwargs or len(args) != 2 or torch.is_grad_enabled():
            return None
        old, new = args
        if not (_vanilla(old) and _vanilla(new) and isinstance(out, torch.Tensor)):
            return None
        old_storage, new_storage = id(old.untyped_storage()), id(new.untyped_storage())
        if new_storage not in self.arrivals or old_storage == new_storage:  # var itself still owns old_var
            return None
        if out.shape != old.shape or out.dtype != old.dtype or not non_overlapping_and_dense(old):
            return None
        return old
