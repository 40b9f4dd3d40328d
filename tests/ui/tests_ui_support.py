"""Helpers shared by the UI tests (driving the builder like a user does)."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QMessageBox
from pytestqt.qtbot import QtBot

from advisor.core import zoo
from advisor.ui import draft_edits
from advisor.ui.main_window import QtMainWindow
from advisor.ui.state import AppState
from advisor.ui.workload_panel import QtWorkloadControls


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
    # the catalog opens on a worker thread; a loaded 2-core machine once took over 10 s (the suite beside 5 agents)
    qtbot.waitUntil(lambda: window.catalog.catalog is not None, timeout=30000)
    return window


def advisor_json(*args: str) -> dict[str, object]:
    """`advisor ARGS --json` through the command line's entry point in this process: the app's figures are
    compared with these. Nothing is shared between the two but the code (no estimate is cached; the command
    reads the window's catalog copy through ADVISOR_CATALOG); a subprocess spent 3-5 s a call importing
    torch again."""
    from advisor.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main([*args, "--json"]) == 0
    answer: dict[str, object] = json.loads(out.getvalue())
    return answer


def workload_panel(qtbot: QtBot, zoo_name: str) -> QtWorkloadControls:
    """The workload controls alone, on a fresh AppState holding the zoo model `zoo_name`."""
    state = AppState()
    controls = QtWorkloadControls(state)
    qtbot.addWidget(controls)
    draft_edits.load_graph_into(state.draft, zoo.build(zoo_name, state.choice.seq_len), f"zoo:{zoo_name}")
    return controls
