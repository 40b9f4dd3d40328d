"""One answer: a PyTorch FILE.py opened in the app is estimated the way `advisor estimate FILE.py` does it
(simulated), the method is on screen, and editing the imported graph switches to analytic, visibly."""

from __future__ import annotations

from pathlib import Path

from pytestqt.qtbot import QtBot
from tests_ui_support import advisor_json

from advisor.core.tracker import CATEGORIES
from advisor.ui.main_window import QtMainWindow

SMALL_CNN = """
import torch
from torch import nn


def build_model():
    return nn.Sequential(
        nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(inplace=True),
        nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(inplace=True),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10))


def example_inputs(batch_size):
    return (torch.randn(batch_size, 3, 32, 32),)
"""


def command_line(path: Path) -> dict[str, object]:
    return advisor_json(
        "estimate", str(path), "--batch", "128", "--precision", "amp_bf16", "--optimizer", "sgd_momentum"
    )


def test_opened_file_is_simulated_like_the_command_line(qtbot: QtBot, window: QtMainWindow, tmp_path: Path) -> None:
    path = tmp_path / "small_cnn.py"
    path.write_text(SMALL_CNN)
    window.state.set_choice(batch=128, precision="amp_bf16", optimizer="sgd_momentum")
    window.open_file(str(path))
    qtbot.waitUntil(lambda: window.state.draft.source == str(path), timeout=60000)
    qtbot.waitUntil(
        lambda: window.state.result is not None and window.state.result.method == "simulated", timeout=120000
    )
    result = window.state.result
    assert result is not None and not result.pending
    assert "simulated" in window.breakdown.method.text()
    cli = command_line(path)
    assert cli["method"] == "simulated"
    memory = cli["memory"]
    assert isinstance(memory, dict)
    m = result.estimate.memory
    assert (m.peak_bytes, m.required_bytes) == (memory["peak_bytes"], memory["required_bytes"])
    assert m.at_peak.as_dict() == {name: memory[name] for name in CATEGORIES}
    # the headline shows that same peak, and the ranking is given this very estimate, not a second one
    assert window.breakdown.summary.values["Peak allocated"].text() == f"<b>{_mib(m.peak_bytes)}</b>"

    # an edit to the imported graph: analytic, and the screen says why
    rows = window.state.draft.rows
    window.model_panel.builder.select(len(rows) - 1)
    editor = window.model_panel.builder.form.editors["out_features"]
    editor.setText("20")
    editor.textEdited.emit("20")
    qtbot.waitUntil(lambda: window.state.result is not None and window.state.result.method == "analytic", timeout=10000)
    assert "edited" in window.breakdown.method.text()
    window.state.draft.undo.undo()  # back to the file as written: simulated again (cached, no new run)
    qtbot.waitUntil(
        lambda: window.state.result is not None and window.state.result.method == "simulated", timeout=10000
    )


def _mib(count: int) -> str:
    from advisor.core.units import format_bytes

    return format_bytes(count)
