"""The network being built, as plain records: a list of layer drafts and what checking them gives.

The draft keeps the user's text even where it does not make a valid layer, so an error is shown on the
offending layer and nothing typed is lost. Every kind the op registry holds (advisor/core/ops/registry.py)
can be a row; the Qt undo stack around these rows is advisor/ui/draft.py.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from advisor.core.errors import AdvisorError
from advisor.core.graph import Graph, GraphBuilder
from advisor.importers.netfile import make_op


@dataclass(frozen=True)
class LayerDraft:
    name: str
    kind: str
    params: dict[str, Any] = field(default_factory=dict)  # JSON-style values (lists for tuples)
    inputs: tuple[str, ...] = ()  # names of earlier layers; empty: the layer before
    block: str = ""
    # reads no earlier layer (an op on a parameter alone, as `self.scale.expand(...)` imports): empty inputs
    # would otherwise mean the layer before
    reads_nothing: bool = False


@dataclass(frozen=True)
class DraftCheck:
    graph: Graph | None
    shapes: tuple[tuple[int, ...] | None, ...]  # per row; None where not inferred
    errors: dict[int, str]  # row -> message naming the layer and the field


def default_params(kind: str) -> dict[str, Any]:
    """Starting values so a freshly added layer is valid where it can be (Linear needs out_features...)."""
    starters: dict[str, dict[str, Any]] = {
        "input": {"shape": [3, 32, 32]},
        "linear": {"out_features": 128},
        "conv": {"out_channels": 16},
    }
    return dict(starters.get(kind, {}))


def drafts_from_graph(graph: Graph) -> list[LayerDraft]:
    rows = []
    for index, node in enumerate(graph.nodes):
        params = {
            f.name: getattr(node.op, f.name)
            for f in dataclasses.fields(node.op)
            if getattr(node.op, f.name) != f.default
        }
        params = {k: list(v) if isinstance(v, tuple) else v for k, v in params.items()}
        inputs = tuple(graph.nodes[i].name for i in node.inputs)
        if inputs == ((graph.nodes[index - 1].name,) if index else ()):
            inputs = ()
        rows.append(
            LayerDraft(node.name, node.op.kind, params, inputs, node.block, reads_nothing=index > 0 and not node.inputs)
        )
    return rows


def check(name: str, task: str, rows: list[LayerDraft]) -> DraftCheck:
    """Builds what it can; the first bad layer stops inference (later shapes depend on it)."""
    builder = GraphBuilder(name or "network", task)
    index_of: dict[str, int] = {}
    shapes: list[tuple[int, ...] | None] = [None] * len(rows)
    for row_index, row in enumerate(rows):
        try:
            missing = [n for n in row.inputs if n not in index_of]
            if missing:
                raise AdvisorError(f"{row.name}: input {missing[0]!r} is not a layer above this one")
            if row.name in index_of:
                raise AdvisorError(f"{row.name}: another layer has this name")
            inputs = [index_of[n] for n in row.inputs] or (
                [row_index - 1] if row_index and not row.reads_nothing else []
            )
            op = make_op(row.kind, row.params, row.name)
            if row.block:
                with builder.block(row.block):
                    index_of[row.name] = builder.add(op, inputs, row.name)
            else:
                index_of[row.name] = builder.add(op, inputs, row.name)
        except (AdvisorError, TypeError) as error:
            return DraftCheck(None, tuple(shapes), {row_index: str(error)})
        shapes[row_index] = builder.spec(index_of[row.name]).shape
    if not rows:
        return DraftCheck(None, (), {})
    return DraftCheck(builder.build(), tuple(shapes), {})
