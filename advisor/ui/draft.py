"""The network being built: a list of layer drafts, rebuilt into a Graph after every edit.

Edits go through a QUndoStack (undo/redo); the draft keeps the user's text even where it does not make a
valid layer, so an error is shown on the offending layer and nothing typed is lost.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QUndoCommand, QUndoStack

from advisor.core.errors import AdvisorError
from advisor.core.graph import Graph, GraphBuilder
from advisor.core.llm.decoder import DecoderSpec
from advisor.importers.netfile import make_op, op_fields

# A loaded language model's decoder description and the rows it describes: generation, quantized weights
# and adapters need it, and it holds only while the rows are the loaded ones (an edit makes it stale).
Described = tuple[DecoderSpec, tuple["LayerDraft", ...]] | None


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
        "input": {"shape": [3, 32, 32]}, "linear": {"out_features": 128}, "conv": {"out_channels": 16}}
    return dict(starters.get(kind, {}))


def drafts_from_graph(graph: Graph) -> list[LayerDraft]:
    rows = []
    for index, node in enumerate(graph.nodes):
        params = {f.name: getattr(node.op, f.name) for f in dataclasses.fields(node.op)
                  if getattr(node.op, f.name) != f.default}
        params = {k: list(v) if isinstance(v, tuple) else v for k, v in params.items()}
        inputs = tuple(graph.nodes[i].name for i in node.inputs)
        if inputs == ((graph.nodes[index - 1].name,) if index else ()):
            inputs = ()
        rows.append(LayerDraft(node.name, node.op.kind, params, inputs, node.block,
                               reads_nothing=index > 0 and not node.inputs))
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
            inputs = [index_of[n] for n in row.inputs] or ([row_index - 1] if row_index and not row.reads_nothing
                                                            else [])
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


class NetworkDraft(QObject):
    changed = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.name = "network"
        self.task = "classification"
        self.source = ""  # the SPEC it came from (zoo:NAME, a file); "" for a network built here
        self.rows: list[LayerDraft] = []
        self.described: Described = None
        self.undo = QUndoStack(self)
        self.result = check(self.name, self.task, self.rows)

    def _apply(self, rows: list[LayerDraft], name: str | None = None, source: str | None = None,
               described: Described = None) -> None:
        self.rows = list(rows)
        self.name = self.name if name is None else name
        self.source = self.source if source is None else source
        self.described = described
        self.result = check(self.name, self.task, self.rows)
        if self.result.graph is not None and described is not None and described[1] == tuple(self.rows):
            self.result = dataclasses.replace(self.result,
                                              graph=dataclasses.replace(self.result.graph, decoder=described[0]))
        self.changed.emit()

    def push(self, text: str, rows: list[LayerDraft], merge_key: object = None, *,
             name: str | None = None, source: str | None = None, decoder: DecoderSpec | None = None) -> None:
        """`decoder`: the rows are a language model it describes (a load); other edits keep the current one."""
        described = (decoder, tuple(rows)) if decoder is not None else None if source is not None \
            else self.described
        self.undo.push(_Change(self, text, rows, merge_key, name, source, described))

    def unique_name(self, kind: str) -> str:
        taken = {r.name for r in self.rows}
        n = 1
        while f"{kind}{n}" in taken:
            n += 1
        return f"{kind}{n}"

    def fields_of(self, row: int) -> tuple[tuple[str, Any, Any], ...]:
        return op_fields(self.rows[row].kind)


class _Change(QUndoCommand):
    """Replaces the whole row list (drafts are small records); typing in one field merges into one step."""

    def __init__(self, draft: NetworkDraft, text: str, rows: list[LayerDraft], merge_key: object,
                 name: str | None, source: str | None, described: Described) -> None:
        super().__init__(text)
        self.draft = draft
        self.before = (list(draft.rows), draft.name, draft.source, draft.described)
        self.after = (list(rows), name if name is not None else draft.name,
                      source if source is not None else draft.source, described)
        self.merge_key = merge_key

    def redo(self) -> None:
        self.draft._apply(*self.after)

    def undo(self) -> None:
        self.draft._apply(*self.before)

    def id(self) -> int:
        return 1 if self.merge_key is not None else -1

    def mergeWith(self, other: QUndoCommand) -> bool:
        if not isinstance(other, _Change) or other.merge_key != self.merge_key:
            return False
        self.after = other.after
        return True
