"""The widgets mirror the state model: a file with opaque ops is estimated like the command line does it, a
failed edit leaves figures marked as an earlier network's, Cancel leaves nothing saying it is still working,
and a language switch adds no connections."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import SIGNAL, QCoreApplication, QEvent
from pytestqt.qtbot import QtBot
from tests_ui_support import advisor_json

from advisor.ui.main_window import QtMainWindow

Ranked = Callable[[QtBot, QtMainWindow], None]

# a residual CNN whose forward expands a parameter and repeats a tensor: opaque_view and opaque ops, the kinds
# the hand-kept OP_TYPES tuple left out (issue 27's first blocker)
TINY_RES = """
import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, padding=1)
        self.bn = nn.BatchNorm2d(c)
        self.scale = nn.Parameter(torch.ones(1, c, 1, 1))

    def forward(self, x):
        s = self.scale.expand(x.shape[0], -1, x.shape[2], x.shape[3])
        return torch.relu(self.bn(self.conv(x)) * s + x)


class TinyRes(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, padding=1)
        self.blocks = nn.Sequential(Block(8), Block(8))
        self.fc = nn.Linear(8, 10)

    def forward(self, x):
        y = self.blocks(self.stem(x)).repeat(1, 2, 1, 1)
        return self.fc(y.mean((2, 3))[:, :8])


def build_model():
    return TinyRes()


def example_inputs(batch_size):
    return (torch.randn(batch_size, 3, 16, 16),)
"""


def _recommend_json(path: Path) -> dict[str, object]:
    return advisor_json(
        "recommend", str(path), "--batch", "32", "--precision", "fp32", "--optimizer", "adam", "--max-gpus", "2"
    )


def test_a_file_with_opaque_ops_gets_the_command_lines_figures(
    qtbot: QtBot, window: QtMainWindow, tmp_path: Path
) -> None:
    path = tmp_path / "tinyres.py"
    path.write_text(TINY_RES)
    window.recommendations.max_gpus.setCurrentIndex(1)  # up to 2 cards, as --max-gpus 2
    window.state.set_choice(batch=32, precision="fp32", optimizer="adam")
    window.open_file(str(path))
    qtbot.waitUntil(lambda: window.state.draft.source == str(path), timeout=60000)
    qtbot.waitUntil(
        lambda: window.state.result is not None and window.state.result.method == "simulated", timeout=120000
    )
    assert window.state.error == "" and not window.state.result.stale
    kinds = {row.kind for row in window.state.draft.rows}
    assert {"opaque", "opaque_view"} <= kinds
    qtbot.waitUntil(lambda: window.state.model.shown_ranking() is not None, timeout=60000)
    ranking = window.state.model.shown_ranking()
    assert ranking is not None and ranking.job is window.state.result.job
    assert "Out of date" not in window.verdict.text() and "ranking the cards" not in window.verdict.text()

    cli = _recommend_json(path)
    assert cli["model"] == window.state.result.estimate.model
    rows = cli["recommendations"]
    assert isinstance(rows, list)
    by_key = {(r["card"], r["count"], r["plan"]): r for r in rows}
    app = {(e.card, e.count, e.plan): e for e in ranking.entries}
    shared = sorted(set(by_key) & set(app))
    assert len(shared) >= 20  # every card of the catalog at 1 and 2 cards, on both sides
    assert [(k, app[k].required_bytes) for k in shared] == [(k, by_key[k]["required_bytes"]) for k in shared]
    steps_app = [(k, round(app[k].step_time_s, 12)) for k in shared]
    steps_cli = [(k, round(float(by_key[k]["step_time_s"]), 12)) for k in shared]
    assert steps_app == steps_cli  # the simulated path's speed (issue 24's fix) reaches the app's ranking


def test_a_failed_edit_marks_the_figures_as_an_earlier_networks(qtbot: QtBot, window: QtMainWindow) -> None:
    qtbot.waitUntil(lambda: window.state.result is not None, timeout=10000)
    model = window.state.result.estimate.model
    builder = window.model_panel.builder
    conv = next(i for i, row in enumerate(window.state.draft.rows) if row.kind == "conv")
    builder.select(conv)
    editor = builder.form.editors["out_channels"]
    editor.setText("0")
    editor.textEdited.emit("0")
    qtbot.waitUntil(lambda: window.state.result is not None and window.state.result.stale, timeout=10000)
    assert "Out of date" in window.verdict.text() and model in window.verdict.text()
    assert "best value" not in window.verdict.text()  # no answer for a network that has none
    assert not window.recommendations.table.isEnabled()
    window.state.draft.undo.undo()
    qtbot.waitUntil(lambda: window.state.result is not None and not window.state.result.stale, timeout=10000)
    assert "Out of date" not in window.verdict.text()


def test_cancel_leaves_no_ranking_the_cards(qtbot: QtBot, window: QtMainWindow, wait_ranked: Ranked) -> None:
    wait_ranked(qtbot, window)
    window.state.set_choice(batch=48)
    model = window.state.model
    qtbot.waitUntil(
        lambda: (
            window.runner.running("recommend")
            and model.result is not None  # batch 48's ranking
            and model.result.estimate.workload.batch == 48
            and model.ranking_job is model.result.job
        ),
        timeout=10000,
    )
    assert "ranking the cards" in window.verdict.text()
    window.task_bar.cancel_button.click()
    assert "ranking the cards" not in window.verdict.text()
    assert "ranking cancelled" in window.verdict.text()
    assert window.task_bar.isHidden()
    # the same estimate redrawn (a stale mark, the end of a cancelled simulation) asks nothing new: Cancel
    # does not start the ranking it stopped
    window.recommendations._refresh_if_asked()
    assert not window.runner.running("recommend") and "ranking cancelled" in window.verdict.text()
    window.recommendations.objective.setCurrentIndex(window.recommendations.objective.findData("fastest"))
    qtbot.waitUntil(
        lambda: "fastest" in window.verdict.text() and "cancelled" not in window.verdict.text(), timeout=20000
    )  # a new question is ranked


def test_cancel_mid_simulation_leaves_no_simulating(qtbot: QtBot, window: QtMainWindow, tmp_path: Path) -> None:
    path = tmp_path / "tinyres.py"
    path.write_text(TINY_RES)
    window.open_file(str(path))
    qtbot.waitUntil(lambda: window.state.draft.source == str(path), timeout=60000)
    qtbot.waitUntil(lambda: window.state.result is not None and window.state.result.pending, timeout=10000)
    assert "simulating" in window.breakdown.method.text()
    window.task_bar.cancel_button.click()
    assert window.state.result is not None and not window.state.result.pending
    assert "simulating" not in window.breakdown.method.text()
    assert "cancelled" in window.breakdown.method.text()


def _receivers(window: QtMainWindow) -> tuple[int, int]:
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)  # the replaced widgets are gone
    return (window.state.receivers(SIGNAL("result_changed()")), window.state.receivers(SIGNAL("ranking_changed()")))


def test_language_switches_add_no_connections(qtbot: QtBot, window: QtMainWindow) -> None:
    before = _receivers(window)
    for code in ("zh_CN", "en", "zh_CN", "en"):
        window.switch_language(code)
    assert _receivers(window) == before
    assert window.state.model.result_changed.receivers == 1  # the Qt relay, connected once
