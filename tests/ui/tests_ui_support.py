"""Helpers shared by the UI tests (driving the builder like a user does)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QMessageBox
from pytestqt.qtbot import QtBot

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


TELEMETRY_FIXTURES = Path(__file__).resolve().parents[1] / "telemetry" / "fixtures"


def open_window(qtbot: QtBot, settings: QSettings, catalog_file: Path) -> QtMainWindow:
    """The real window, with the Live GPUs tab fed by a replay of a real H200's NVML readings."""
    from advisor.telemetry.fake import FakeReader
    from advisor.ui.app import make_window

    reader = FakeReader(TELEMETRY_FIXTURES / "nvml_device.json", TELEMETRY_FIXTURES / "nvml_timeseries.csv")
    window = make_window(settings, str(catalog_file), reader)
    assert isinstance(window, QtMainWindow)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitUntil(lambda: window.catalog.catalog is not None, timeout=10000)
    return window


def advisor_json(*args: str) -> dict[str, object]:
    """`advisor ARGS --json` in a subprocess, as a user runs it: the app's figures are compared with these."""
    out = subprocess.run(
        [sys.executable, "-m", "advisor", *args, "--json"],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
        env=dict(os.environ, QT_QPA_PLATFORM="offscreen"),
    )
    answer: dict[str, object] = json.loads(out.stdout)
    return answer
