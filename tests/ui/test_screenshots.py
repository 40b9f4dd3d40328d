"""Screenshots of the main window in English and Chinese, written to $ADVISOR_SCREENSHOTS (or tmp).

Look at them: clipped text, boxes instead of Chinese glyphs and empty charts show up here first.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import numpy as np
from PySide6.QtGui import QImage
from pytestqt.qtbot import QtBot

from advisor.ui.main_window import QtMainWindow


def shoot(qtbot: QtBot, window: QtMainWindow, path: Path) -> QImage:
    window.resize(1440, 900)
    window.tabs.setCurrentIndex(0)
    window.breakdown.views.setCurrentIndex(3)  # memory vs batch, with the recommended cards' lines
    qtbot.wait(50)
    image = window.grab().toImage()
    assert image.save(str(path))
    return image


def chart_pixels(window: QtMainWindow) -> int:
    """Non-white pixels of the chart on screen: an empty chart has almost none."""
    canvas = window.breakdown.batch_chart.canvas
    assert canvas is not None
    canvas.draw()
    rgba = np.asarray(canvas.buffer_rgba())
    return int((rgba[..., :3].sum(axis=2) < 600).sum())


def test_screenshots_in_both_languages(
    qtbot: QtBot, window: QtMainWindow, tmp_path: Path, wait_ranked: Callable[[QtBot, QtMainWindow], None]
) -> None:
    folder = Path(os.environ.get("ADVISOR_SCREENSHOTS", tmp_path))
    folder.mkdir(parents=True, exist_ok=True)
    wait_ranked(qtbot, window)
    shoot(qtbot, window, folder / "advisor_en.png")
    assert chart_pixels(window) > 2000
    window.switch_language("zh_CN")
    wait_ranked(qtbot, window)
    shoot(qtbot, window, folder / "advisor_zh.png")
    assert window.tabs.tabText(1) == "推荐"
    assert "Noto Sans CJK SC" in window.font().families()
    assert chart_pixels(window) > 2000
    window.tabs.setCurrentIndex(1)
    window.recommendations.table.selectRow(0)
    qtbot.wait(50)
    assert window.grab().toImage().save(str(folder / "advisor_zh_recommendations.png"))
    for name in ("advisor_en.png", "advisor_zh.png", "advisor_zh_recommendations.png"):
        assert (folder / name).stat().st_size > 20_000
