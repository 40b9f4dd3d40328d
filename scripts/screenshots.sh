#!/usr/bin/env bash
# A PNG of every tab (and every view of the breakdown) in English and Chinese, offscreen, for review, then
# the flows of a new user's walk (issue 27): LLM generation and QLoRA, a PyTorch file with opaque ops, Cancel
# mid-simulation, money with a job size, and a restart that must bring back what was on screen:
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
from PySide6.QtTest import QTest
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


TINY_RES = """
import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv, self.bn = nn.Conv2d(c, c, 3, padding=1), nn.BatchNorm2d(c)
        self.scale = nn.Parameter(torch.ones(1, c, 1, 1))

    def forward(self, x):
        return torch.relu(self.bn(self.conv(x)) * self.scale.expand(x.shape[0], -1, x.shape[2], x.shape[3]) + x)


class TinyRes(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem, self.blocks, self.fc = nn.Conv2d(3, 8, 3, padding=1), nn.Sequential(Block(8), Block(8)), nn.Linear(8, 10)

    def forward(self, x):
        return self.fc(self.blocks(self.stem(x)).repeat(1, 2, 1, 1).mean((2, 3))[:, :8])


def build_model():
    return TinyRes()


def example_inputs(batch_size):
    return (torch.randn(batch_size, 3, 16, 16),)
"""


def settle(window, condition=lambda: True, rounds: int = 2400, idle: bool = True) -> None:
    """Events until `condition` holds and (with `idle`) no task runs; the debounce timers need events too."""
    for _ in range(rounds):
        app.processEvents()
        waiting = window.state._timer.isActive() or window.recommendations._timer.isActive()  # debounces
        if condition() and not waiting and (not idle or not window.runner._live):
            app.processEvents()
            return
        QTest.qWait(25)  # a real event loop: processEvents alone let a debounce timer wait for good


def shoot(window, name: str, condition=lambda: True, tab: int = 0, idle: bool = True) -> None:
    window.tabs.setCurrentIndex(tab)
    settle(window, condition, idle=idle)
    window.grab().save(str(folder / name))
    print(folder / name)


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
    # QLoRA fine-tuning of the same family: the fine-tuning rows in view at 1280x720
    window.model_panel.load_zoo("llama-3.2-1b")
    window.state.set_choice(mode="train", precision="amp_bf16", batch=4, finetune="qlora", lora_rank=16)
    shoot(window, f"{language}_qlora.png", lambda: window.state.model.shown_ranking() is not None, tab=0)
    # "More options" unfolded: the training loop's rows (8-bit AdamW, optimizer offload), then vLLM's engine rows
    window.workload.more.toggle.setChecked(True)
    window.state.set_choice(optimizer="adamw8bit", offload="optimizer")
    window.left_scroll.ensureWidgetVisible(window.workload.more.toggle)
    shoot(window, f"{language}_more_train.png", lambda: window.state.model.shown_ranking() is not None, tab=0)
    window.state.set_choice(mode="generate", precision="bf16", batch=8, finetune="full", runtime="vllm",
                            gpu_memory_utilization=0.8, offload=None, optimizer="adam")
    window.left_scroll.ensureWidgetVisible(window.workload.more.rows[-1].widget)
    shoot(window, f"{language}_more_vllm.png", lambda: window.state.model.shown_ranking() is not None, tab=1)
    window.workload.more.toggle.setChecked(False)
    window.state.set_choice(runtime=None, gpu_memory_utilization=0.9)
    # a PyTorch file whose forward expands and repeats tensors (opaque ops), simulated as the command line does
    model_file = scratch / "tinyres.py"
    model_file.write_text(TINY_RES)
    window.state.set_choice(mode="train", precision="fp32", batch=32, finetune="full")
    window.open_file(str(model_file))
    shoot(window, f"{language}_opaque_file.png", lambda: window.state.result is not None
          and window.state.result.method == "simulated" and window.state.model.shown_ranking() is not None, tab=0)
    # Cancel mid-simulation: nothing may still say "simulating..." or "ranking the cards..."
    window.state.set_choice(batch=48)
    settle(window, lambda: window.runner.running("simulate"), rounds=100, idle=False)
    window.task_bar.cancel_button.click()
    shoot(window, f"{language}_cancelled.png", tab=0, idle=False)
    # money with a job size: rent per GPU-hour, 10^8 samples, the time-against-cost chart
    window.recommendations.money.basis.setCurrentIndex(window.recommendations.money.basis.findData("rent"))
    window.recommendations.money.samples.setValue(1e8)
    shoot(window, f"{language}_job_size.png", lambda: window.state.model.shown_ranking() is not None
          and not window.recommendations.job_chart.isHidden(), tab=1)
    window.close()
    window.runner.wait()
    # a restart: the same settings bring back the model, the workload and the money filters
    window = make_window(settings, str(catalog), reader)
    window.show()
    window.resize(width, height)
    shoot(window, f"{language}_restarted.png", lambda: window.catalog.catalog is not None
          and window.state.model.shown_ranking() is not None, tab=1)
    window.close()
    window.runner.wait()
PY
