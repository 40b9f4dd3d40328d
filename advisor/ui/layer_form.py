"""The form for one layer of the draft: its name, inputs and the fields of its kind.

Text is parsed as it is typed and written to the draft at once (one undo step per field), so shapes are
re-inferred on every key; text that is not a valid value is kept as typed and the layer shows the error.
"""

from __future__ import annotations

import re
import typing
from typing import Any

from PySide6.QtWidgets import QCheckBox, QComboBox, QFormLayout, QLabel, QLineEdit, QWidget

from advisor.ui import draft_edits
from advisor.ui.draft import NetworkDraft
from advisor.ui.field_labels import field_label, field_tip
from advisor.ui.i18n import tr
from advisor.ui.i18n.errors import error_text


def parse_text(text: str) -> Any:
    """ "3, 224, 224" or "3x224x224" -> [3, 224, 224]; "7" -> 7; "0.5" -> 0.5; anything else stays text."""
    stripped = text.strip()
    if re.fullmatch(r"-?\d+", stripped):
        return int(stripped)
    if re.fullmatch(r"-?\d+(\.\d*)?([eE]-?\d+)?", stripped):
        return float(stripped)
    parts = [p for p in re.split(r"[\s,x×]+", stripped) if p]
    if len(parts) > 1 and all(re.fullmatch(r"-?\d+", p) for p in parts):
        return [int(p) for p in parts]
    if stripped in ("[]", "()"):
        return []
    return text


def show_value(value: Any) -> str:
    if isinstance(value, list | tuple):
        return ", ".join(str(v) for v in value)
    return "" if value is None else str(value)


# Fields whose 0 stands for another value: a pool's stride 0 is PyTorch's stride=None, the kernel size
# (nn.MaxPool2d docs). The form shows such a 0 as an empty field saying so, not as "stride 0".
ZERO_MEANS = {"stride": "same as the kernel"}


def shown_field(name: str, value: Any) -> str:
    return "" if name in ZERO_MEANS and value == 0 else show_value(value)


class QtLayerForm(QWidget):
    def __init__(self, draft: NetworkDraft, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.draft = draft
        self.row = -1
        self._typing = ""
        self.form = QFormLayout(self)
        self.editors: dict[str, QWidget] = {}
        self.error = QLabel()
        self.error.setWordWrap(True)
        self.error.setStyleSheet("color: #B00020")
        draft.changed.connect(self.refresh)

    def show_row(self, row: int) -> None:
        self.row = row
        self._rebuild()

    def _rebuild(self) -> None:
        while self.form.rowCount():
            self.form.removeRow(0)
        self.editors = {}
        self.error = QLabel()
        self.error.setWordWrap(True)
        self.error.setStyleSheet("color: #B00020")
        if not 0 <= self.row < len(self.draft.rows):
            self.form.addRow(QLabel(tr("Select a layer to edit its fields.")))
            return
        layer = self.draft.rows[self.row]
        self.form.addRow(QLabel(tr("Layer kind: {kind}").format(kind=layer.kind)))
        self._text_editor("name", tr("Name"), layer.name, self._rename)
        self._text_editor(
            "inputs",
            tr("Inputs"),
            ", ".join(layer.inputs),
            self._set_inputs,
            tr("Names of earlier layers, comma separated; empty: the layer above"),
        )
        for name, kind, default in self.draft.fields_of(self.row):
            self._field_editor(name, kind, layer.params.get(name, default))
        self.form.addRow(self.error)
        self.refresh()

    def _text_editor(self, key: str, label: str, value: str, on_edit: Any, tip: str = "") -> QLineEdit:
        editor = QLineEdit(value)
        editor.setToolTip(tip)
        editor.textEdited.connect(lambda text: self._typed(key, on_edit, text))
        self.editors[key] = editor
        self.form.addRow(label, editor)
        return editor

    def _field_editor(self, name: str, kind: Any, value: Any) -> None:
        if kind is bool:
            box = QCheckBox()
            box.setChecked(bool(value))
            box.toggled.connect(lambda on, n=name: draft_edits.set_field(self.draft, self.row, n, on))
            box.setToolTip(field_tip(name))
            self.editors[name] = box
            self.form.addRow(field_label(name), box)
        elif typing.get_origin(kind) is typing.Literal:
            combo = QComboBox()
            combo.addItems([str(a) for a in typing.get_args(kind)])
            combo.setCurrentText(str(value))
            combo.currentTextChanged.connect(lambda text, n=name: draft_edits.set_field(self.draft, self.row, n, text))
            combo.setToolTip(field_tip(name))
            self.editors[name] = combo
            self.form.addRow(field_label(name), combo)
        else:
            editor = self._text_editor(
                name,
                field_label(name),
                shown_field(name, value),
                lambda text, n=name, k=kind: self._set_text_field(n, k, text),
                field_tip(name),
            )
            if name in ZERO_MEANS and value == 0:
                editor.setPlaceholderText(tr(ZERO_MEANS[name]))

    def _typed(self, key: str, on_edit: Any, text: str) -> None:
        """The edit's own refresh leaves this field's text alone (the user is typing in it); any other change,
        such as Undo from the menu while the field still has focus, or a new model, rewrites it."""
        self._typing = key
        try:
            on_edit(text)
        finally:
            self._typing = ""

    def _set_text_field(self, name: str, kind: Any, text: str) -> None:
        value = parse_text(text)
        if name in ZERO_MEANS and not text.strip():
            value = None  # the field's default, 0: the meaning its placeholder says
        elif kind is str:
            value = text
        elif typing.get_origin(kind) is tuple and isinstance(value, int):
            value = [value]  # a one-element shape typed as "784"
        draft_edits.set_field(self.draft, self.row, name, value)

    def _rename(self, text: str) -> None:
        draft_edits.rename_layer(self.draft, self.row, text.strip())

    def _set_inputs(self, text: str) -> None:
        names = tuple(n.strip() for n in text.split(",") if n.strip())
        draft_edits.set_inputs(self.draft, self.row, names)

    def refresh(self) -> None:
        """After any change (typing, undo): show the error, and values the user is not typing in."""
        if not 0 <= self.row < len(self.draft.rows):
            if self.editors:
                self._rebuild()
            return
        layer = self.draft.rows[self.row]
        if set(self.editors) - {"name", "inputs"} != {n for n, _k, _d in self.draft.fields_of(self.row)}:
            self._rebuild()  # undo changed the layer's kind under us
            return
        self.error.setText(error_text(self.draft.result.errors.get(self.row, "")))
        values = {"name": layer.name, "inputs": ", ".join(layer.inputs)}
        for name, _kind, default in self.draft.fields_of(self.row):
            values[name] = layer.params.get(name, default)
        for key, editor in self.editors.items():
            if key == self._typing:
                continue
            if isinstance(editor, QLineEdit):
                text = values[key] if key in ("name", "inputs") else shown_field(key, values[key])
                if editor.text() != text:
                    editor.setText(str(text))
            elif isinstance(editor, QCheckBox):
                editor.blockSignals(True)
                editor.setChecked(bool(values[key]))
                editor.blockSignals(False)
            elif isinstance(editor, QComboBox):
                editor.blockSignals(True)
                editor.setCurrentText(str(values[key]))
                editor.blockSignals(False)
