"""Graph rewrites that model a memory-saving change the workload controls cannot express: in-place
activations and frozen layers. Each returns a new Graph; the estimator then measures the effect.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from advisor.core.graph import Graph, GraphBuilder, TensorSpec
from advisor.core.ops.activation import Activation
from advisor.core.ops.base import Op, SavedTensor
from advisor.core.ops.io import Input


def _rebuild(graph: Graph, op_for: Any) -> Graph:
    builder = GraphBuilder(graph.name, graph.task, decoder=graph.decoder)
    for index, node in enumerate(graph.nodes):
        context: AbstractContextManager[None] = builder.block(node.block) if node.block else nullcontext()
        with context:
            builder.add(op_for(index, node.op), node.inputs, node.name)
    return builder.build()


def with_inplace_activations(graph: Graph) -> Graph:
    """nn.ReLU(inplace=True) and friends: activations write into their input instead of a new tensor."""

    def op_for(_index: int, op: Op) -> Op:
        if isinstance(op, Activation) and any(f.name == "inplace_" for f in dataclasses.fields(op)):
            return dataclasses.replace(op, inplace_=True)  # type: ignore[call-arg]
        return op

    return _rebuild(graph, op_for)


class _FrozenMixin(Op):
    """A layer under torch.no_grad-like freezing (requires_grad_(False) on its parameters): its weights stay
    on the card (counted as buffers), but it has no gradients, no optimizer state, and since nothing before
    it needs a gradient either, autograd saves nothing of it and runs no backward through it."""

    def param_count(self, inputs: Sequence[TensorSpec]) -> int:
        return 0

    def buffer_count(self, inputs: Sequence[TensorSpec]) -> int:
        return super().param_count(inputs) + super().buffer_count(inputs)

    def saved_inputs(self) -> tuple[int, ...]:
        return ()

    def saves_result(self) -> bool:
        return False

    def extra_saved(self, inputs: Sequence[TensorSpec], output: TensorSpec, training: bool) -> tuple[SavedTensor, ...]:
        return ()

    def backward_flops(self, inputs: Sequence[TensorSpec], output: TensorSpec, input_grad: bool) -> int:
        return 0

    def backward_workspace(self, inputs: Sequence[TensorSpec], output: TensorSpec) -> int:
        return 0


_FROZEN_CLASSES: dict[type[Op], type[Op]] = {}


def _frozen_class(cls: type[Op]) -> type[Op]:
    # A subclass of the layer's own class keeps its kind, autocast policy and isinstance checks.
    if cls not in _FROZEN_CLASSES:
        _FROZEN_CLASSES[cls] = type(f"Frozen{cls.__name__}", (_FrozenMixin, cls), {})
    return _FROZEN_CLASSES[cls]


def frozen(op: Op) -> Op:
    values = {f.name: getattr(op, f.name) for f in dataclasses.fields(op)}
    return _frozen_class(type(op))(**values)


def trainable_layers(graph: Graph) -> list[int]:
    """Nodes that own parameters, in execution order."""
    return [i for i, node in enumerate(graph.nodes) if node.op.param_count(graph.input_specs(node)) > 0]


def freeze_before(graph: Graph, first_trained: int) -> Graph:
    """Freezes every node before `first_trained` (the frozen prefix of fine-tuning: a pretrained backbone).

    A weight shared with a trained layer (GPT-2's LM head reuses the token embedding) stays trainable:
    it is one parameter, and the trained layer's gradient reaches it."""
    shared = {getattr(node.op, "tied_to", "") for node in graph.nodes[first_trained:]} - {""}

    def op_for(index: int, op: Op) -> Op:
        if index >= first_trained or isinstance(op, Input) or graph.nodes[index].name in shared:
            return op
        return frozen(op)

    return _rebuild(graph, op_for)
