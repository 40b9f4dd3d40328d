#!/usr/bin/env bash
# A PNG of every tab (and every view of the breakdown) in English and Chinese, offscreen, for review:
#   bash scripts/screenshots.sh [FOLDER] [WIDTHxHEIGHT]      (default: screenshots/, 1280x720)
# Uses a temporary copy of the bundled catalog and temporary settings, never the user's.
set -euo pipefail
cd "$(dirname "$0")/.."
folder="${1:-screenshots}"
size="${2:-1280x720}"
mkdir -p "$folder"
python="${PYTHON:-.venv/bin/python}"
[ -x "$python" ] || python=python3
QT_QPA_PLATFORM=offscreen PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" "$python" - "$folder" "$size" <<'PY'
import sys
import tempfile
from pathlib import Path

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication

from advisor.catalog import open_catalog
from advisor.telemetry.fake import FakeReader
from advisor.ui.app import make_window

folder, (width, height) = Path(sys.argv[1]), map(int, sys.argv[2].split("x"))
app = QApplication(["screenshots"])
scratch = Path(tempfile.mkdtemp())
catalog = scratch / "catalog.sqlite3"
open_catalog(catalog).close()
fixtures = Path("tests/telemetry/fixtures")
reader = FakeReader(fixtures / "nvml_device.json", fixtures / "nvml_timeseries.csv")


def settle(window, condition=lambda: True, rounds: int = 400) -> None:
    for _ in range(rounds):
        app.processEvents()
        if condition() and not window.runner._live:
            return
        window.runner.wait(25)


for language in ("en", "zh_CN"):
    settings = QSettings(str(scratch / f"{language}.ini"), QSettings.Format.IniFormat)
    settings.setValue("language", language)
    window = make_window(settings, str(catalog), reader)
    window.show()
    window.resize(width, height)
    settle(window, lambda: window.catalog.catalog is not None)
    window.recommendations.refresh()
    settle(window, lambda: bool(window.recommendations.entries))
    for tab in range(window.tabs.count()):
        window.tabs.setCurrentIndex(tab)
        views = range(window.breakdown.views.count()) if tab == 0 else [None]
        for view in views:
            if view is not None:
                window.breakdown.views.setCurrentIndex(view)
            settle(window)
            name = f"{language}_{tab + 1}" + (f"_{view + 1}" if view is not None else "") + ".png"
            window.grab().save(str(folder / name))
            print(folder / name)
    # a language model generating: the KV cache in the breakdown, prefill and decode speed, split plans
    window.model_panel.load_zoo("llama-3.1-70b")
    window.workload.mode.setCurrentIndex(window.workload.mode.findData("generate"))
    window.workload.precision.setCurrentIndex(window.workload.precision.findData("bf16"))
    window.workload.batch.setValue(1)
    window.state.recompute()
    window.recommendations.refresh()
    settle(window, lambda: bool(window.recommendations.entries)
           and window.recommendations.entries[0].prefill_tokens_per_s is not None)
    for tab, view in ((0, 0), (1, None)):
        window.tabs.setCurrentIndex(tab)
        if view is not None:
            window.breakdown.views.setCurrentIndex(view)
        if tab == 1:
            window.recommendations.table.selectRow(0)
        else:  # the language-model controls sit at the bottom of the workload box
            window.left_scroll.ensureWidgetVisible(window.workload.llm.lora_targets)
        settle(window)
        name = f"{language}_generate_{tab + 1}.png"
        window.grab().save(str(folder / name))
        print(folder / name)
    window.close()
    window.runner.wait()
PY
