"""The Runtime box of the generation controls: it sets the Workload's runtime as `--runtime` does, applies to
generation only, is remembered between runs, and the verdict names the runtime and the compute dtype."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from pytestqt.qtbot import QtBot
from tests_ui_support import workload_panel

from advisor.cli import main
from advisor.core.workload import Runtime
from advisor.ui.settings import restore_state, save_state
from advisor.ui.state import AppState
from advisor.ui.verdict import verdict_text
from advisor.ui.workload_panel import QtWorkloadControls

LLAMA = "llama-3.1-8b"


@pytest.fixture
def panel(qtbot: QtBot) -> QtWorkloadControls:
    return workload_panel(qtbot, LLAMA)


def choose(box: object, value: object) -> None:
    index = box.findData(value)  # type: ignore[attr-defined]
    assert index >= 0, value
    box.setCurrentIndex(index)  # type: ignore[attr-defined]


def test_the_runtime_box_sets_what_the_command_line_sets(
    panel: QtWorkloadControls, capsys: pytest.CaptureFixture[str]
) -> None:
    state = panel.state
    choose(panel.mode, "generate")
    choose(panel.precision, "bf16")
    panel.batch.setValue(1)
    choose(panel.llm.runtime, "vllm")
    assert state.choice.runtime == Runtime.VLLM
    state.recompute()
    assert state.error == "" and state.result is not None
    memory = state.result.estimate.memory
    assert (
        main(
            [
                "estimate",
                f"zoo:{LLAMA}",
                "--json",
                "--mode",
                "generate",
                "--precision",
                "bf16",
                "--batch",
                "1",
                "--runtime",
                "vllm",
            ]
        )
        == 0
    )
    cli = json.loads(capsys.readouterr().out)
    assert memory.required_bytes == cli["memory"]["required_bytes"]
    # vLLM's blocks: 16 tokens x 32 layers x 8 KV heads x 128 x 2 (K, V) x 2 B = 2 MiB each; one sequence of
    # 512 + 128 = 640 tokens takes 40 of them: 83,886,080 B
    assert memory.at_peak.kv_cache == 40 * 16 * 32 * 8 * 128 * 2 * 2 == 83_886_080
    # what the engine holds but its CUDA graphs must fit in gpu_memory_utilization 0.9 of the card, the CUDA
    # context outside it (vLLM 0.17-0.19 capture the graphs after the share, core/llm/vllm_graphs.py: 32 layers
    # x 86 graphs x 199,000 B, the pool of 512 tokens x 3 x (4,096 + 14,336) x 2 B and FlashAttention 3's
    # accumulators of 32 splits x 256 sequences x 32 heads x 129 x 4 B): required = ceil((held - graphs) / 0.9)
    # - (726,466,560 B context + 77,594,624 B workspaces)
    graphs = 32 * 86 * 199_000 + 512 * 3 * (4096 + 14336) * 2 + 32 * 256 * 32 * 129 * 4
    assert memory.required_bytes == math.ceil((memory.peak_bytes - graphs) / 0.9) - 726_466_560 - 77_594_624
    assert "generation in vllm at 0.90 of the card, bf16" in verdict_text(state.result, None)


def test_as_the_weights_follows_them_and_training_ignores_the_box(panel: QtWorkloadControls) -> None:
    state = panel.state
    choose(panel.mode, "generate")
    choose(panel.llm.weights, "q4_k_m")
    assert state.choice.runtime is None and state.choice.workload().runtime_used == Runtime.LLAMA_CPP
    choose(panel.llm.runtime, "transformers")  # GGUF blocks run in llama.cpp: the error says so
    state.recompute()
    assert "llama.cpp format" in state.error
    choose(panel.mode, "train")
    assert not panel.llm.runtime.isEnabled() and "generation only" in panel.llm.runtime.toolTip()
    assert state.choice.runtime == Runtime.TRANSFORMERS and state.choice.workload().runtime is None


def test_the_runtime_is_remembered(panel: QtWorkloadControls, qtbot: QtBot, tmp_path: Path) -> None:
    state = panel.state
    choose(panel.mode, "generate")
    choose(panel.llm.runtime, "llama.cpp")
    settings = QSettings(str(tmp_path / "advisor.ini"), QSettings.Format.IniFormat)
    save_state(settings, state)
    restored = AppState()
    restore_state(settings, restored)
    assert restored.choice.runtime == Runtime.LLAMA_CPP
    again = QtWorkloadControls(restored)
    qtbot.addWidget(again)
    assert again.llm.runtime.currentData() == "llama.cpp"  # the box shows the restored choice


def test_enforce_eager_is_the_command_lines_and_for_vllm_only(
    panel: QtWorkloadControls, capsys: pytest.CaptureFixture[str]
) -> None:
    """vLLM's --enforce-eager beside the runtime box: greyed with the reason until vLLM runs, then the same
    Workload field as the command line's, without the CUDA-graph pool."""
    state = panel.state
    choose(panel.mode, "generate")
    choose(panel.precision, "bf16")
    panel.batch.setValue(1)
    eager = panel.llm.enforce_eager
    assert not eager.isEnabled() and "vllm" in eager.toolTip()
    choose(panel.llm.runtime, "vllm")
    assert eager.isEnabled() and "--enforce-eager" in eager.toolTip()
    state.recompute()
    assert state.result is not None
    with_graphs = state.result.estimate.memory
    eager.setChecked(True)
    state.recompute()
    assert state.error == "" and state.result is not None and state.result.estimate.workload.enforce_eager
    args = ["estimate", f"zoo:{LLAMA}", "--json", "--mode", "generate", "--precision", "bf16", "--batch", "1"]
    assert main([*args, "--runtime", "vllm", "--enforce-eager"]) == 0
    cli = json.loads(capsys.readouterr().out)["memory"]
    eager_memory = state.result.estimate.memory
    assert eager_memory.required_bytes == cli["required_bytes"] <= with_graphs.required_bytes
    # no graph pool on the card (vLLM 0.19 holds it after the share, so the 8B's required bytes, set by the
    # share, need not move)
    assert eager_memory.peak_bytes == cli["peak_bytes"] < with_graphs.peak_bytes
    choose(panel.llm.runtime, "transformers")  # kept in the choice, but transformers has no such option
    state.recompute()
    assert state.error == "" and state.result is not None and not state.result.estimate.workload.enforce_eager
    assert not eager.isEnabled() and state.choice.enforce_eager


def test_a_restored_choice_in_text_keeps_its_vllm_options(qtbot: QtBot, tmp_path: Path) -> None:
    """Settings hold text ("vllm", "llama.cpp"), not the enums: `is Runtime.VLLM` dropped a restored
    --enforce-eager and left llama.cpp's fp8 cache entry offered."""
    settings = QSettings(str(tmp_path / "advisor.ini"), QSettings.Format.IniFormat)
    settings.setValue("workload", json.dumps({"mode": "generate", "runtime": "vllm", "enforce_eager": True}))
    state = AppState()
    restore_state(settings, state)  # the workload only: no model was saved (so it returns False)
    assert state.choice.runtime == "vllm" and state.choice.enforce_eager
    assert state.choice.workload().enforce_eager
    state.set_choice(runtime="llama.cpp")
    panel = QtWorkloadControls(state)
    qtbot.addWidget(panel)
    fp8 = panel.llm.kv_cache.model().item(panel.llm.kv_cache.findData("fp8"))  # type: ignore[attr-defined]
    assert not fp8.isEnabled() and "llama.cpp" in fp8.toolTip()
