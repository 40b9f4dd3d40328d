"""The workload's "More options" (advisor/ui/workload_options.py): every option the command line has and the
app lacked (issue 25) is set through its widget, gives the command line's Workload and the same bytes, shows
only where its flag applies, is counted on the fold while folded away, and is remembered between runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import QCheckBox, QComboBox, QDoubleSpinBox, QSpinBox, QWidget
from pytestqt.qtbot import QtBot
from tests_ui_support import workload_panel

from advisor.cli import build_parser, main
from advisor.commands.estimate import workload_from
from advisor.core.vocabulary import Offload
from advisor.ui.settings import restore_state, save_state
from advisor.ui.state import AppState
from advisor.ui.verdict import verdict_text
from advisor.ui.workload_panel import QtWorkloadControls

LLAMA = "llama-3.2-1b"


@pytest.fixture
def panel(qtbot: QtBot) -> QtWorkloadControls:
    return workload_panel(qtbot, LLAMA)


def widget(panel: QtWorkloadControls, field: str) -> QWidget:
    return next(row.widget for row in panel.more.rows if row.field == field)


def set_widget(panel: QtWorkloadControls, field: str, value: object) -> None:
    """As a user would: the entry picked, the box ticked, the number entered."""
    box = panel.optimizer if field == "optimizer" else widget(panel, field)  # the optimizer is a main row
    if isinstance(box, QComboBox):
        index = box.findData(value)
        assert index >= 0, (field, value)
        box.setCurrentIndex(index)
    elif isinstance(box, QCheckBox):
        box.setChecked(bool(value))
    elif isinstance(box, QSpinBox | QDoubleSpinBox):
        box.setValue(value)  # type: ignore[arg-type]


# (the workload controls' values, the More options widgets' values, the command line that says the same)
CASES = {
    "qlora training": (
        {"mode": "train", "precision": "amp_bf16", "batch": 4, "finetune": "qlora"},
        {
            "optimizer": "paged_adamw8bit",
            "attention": "eager",
            "loss": "fused",
            "offload": "optimizer",
            "drops_logits": True,
            "transformers_version": "4.45",
            "expandable_segments": True,
            "tf32": True,
        },
        "--mode train --precision amp_bf16 --batch 4 --seq-len 512 --finetune qlora --optimizer paged_adamw8bit "
        "--attention eager --loss fused --offload optimizer --drop-logits --transformers-version 4.45 "
        "--expandable-segments --tf32",
    ),
    "vllm": (
        {"mode": "generate", "precision": "bf16", "batch": 8, "runtime": "vllm"},
        {"gpu_memory_utilization": 0.8, "max_num_seqs": 64, "max_num_batched_tokens": 4096, "vllm_version": "0.16"},
        "--mode generate --precision bf16 --batch 8 --runtime vllm --gpu-memory-utilization 0.8 --max-num-seqs 64 "
        "--max-num-batched-tokens 4096 --vllm-version 0.16",
    ),
    "llama.cpp partial offload": (
        {"mode": "generate", "batch": 1, "weights": "q4_k_m"},
        {"gpu_layers": 8},
        "--mode generate --batch 1 --weights q4_k_m --gpu-layers 8",
    ),
}


@pytest.mark.parametrize("case", CASES)
def test_each_option_gives_the_command_lines_workload_and_bytes(
    panel: QtWorkloadControls, capsys: pytest.CaptureFixture[str], case: str
) -> None:
    choice, options, flags = CASES[case]
    state = panel.state
    state.set_choice(**choice)
    panel.more.toggle.setChecked(True)
    for field, value in options.items():
        set_widget(panel, field, value)
    state.recompute()
    assert state.error == "" and state.result is not None
    words = ["estimate", f"zoo:{LLAMA}", *flags.split()]
    cli_workload = workload_from(build_parser(words).parse_args(words))
    assert state.result.estimate.workload == cli_workload
    assert main(["estimate", f"zoo:{LLAMA}", "--json", *flags.split()]) == 0
    cli = json.loads(capsys.readouterr().out)["memory"]
    memory = state.result.estimate.memory
    assert (memory.peak_bytes, memory.required_bytes) == (cli["peak_bytes"], cli["required_bytes"])
    verdict = verdict_text(state.result, None)  # the setting that decides the need is said, folded or not
    said = {"qlora training": "optimizer state in system RAM", "vllm": "vllm at 0.80 of the card"}
    assert said.get(case, "llama.cpp with 8 layers on the GPU") in verdict, verdict


def test_an_option_changes_the_answer_it_should(panel: QtWorkloadControls) -> None:
    """Not only the same as the command line: the option reaches the estimate. Offloading the optimizer state
    of a full fine-tune takes Adam's two fp32 states per parameter off the card."""
    state = panel.state
    state.set_choice(mode="train", precision="fp32", batch=1, seq_len=128)
    state.recompute()
    assert state.result is not None
    on_card = state.result.estimate.memory.at_peak.optimizer_state
    panel.more.toggle.setChecked(True)
    set_widget(panel, "offload", "optimizer")
    state.recompute()
    assert state.result is not None and state.result.estimate.workload.offload == Offload.OPTIMIZER
    params = state.result.estimate.param_count
    assert on_card >= 2 * 4 * params  # Adam: exp_avg and exp_avg_sq, fp32
    assert state.result.estimate.memory.at_peak.optimizer_state < on_card - 2 * 4 * params // 2


def shown(panel: QtWorkloadControls) -> set[str]:
    return {row.field for row in panel.more.rows if not row.widget.isHidden()}


def test_rows_show_where_their_flag_applies(panel: QtWorkloadControls) -> None:
    state = panel.state
    assert shown(panel) == set()  # folded
    panel.more.toggle.setChecked(True)
    everywhere = {"attention", "tf32", "expandable_segments"}
    assert shown(panel) == everywhere | {"loss", "offload", "drops_logits", "transformers_version"}
    state.set_choice(mode="generate")
    assert shown(panel) == everywhere  # transformers runs the generation: no engine rows
    state.set_choice(runtime="vllm")
    assert shown(panel) == everywhere | {
        "gpu_memory_utilization",
        "max_num_seqs",
        "max_num_batched_tokens",
        "vllm_version",
    }
    state.set_choice(runtime=None, weights="q4_k_m")  # GGUF blocks: llama.cpp, followed from the weights
    assert shown(panel) == everywhere | {"gpu_layers"}
    panel.more.toggle.setChecked(False)
    assert shown(panel) == set()


def test_the_fold_counts_what_is_set_out_of_sight(panel: QtWorkloadControls) -> None:
    state = panel.state
    toggle = panel.more.toggle
    assert toggle.text() == "More options" and toggle.arrowType() == Qt.ArrowType.RightArrow
    state.set_choice(offload="optimizer", drops_logits=True)
    assert toggle.text() == "More options (2 set)"
    state.set_choice(mode="infer")  # the training loop's options no longer apply, nor reach the workload
    assert toggle.text() == "More options"
    assert state.choice.workload().offload is None and not state.choice.workload().drops_logits
    state.set_choice(mode="train")
    assert toggle.text() == "More options (2 set)"  # kept, as the language-model fields are


def test_typing_a_number_estimates_once(panel: QtWorkloadControls, qtbot: QtBot) -> None:
    """Typing 4096 into a box is one change on Enter, not four estimates of 4, 40, 409 and 4096."""
    state = panel.state
    state.set_choice(mode="generate", runtime="vllm")
    panel.more.toggle.setChecked(True)
    box = widget(panel, "max_num_batched_tokens")
    assert isinstance(box, QSpinBox)
    box.setFocus()
    box.selectAll()
    qtbot.keyClicks(box, "4096")
    assert state.choice.max_num_batched_tokens == 8192  # not yet
    qtbot.keyClick(box, Qt.Key.Key_Return)
    assert state.choice.max_num_batched_tokens == 4096


def test_all_gpu_layers_is_llama_cpps_default(panel: QtWorkloadControls) -> None:
    state = panel.state
    state.set_choice(mode="generate", weights="q4_k_m")
    panel.more.toggle.setChecked(True)
    box = widget(panel, "gpu_layers")
    assert isinstance(box, QSpinBox) and box.text() == "all" and state.choice.gpu_layers is None
    box.setValue(0)  # -ngl 0: every repeating layer in system RAM
    assert state.choice.gpu_layers == 0 and state.choice.workload().gpu_layers == 0
    box.setValue(box.minimum())
    assert state.choice.gpu_layers is None


def test_the_options_are_remembered(panel: QtWorkloadControls, qtbot: QtBot, tmp_path: Path) -> None:
    state = panel.state
    state.set_choice(mode="generate", runtime="vllm", gpu_memory_utilization=0.75, max_num_seqs=32, offload="params")
    settings = QSettings(str(tmp_path / "advisor.ini"), QSettings.Format.IniFormat)
    save_state(settings, state)
    restored = AppState()
    restore_state(settings, restored)
    assert restored.choice == state.choice
    again = QtWorkloadControls(restored)
    qtbot.addWidget(again)
    share, seqs = widget(again, "gpu_memory_utilization"), widget(again, "max_num_seqs")
    assert isinstance(share, QDoubleSpinBox) and isinstance(seqs, QSpinBox)
    assert (share.value(), seqs.value()) == (0.75, 32)
    offload = widget(again, "offload")
    assert isinstance(offload, QComboBox) and offload.currentData() == "params"
    assert restored.choice.workload().gpu_memory_utilization == 0.75
