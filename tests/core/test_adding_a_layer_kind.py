"""Adding a layer kind, through the documented extension point (docs/ARCHITECTURE.md, "A layer kind"): one
frozen Op subclass with its kind and formulas, entered by `@register_op`. Nothing else names it, yet the
estimate counts its parameters, arithmetic and memory, and the network file saves and reloads it."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import ClassVar

import pytest

from advisor.core.analytic import estimate
from advisor.core.graph import Graph, GraphBuilder, TensorSpec
from advisor.core.ops import OP_REGISTRY, Input, Linear
from advisor.core.ops.base import Op, same_shape, single_input
from advisor.core.ops.registry import register_op
from advisor.core.workload import Workload
from advisor.importers.netfile import graph_from_json, graph_to_json


@dataclass(frozen=True)
class ChannelScale(Op):
    """y = x * w with one learnable weight per feature (a LayerScale without the init): the worked example."""

    kind: ClassVar[str] = "channel_scale_example"
    saves_inputs: ClassVar[tuple[int, ...]] = (0,)  # dL/dw = sum(dL/dy * x) reads the input
    init: float = 1.0

    def output_spec(self, inputs: Sequence[TensorSpec], layer: str) -> TensorSpec:
        x = single_input(inputs, layer)
        return same_shape(x, x.shape)

    def param_count(self, inputs: Sequence[TensorSpec]) -> int:
        return inputs[0].shape[-1]

    def other_flops(self, inputs: Sequence[TensorSpec], output: TensorSpec) -> int:
        return output.numel  # one multiply per element


@pytest.fixture
def registered() -> Iterator[type[Op]]:
    """The kind entered as its module's import would enter it, and taken out again for the other tests."""
    register_op(ChannelScale)
    try:
        yield ChannelScale
    finally:
        del OP_REGISTRY[ChannelScale.kind]


def _graph(scale: Op | None) -> Graph:
    b = GraphBuilder("scaled")
    x = b.add(Input((16, 64)), [])
    x = b.add(Linear(64), [x], "fc")
    if scale is not None:
        x = b.add(scale, [x], "scale")
    return b.build()


def test_a_registered_kind_is_counted_by_the_estimate_and_kept_by_the_network_file(registered: type[Op]) -> None:
    assert OP_REGISTRY[registered.kind] is registered
    graph, plain = _graph(ChannelScale(init=0.5)), _graph(None)
    w = Workload("train", 8, "fp32", "sgd")
    with_scale, without = estimate(graph, w), estimate(plain, w)
    rows = {r.name: r for r in with_scale.layers}  # the estimate adds a loss head after the graph
    row, fc, plain_fc = rows["scale"], rows["fc"], next(r for r in without.layers if r.name == "fc")
    assert row.kind == "channel_scale_example" and row.output_shape == (16, 64)
    assert row.param_count == 64 and with_scale.param_count - without.param_count == 64  # one weight per feature
    assert row.forward_flops == 8 * 16 * 64  # batch 8 x 16 x 64 elements, one multiply each
    assert row.output_bytes == 8 * 16 * 64 * 4  # fp32
    # autograd keeps the scale's input (the fc output, fp32) for dL/dw, which the fc output alone was not
    assert fc.kept_bytes - plain_fc.kept_bytes == 8 * 16 * 64 * 4
    assert with_scale.memory.peak_bytes > without.memory.peak_bytes
    reloaded = graph_from_json(graph_to_json(graph))
    assert reloaded.nodes[-1].op == ChannelScale(init=0.5)
