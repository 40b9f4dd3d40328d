"""Helpers shared by the UI tests (driving the builder like a user does)."""

from __future__ import annotations

from PySide6.QtWidgets import QMessageBox

from advisor.ui.main_window import QtMainWindow


def build_mlp(window: QtMainWindow) -> None:
    """New network; input 784 -> linear 256 -> relu, through the builder's own controls."""
    window.new_network()
    builder = window.model_panel.builder
    builder.kind.setCurrentText("input")
    builder.add()
    shape = builder.form.editors["shape"]
    shape.setText("784")
    shape.textEdited.emit("784")
    builder.form.editors["name"].textEdited.emit("x")
    builder.kind.setCurrentText("linear")
    builder.add()
    builder.form.editors["out_features"].textEdited.emit("256")
    builder.kind.setCurrentText("relu")
    builder.add()


def dialogs(window: QtMainWindow) -> list[QMessageBox]:
    return [b for b in window.findChildren(QMessageBox) if b.objectName() == "error_dialog" and b.isVisible()]
