"""The network being built, with undo: the rows (advisor/appstate/draft.py) are rebuilt into a Graph after every
edit, and edits go through a QUndoStack."""

from __future__ import annotations

import dataclasses
from typing import Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QUndoCommand, QUndoStack

from advisor.appstate.draft import DraftCheck, LayerDraft, check, default_params, drafts_from_graph
from advisor.core.llm.decoder import DecoderSpec
from advisor.importers.netfile import op_fields

__all__ = ["DraftCheck", "LayerDraft", "NetworkDraft", "check", "default_params", "drafts_from_graph"]

# A loaded language model's decoder description and the rows it describes: generation, quantized weights
# and adapters need it, and it holds only while the rows are the loaded ones (an edit makes it stale).
Described = tuple[DecoderSpec, tuple["LayerDraft", ...]] | None


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

    def _apply(
        self, rows: list[LayerDraft], name: str | None = None, source: str | None = None, described: Described = None
    ) -> None:
        self.rows = list(rows)
        self.name = self.name if name is None else name
        self.source = self.source if source is None else source
        self.described = described
        self.result = check(self.name, self.task, self.rows)
        if self.result.graph is not None and described is not None and described[1] == tuple(self.rows):
            self.result = dataclasses.replace(
                self.result, graph=dataclasses.replace(self.result.graph, decoder=described[0])
            )
        self.changed.emit()

    def push(
        self,
        text: str,
        rows: list[LayerDraft],
        merge_key: object = None,
        *,
        name: str | None = None,
        source: str | None = None,
        decoder: DecoderSpec | None = None,
    ) -> None:
        """`decoder`: the rows are a language model it describes (a load); other edits keep the current one."""
        described = (decoder, tuple(rows)) if decoder is not None else None if source is not None else self.described
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

    def __init__(
        self,
        draft: NetworkDraft,
        text: str,
        rows: list[LayerDraft],
        merge_key: object,
        name: str | None,
        source: str | None,
        described: Described,
    ) -> None:
        super().__init__(text)
        self.draft = draft
        self.before = (list(draft.rows), draft.name, draft.source, draft.described)
        self.after = (
            list(rows),
            name if name is not None else draft.name,
            source if source is not None else draft.source,
            described,
        )
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
