"""One op registry: every kind the builder lists, a network file names or an importer makes is in it, and
every registered kind goes through the app's draft (drafts_from_graph -> check) and the network file
(graph_to_json -> graph_from_json) unchanged. A kind added to core/ops without an example here fails
`test_every_registered_kind_has_an_example`, so a new kind cannot slip past the draft."""

from __future__ import annotations

import pytest

from advisor.core import zoo
from advisor.core.graph import Graph, GraphBuilder
from advisor.core.ops import (
    GRU,
    LSTM,
    OP_REGISTRY,
    ConvTranspose,
    CrossEntropy,
    FusedSDPA,
    GroupNorm,
    Input,
    Linear,
    Op,
    Opaque,
    OpaqueMatmul,
    OpaqueView,
    QuickGELU,
    Softmax,
)
from advisor.importers.netfile import graph_from_json, graph_to_json
from advisor.ui.draft import check, drafts_from_graph


def _chain(name: str, shape: tuple[int, ...], *ops: Op) -> Graph:
    b = GraphBuilder(name)
    x = b.add(Input(shape), [])
    for op in ops:
        x = b.add(op, [x])
    return b.build()


def _attention_on_parameters() -> Graph:
    """q, k, v made by ops that read no earlier layer (an expand of a parameter, as a traced model records
    `self.q.expand(...)`): the draft must keep them unconnected, not wire them to the layer before."""
    b = GraphBuilder("sdpa_net")
    b.add(Input((4, 8)), [])
    qkv = [b.add(Opaque(op_name=f"param{i}", shape=(2, 4, 8), input_count=0, keeps_inputs=False), []) for i in range(3)]
    view = b.add(OpaqueView(op_name="expand", shape=(2, 4, 8), input_count=1), [qkv[0]])
    scores = b.add(OpaqueMatmul(op_name="matmul", shape=(2, 4, 4), input_count=2, macs=2 * 4 * 4 * 8), [view, qkv[1]])
    b.add(Softmax(), [scores])
    b.add(FusedSDPA(), [view, qkv[1], qkv[2]])
    return b.build()


# kinds no zoo model uses, each in a small graph of its own
EXAMPLES: tuple[Graph, ...] = (
    _chain("deconv", (3, 8, 8), ConvTranspose(out_channels=4, kernel=2, stride=2), GroupNorm(groups=2)),
    _chain(
        "rnn",
        (10, 6),
        LSTM(hidden_size=5),
        GRU(hidden_size=4, bidirectional=True),
        Linear(3),
        QuickGELU(),
        CrossEntropy(),
    ),
    _attention_on_parameters(),
)


def _graphs() -> list[Graph]:
    built = [zoo.build(name, 64 if zoo.takes_seq_len(name) else None) for name in zoo.zoo_names()]
    return built + list(EXAMPLES)


def test_every_registered_kind_has_an_example() -> None:
    used = {node.op.kind for graph in _graphs() for node in graph.nodes}
    assert set(OP_REGISTRY) - used == set()
    # the opaque kinds and quick_gelu were missing from the hand-kept tuple the draft read (issue 27)
    assert {"opaque", "opaque_view", "opaque_matmul", "quick_gelu", "sdpa"} <= set(OP_REGISTRY)


@pytest.mark.parametrize("graph", EXAMPLES, ids=lambda g: g.name)
def test_example_kinds_go_through_the_draft_and_the_network_file(graph: Graph) -> None:
    drafted = check(graph.name, graph.task, drafts_from_graph(graph))
    assert drafted.errors == {}
    assert drafted.graph == graph
    assert graph_from_json(graph_to_json(graph)) == graph


def test_every_zoo_model_goes_through_the_draft() -> None:
    for graph in _graphs():
        drafted = check(graph.name, graph.task, drafts_from_graph(graph))
        assert (graph.name, drafted.errors) == (graph.name, {})
        assert drafted.graph == graph
