"""Language models in the app: Generation mode with its prompt, new tokens, weight and KV-cache controls sets
the workload the command line sets; fine-tuning controls apply only in training; the recommendations gain
prefill and decode columns and explain a split plan; make-it-fit names the language-model changes."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, Qt
from pytestqt.qtbot import QtBot

from advisor.cli import main
from advisor.core import zoo
from advisor.core.units import format_bytes
from advisor.importers.spec_graph import load_graph
from advisor.ui import draft_edits
from advisor.ui.i18n import set_language, tr
from advisor.ui.main_window import QtMainWindow
from advisor.ui.make_it_fit import QtMakeItFit
from advisor.ui.settings import restore_state, save_state
from advisor.ui.state import AppState
from advisor.ui.summary import summary_items
from advisor.ui.verdict import verdict_text
from advisor.ui.workload_panel import QtWorkloadControls

Ranked = Callable[[QtBot, QtMainWindow], None]
LLAMA = "llama-3.1-8b"
# Llama 3.1 8B (config.json): 32 layers, 8 KV heads of 128 dims; K and V in bf16 (2 bytes)
KV_BYTES_PER_TOKEN = 32 * 8 * 128 * 2 * 2  # = 131,072


def choose(box: object, value: object) -> None:
    """Picks a combo-box entry by its value, as a user's click does (signals fire)."""
    index = box.findData(value)  # type: ignore[attr-defined]
    assert index >= 0, value
    box.setCurrentIndex(index)  # type: ignore[attr-defined]


def cli_json(*args: str, capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    assert main(["estimate", f"zoo:{LLAMA}", "--json", *args]) == 0
    return json.loads(capsys.readouterr().out)  # type: ignore[no-any-return]


@pytest.fixture
def controls(qtbot: QtBot) -> tuple[AppState, QtWorkloadControls]:
    state = AppState()
    panel = QtWorkloadControls(state)
    qtbot.addWidget(panel)
    draft_edits.load_graph_into(state.draft, zoo.build(LLAMA, state.choice.seq_len), f"zoo:{LLAMA}")
    return state, panel


def test_generation_sets_the_workload_the_command_line_does(
    controls: tuple[AppState, QtWorkloadControls], capsys: pytest.CaptureFixture[str]
) -> None:
    state, panel = controls
    choose(panel.mode, "generate")
    choose(panel.precision, "bf16")
    panel.batch.setValue(2)
    panel.llm.prompt_len.setValue(1000)
    panel.llm.new_tokens.setValue(200)
    choose(panel.llm.weights, "bf16")
    state.recompute()
    assert state.error == "" and state.result is not None
    app = state.result.estimate
    cli = cli_json(
        "--mode",
        "generate",
        "--precision",
        "bf16",
        "--batch",
        "2",
        "--prompt-len",
        "1000",
        "--new-tokens",
        "200",
        "--weights",
        "bf16",
        capsys=capsys,
    )
    memory = cli["memory"]
    assert isinstance(memory, dict)
    assert app.memory.peak_bytes == memory["peak_bytes"]
    assert app.memory.required_bytes == memory["required_bytes"]
    # the prefill sets the peak, when transformers' DynamicCache holds the 2 x 1000 prompt tokens
    assert app.memory.at_peak.kv_cache == memory["kv_cache_bytes"] == KV_BYTES_PER_TOKEN * 2 * 1000
    # the KV cache shows in the headline numbers and in the verdict line
    shown = {label: value for label, value, _how in summary_items(app)}
    assert shown["KV cache"] == format_bytes(KV_BYTES_PER_TOKEN * 2 * 1000)  # 262,144,000 B = 250 MiB
    assert f"KV cache {format_bytes(262_144_000)}" in verdict_text(state.result, None)
    assert app.memory.at_peak.kv_cache > 0 and "kv_cache" in app.memory.at_peak.as_dict()


def test_an_fp8_cache_for_gguf_weights_is_one_line_not_a_result(controls: tuple[AppState, QtWorkloadControls]) -> None:
    state, panel = controls
    choose(panel.mode, "generate")
    choose(panel.llm.weights, "q4_k_m")  # GGUF weights run in llama.cpp, which has no fp8 cache type
    choose(panel.llm.kv_cache, "fp8")
    state.recompute()
    assert state.error.startswith("kv_cache: llama.cpp has no fp8 cache type")


def test_quantized_weights_and_an_8_bit_cache_match_too(
    controls: tuple[AppState, QtWorkloadControls], capsys: pytest.CaptureFixture[str]
) -> None:
    state, panel = controls
    choose(panel.mode, "generate")
    choose(panel.llm.weights, "q4_k_m")
    choose(panel.llm.kv_cache, "int8")  # llama.cpp has no fp8 cache (core/workload.py refuses it)
    state.recompute()
    assert state.result is not None
    memory = cli_json("--mode", "generate", "--weights", "q4_k_m", "--kv-cache", "int8", capsys=capsys)["memory"]
    assert isinstance(memory, dict)
    assert state.result.estimate.memory.required_bytes == memory["required_bytes"]
    # GGUF weights run in llama.cpp, whose 8-bit cache is q8_0 (34 bytes per 32 elements) for the whole
    # context, n_ctx = 32 sequences x (512 + 128): 32 x 8 x 128 x 2 x 34/32 x 20,480 = 1,426,063,360 B
    assert state.result.estimate.memory.at_peak.kv_cache == KV_BYTES_PER_TOKEN // 2 * 34 // 32 * 640 * 32


def test_controls_that_do_not_apply_are_disabled_and_say_why(controls: tuple[AppState, QtWorkloadControls]) -> None:
    state, panel = controls
    assert panel.llm.finetune.isEnabled() and not panel.llm.weights.isEnabled()
    assert "generation only" in panel.llm.weights.toolTip()
    assert not panel.llm.lora_rank.isEnabled() and "LoRA" in panel.llm.lora_rank.toolTip()
    choose(panel.llm.finetune, "qlora")
    assert panel.llm.lora_rank.isEnabled() and panel.llm.lora_targets.isEnabled()
    choose(panel.mode, "generate")
    assert panel.llm.prompt_len.isEnabled() and panel.llm.kv_cache.isEnabled()
    assert not panel.llm.finetune.isEnabled() and "training only" in panel.llm.finetune.toolTip()
    assert not panel.seq_len.isEnabled() and "prompt length" in panel.seq_len.toolTip()
    assert not panel.optimizer.isEnabled() and "training only" in panel.optimizer.toolTip()
    assert not panel.inplace.isEnabled() and "configuration" in panel.inplace.toolTip()
    # QLoRA is kept for when training comes back, but generation runs the base model
    assert state.choice.finetune == "qlora" and state.choice.workload().finetune == "full"


def test_generation_is_offered_for_language_models_only(controls: tuple[AppState, QtWorkloadControls]) -> None:
    state, panel = controls
    entry = panel.mode.model().item(panel.mode.findData("generate"))  # type: ignore[attr-defined]
    assert entry.isEnabled()
    draft_edits.load_graph_into(state.draft, zoo.build("resnet18"), "zoo:resnet18")
    assert not entry.isEnabled() and "language models only" in entry.toolTip()


def test_lora_in_the_app_is_the_command_lines_lora(
    controls: tuple[AppState, QtWorkloadControls], capsys: pytest.CaptureFixture[str]
) -> None:
    state, panel = controls
    choose(panel.precision, "amp_bf16")
    panel.batch.setValue(1)
    choose(panel.llm.finetune, "lora")
    panel.llm.lora_rank.setValue(8)
    panel.llm.lora_targets.setText("q_proj, v_proj")
    panel.llm.lora_targets.editingFinished.emit()
    state.recompute()
    assert state.result is not None and state.error == ""
    cli = cli_json(
        "--precision",
        "amp_bf16",
        "--batch",
        "1",
        "--seq-len",
        "512",
        "--finetune",
        "lora",
        "--lora-rank",
        "8",
        "--lora-targets",
        "q_proj,v_proj",
        capsys=capsys,
    )
    memory = cli["memory"]
    assert isinstance(memory, dict)
    assert state.result.estimate.memory.required_bytes == memory["required_bytes"]
    assert state.result.estimate.workload.lora_targets == ("q_proj", "v_proj")
    panel.llm.lora_targets.setText("wq")  # not a projection name: one line naming the field, no crash
    panel.llm.lora_targets.editingFinished.emit()
    state.recompute()
    assert state.error.startswith("lora_targets: unknown wq")


def test_qlora_checkpoints_by_default_as_the_command_line_does(
    controls: tuple[AppState, QtWorkloadControls], capsys: pytest.CaptureFixture[str]
) -> None:
    """QLoRA with the checkbox untouched runs PEFT's recipe (checkpointing on), as `--finetune qlora` without
    --checkpointing does; unticking it is the command line's --no-checkpointing."""
    state, panel = controls
    panel.batch.setValue(1)
    choose(panel.llm.finetune, "qlora")
    assert panel.checkpointing.isChecked()  # the recipe default is shown ticked
    state.recompute()
    assert state.error == "" and state.result is not None
    args = ("--batch", "1", "--seq-len", "512", "--finetune", "qlora")
    cli = cli_json(*args, capsys=capsys)
    assert isinstance(cli["config"], dict) and cli["config"]["checkpointing"] is True
    memory = cli["memory"]
    assert isinstance(memory, dict) and state.result.estimate.memory.required_bytes == memory["required_bytes"]
    panel.checkpointing.setChecked(False)
    state.recompute()
    assert state.result is not None and not state.result.estimate.workload.checkpointing
    memory = cli_json(*args, "--no-checkpointing", capsys=capsys)["memory"]
    assert isinstance(memory, dict) and state.result.estimate.memory.required_bytes == memory["required_bytes"]
    choose(panel.llm.finetune, "full")  # an explicit choice stays the user's
    assert not panel.checkpointing.isChecked()


def test_the_adapter_dtype_is_the_command_lines_adapter_dtype(
    qtbot: QtBot, tmp_path: Path, controls: tuple[AppState, QtWorkloadControls], capsys: pytest.CaptureFixture[str]
) -> None:
    """--adapter-dtype in the app: a combo box beside the LoRA rank, greyed without adapters, that sets the same
    Workload field; on a pure-bf16 base the adapters (and their gradients and Adam state) halve."""
    state, panel = controls
    assert not panel.llm.adapter_dtype.isEnabled() and "LoRA" in panel.llm.adapter_dtype.toolTip()
    choose(panel.precision, "bf16")
    panel.batch.setValue(1)
    choose(panel.llm.finetune, "lora")
    assert panel.llm.adapter_dtype.isEnabled() and "--adapter-dtype" in panel.llm.adapter_dtype.toolTip()
    state.recompute()
    assert state.result is not None
    fp32_bytes = state.result.estimate.memory.required_bytes
    choose(panel.llm.adapter_dtype, "base")
    state.recompute()
    assert state.error == "" and state.result is not None
    assert state.result.estimate.workload.adapter_dtype == "base"
    args = ("--precision", "bf16", "--batch", "1", "--seq-len", "512", "--finetune", "lora")
    cli = cli_json(*args, "--adapter-dtype", "base", capsys=capsys)
    memory = cli["memory"]
    assert isinstance(memory, dict)
    assert state.result.estimate.memory.required_bytes == memory["required_bytes"]
    assert state.result.estimate.memory.required_bytes < fp32_bytes  # bf16 adapters: 2 bytes, not 4
    settings = QSettings(str(tmp_path / "advisor.ini"), QSettings.Format.IniFormat)
    save_state(settings, state)
    again = AppState()
    assert restore_state(settings, again) and again.choice.adapter_dtype == "base"
    again_panel = QtWorkloadControls(again)
    qtbot.addWidget(again_panel)
    assert again_panel.llm.adapter_dtype.currentData() == "base"  # the restored choice is shown
    set_language("zh_CN")
    try:
        zh_state = AppState()
        chinese = QtWorkloadControls(zh_state)
        qtbot.addWidget(chinese)
        assert chinese.llm.adapter_dtype.itemText(1) == "同基座"
    finally:
        set_language("en")


def test_the_language_model_choices_persist(
    qtbot: QtBot, tmp_path: Path, controls: tuple[AppState, QtWorkloadControls]
) -> None:
    state, panel = controls
    choose(panel.mode, "generate")
    panel.llm.prompt_len.setValue(4096)
    choose(panel.llm.kv_cache, "int8")
    settings = QSettings(str(tmp_path / "advisor.ini"), QSettings.Format.IniFormat)
    save_state(settings, state)
    again = AppState()
    assert restore_state(settings, again)
    assert again.choice == state.choice
    # the restored zoo model is still a language model: generation works without reloading it
    again.recompute()
    assert again.error == "" and again.result is not None and again.result.estimate.generation is not None


def test_a_safetensors_file_generates_as_on_the_command_line(
    qtbot: QtBot, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.importers.model_files import write_gpt2_safetensors

    path = str(write_gpt2_safetensors(tmp_path))
    state = AppState()
    panel = QtWorkloadControls(state)
    qtbot.addWidget(panel)
    state.set_choice(seq_len=32)  # the tiny GPT-2 has 32 learned positions
    draft_edits.load_graph_into(state.draft, load_graph(path, state.choice.seq_len), path)  # as File > Open
    state.mark_imported(path)
    assert panel.mode.model().item(panel.mode.findData("generate")).isEnabled()  # type: ignore[attr-defined]
    choose(panel.mode, "generate")
    panel.llm.prompt_len.setValue(16)
    panel.llm.new_tokens.setValue(8)
    state.recompute()
    assert state.error == "" and state.result is not None
    assert main(["estimate", path, "--mode", "generate", "--prompt-len", "16", "--new-tokens", "8", "--json"]) == 0
    memory = json.loads(capsys.readouterr().out)["memory"]
    assert state.result.estimate.memory.required_bytes == memory["required_bytes"]
    assert state.result.estimate.memory.at_peak.kv_cache == memory["kv_cache_bytes"] > 0


def test_an_edit_makes_the_decoder_description_stale(controls: tuple[AppState, QtWorkloadControls]) -> None:
    state, _panel = controls
    assert state.draft.result.graph is not None and state.draft.result.graph.decoder is not None
    draft_edits.remove_layer(state.draft, len(state.draft.rows) - 1)
    assert state.draft.result.graph is not None and state.draft.result.graph.decoder is None
    state.draft.undo.undo()  # back to the loaded rows: generation applies again
    assert state.draft.result.graph is not None and state.draft.result.graph.decoder is not None


def test_generation_columns_and_a_split_plan_explained(
    qtbot: QtBot, window: QtMainWindow, wait_ranked: Ranked, capsys: pytest.CaptureFixture[str]
) -> None:
    window.model_panel.load_zoo("llama-3.1-70b")
    panel, controls = window.recommendations, window.workload
    choose(controls.mode, "generate")
    choose(controls.precision, "bf16")
    controls.batch.setValue(1)
    window.state.recompute()
    panel.all_configs.setChecked(True)
    wait_ranked(qtbot, window)
    headers = [
        panel.proxy.headerData(c, Qt.Orientation.Horizontal).replace("\n", " ")  # two lines in generation
        for c in range(panel.proxy.columnCount())
    ]
    assert "Prefill tok/s" in headers and "Decode tok/s" in headers and "Throughput" not in headers
    header = panel.table.horizontalHeader()
    assert not header.isSectionHidden(headers.index("Prefill tok/s")) and not header.isSectionHidden(
        headers.index("Plan")
    )
    entries = panel.model.entries
    split = next(e for e in entries if e.plan == "tensor_parallel" and e.fits and e.count == 2)
    assert split.prefill_tokens_per_s and split.decode_tokens_per_s == split.throughput
    row = entries.index(split)
    assert panel.model.index(row, headers.index("Plan")).data() == "tensor parallel"
    assert panel.model.index(row, headers.index("Prefill tok/s")).data() == f"{split.prefill_tokens_per_s:,.0f}"
    # the same speeds as `advisor recommend` on the same catalog (ADVISOR_CATALOG is the window's copy)
    assert (
        main(["recommend", "zoo:llama-3.1-70b", "--mode", "generate", "--precision", "bf16", "--batch", "1", "--json"])
        == 0
    )
    cli = next(
        e
        for e in json.loads(capsys.readouterr().out)["recommendations"]
        if (e["card"], e["count"], e["plan"]) == (split.card, 2, "tensor_parallel")
    )
    assert (cli["prefill_tokens_per_s"], cli["decode_tokens_per_s"]) == (
        split.prefill_tokens_per_s,
        split.decode_tokens_per_s,
    )
    panel.table.selectRow(panel.proxy.mapFromSource(panel.model.index(row, 0)).row())
    estimate = window.state.result.estimate  # type: ignore[union-attr]
    # tensor parallel on 2 cards: each holds half of the 70B model's bf16 weights and of its KV cache
    half_weights = format_bytes(estimate.memory.at_peak.weights // 2)
    assert (
        f"Each card holds {half_weights} of the {format_bytes(estimate.memory.at_peak.weights)}" in panel.detail.text()
    )
    assert "Fits only because weights and KV cache are split over 2 cards." in panel.detail.text()


def test_make_it_fit_names_the_language_model_changes(qtbot: QtBot, window: QtMainWindow) -> None:
    window.model_panel.load_zoo(LLAMA)
    choose(window.workload.mode, "generate")
    choose(window.workload.precision, "bf16")
    window.state.recompute()
    dialog = QtMakeItFit(window.state, window.catalog, window.runner, "RTX 3060 12GB", window)
    qtbot.addWidget(dialog)
    qtbot.waitUntil(lambda: dialog.report is not None, timeout=20000)
    labels = [dialog.table.item(r, 0).text() for r in range(dialog.table.rowCount()) if dialog.table.item(r, 0)]
    assert "8-bit weights" in labels and "fp8 KV cache" in labels
    assert not any(label.startswith(("weights_", "kv_")) for label in labels)  # no raw keys
    dialog.table.selectRow(labels.index("fp8 KV cache"))  # every row, a heading too, has a first cell
    assert dialog.apply_button.isEnabled()
    dialog.apply_selected()  # Apply sets the workload controls to the change
    assert window.state.choice.kv_cache == "fp8" and window.workload.llm.kv_cache.currentData() == "fp8"
    set_language("zh_CN")
    try:
        assert tr("8-bit weights") == "8 位权重" and tr("layer split") == "按层拆分"
    finally:
        set_language("en")


def test_an_unpicked_precision_follows_the_command_lines_recipe_default(
    controls: tuple[AppState, QtWorkloadControls], capsys: pytest.CaptureFixture[str]
) -> None:
    """Generation from int4 (GPTQ/AWQ) weights computes in bf16 when no precision is given, on the command line
    and now in the app too (it kept fp32 there); a precision the user picks wins in both."""
    state, panel = controls
    choose(panel.mode, "generate")
    choose(panel.llm.weights, "int4")
    state.recompute()
    assert state.error == "" and state.result is not None
    cli = cli_json("--mode", "generate", "--weights", "int4", capsys=capsys)
    assert state.result.estimate.workload.precision == cli["config"]["precision"] == "bf16"  # type: ignore[index]
    assert panel.precision.currentData() == "bf16"  # the box shows what runs
    assert state.result.estimate.memory.required_bytes == cli["memory"]["required_bytes"]  # type: ignore[index]
    assert any("bf16 by default" in note for note in state.result.estimate.assumptions)
    choose(panel.precision, "fp32")
    state.recompute()
    assert state.result.estimate.workload.precision == "fp32"
    assert not any("by default" in note for note in state.result.estimate.assumptions)


def test_the_fp8_cache_entry_is_greyed_where_llama_cpp_runs(controls: tuple[AppState, QtWorkloadControls]) -> None:
    _state, panel = controls
    choose(panel.mode, "generate")
    fp8 = panel.llm.kv_cache.model().item(panel.llm.kv_cache.findData("fp8"))  # type: ignore[attr-defined]
    assert fp8.isEnabled()  # transformers has an fp8 cache
    choose(panel.llm.weights, "q4_k_m")  # GGUF weights run in llama.cpp
    assert not fp8.isEnabled() and "q8_0" in fp8.toolTip()
    choose(panel.llm.runtime, "vllm")  # an explicit runtime with an fp8 cache
    assert fp8.isEnabled()


def test_mxfp4_is_greyed_for_a_model_without_experts(controls: tuple[AppState, QtWorkloadControls]) -> None:
    """MXFP4 stores a mixture-of-experts model's experts alone: on Llama 3.1 8B the entry is greyed with the
    reason; on gpt-oss-20b, whose checkpoint ships so, it is offered."""
    state, panel = controls
    choose(panel.mode, "generate")
    mxfp4 = panel.llm.weights.model().item(panel.llm.weights.findData("mxfp4"))  # type: ignore[attr-defined]
    assert not mxfp4.isEnabled() and "has none" in mxfp4.toolTip()
    draft_edits.load_graph_into(state.draft, zoo.build("gpt-oss-20b", state.choice.seq_len), "zoo:gpt-oss-20b")
    panel.refresh()
    assert mxfp4.isEnabled() and not mxfp4.toolTip()
