"""Which layer is running, and what autograd keeps.

Forward pre/post hooks on every submodule name the layer that allocates; a pre-hook on the grad_fn of each
layer's output names the layer whose backward runs (Node.register_prehook does not change the graph, unlike
full backward hooks, which wrap outputs in views and break in-place ops that follow). Saved-tensor hooks
(torch.autograd.graph.saved_tensors_hooks) mark what autograd saves as activations; they hand autograd a
detached alias so a saved output does not hold its own grad_fn (the reference cycle the hooks' documentation
warns about) and storages still die when the node releases them.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from advisor.importers.simulate.tracking import MemoryTracker


@dataclass
class LayerInfo:
    name: str
    kind: str
    param_count: int
    output_shape: tuple[int, ...] = ()
    output_bytes: int = 0


def _first_tensor(value: Any) -> torch.Tensor | None:
    if isinstance(value, torch.Tensor):
        return value
    if isinstance(value, (tuple, list)):
        for item in value:
            found = _first_tensor(item)
            if found is not None:
                return found
    if isinstance(value, dict) or hasattr(value, "values"):
        try:
            items = list(value.values())
        except (TypeError, AttributeError):
            return None
        return _first_tensor(items)
    return None


class LayerWatch:
    def __init__(self, module: nn.Module, tracker: MemoryTracker) -> None:
        self.tracker = tracker
        self.stack: list[str] = []
        self.layers: dict[str, LayerInfo] = {}
        self.handles: list[Any] = []
        self.claimed: set[int] = set()  # ids only: holding nodes would keep the graph
        self.kinds: dict[str, str] = {}  # every module, rows or not: the kernels of a container's own ops
        self.trainable_tensors: dict[str, int] = {}
        for name, sub in module.named_modules():
            self.kinds[name or "model"] = type(sub).__name__
            self.trainable_tensors[name or "model"] = sum(p.requires_grad for p in sub.parameters(recurse=False))
            own = sum(p.numel() for p in sub.parameters(recurse=False))
            leaf = not any(True for _ in sub.children())
            if (name and (leaf or own)) or (not name and leaf):  # a bare layer is its own model
                self.layers[name or "model"] = LayerInfo(name or "model", type(sub).__name__, own)
            self.handles.append(sub.register_forward_pre_hook(self._pre(name or "model")))
            self.handles.append(sub.register_forward_hook(self._post(name or "model")))

    def _pre(self, name: str) -> Any:
        def hook(module: nn.Module, args: Any) -> None:
            self.stack.append(name)
            self.tracker.at(self._phase(), name)

        return hook

    def _post(self, name: str) -> Any:
        def hook(module: nn.Module, args: Any, output: Any) -> None:
            if self.stack and self.stack[-1] == name:
                self.stack.pop()
            self.tracker.at(self._phase(), self.stack[-1] if self.stack else "model")
            tensor = _first_tensor(output)
            if tensor is None:
                return
            info = self.layers.get(name)
            if info is not None:
                info.output_shape = tuple(tensor.shape[1:])
                info.output_bytes = tensor.numel() * tensor.element_size()
            node = tensor.grad_fn
            if node is not None and id(node) not in self.claimed:  # the innermost module names the node
                self.claimed.add(id(node))
                node.register_prehook(self._backward(name))

        return hook

    def _phase(self) -> str:
        """Activation checkpointing reruns forwards inside backward: that memory is backward's."""
        return "backward" if self.tracker.phase == "backward" else "forward"

    def _backward(self, name: str) -> Any:
        def hook(grad_outputs: Any) -> None:
            self.tracker.at("backward", name)

        return hook

    @contextmanager
    def saving(self) -> Iterator[None]:
        def pack(tensor: torch.Tensor) -> torch.Tensor:
            if self.tracker.category_of(tensor) == "temporaries":
                self.tracker.recategorize(tensor, "activations")
            return tensor.detach()

        def unpack(tensor: torch.Tensor) -> torch.Tensor:
            return tensor

        self.claimed.clear()
        with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
            yield

    def kept_bytes(self) -> dict[str, int]:
        kept: dict[str, int] = {}
        for block in self.tracker.live.values():
            if block.category == "activations" and block.phase == "forward":
                kept[block.layer] = kept.get(block.layer, 0) + block.size
        return kept

    def remove(self) -> None:
        for handle in self.handles:
            handle.remove()
        self.handles.clear()
