"""Real flows through the main window: build, estimate, save/open, bad input, settings, shortcuts."""

from __future__ import annotations

import json
from pathlib import Path

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QMessageBox
from pytestqt.qtbot import QtBot
from tests_ui_support import build_mlp, dialogs, open_window

from advisor.recommend.devices import PROCESS_OVERHEAD_BYTES
from advisor.ui.main_window import QtMainWindow


def peak(window: QtMainWindow) -> int:
    window.state.recompute()  # the debounce timer would do this 40 ms later
    assert window.state.result is not None
    return window.state.result.estimate.memory.peak_bytes


def test_build_three_layers_and_the_batch_moves_the_peak(qtbot: QtBot, window: QtMainWindow) -> None:
    build_mlp(window)
    draft = window.state.draft
    assert [r.kind for r in draft.rows] == ["input", "linear", "relu"]
    assert draft.result.shapes == ((784,), (256,), (256,))
    assert window.model_panel.builder.model.index(1, 2).data() == "256"
    window.workload.batch_slider.setValue(8)
    small = peak(window)
    window.workload.batch_slider.setValue(512)
    assert window.state.choice.batch == 512
    large = peak(window)
    assert large > small
    assert window.breakdown.summary.values["Peak allocated"].text() != ""
    assert "fixed" in window.breakdown.summary.values["Peak allocated"].toolTip()


def test_a_bad_field_marks_its_layer_and_undo_restores(qtbot: QtBot, window: QtMainWindow) -> None:
    build_mlp(window)
    builder = window.model_panel.builder
    builder.select(1)
    editor = builder.form.editors["out_features"]
    editor.setFocus()
    qtbot.keyClicks(editor, "x")  # "256x" is not a whole number
    draft = window.state.draft
    assert draft.rows[1].params["out_features"] == "256x"  # what was typed is kept
    assert "linear1: field out_features" in draft.result.errors[1]
    assert builder.model.index(1, 3).data() == draft.result.errors[1]
    assert draft.result.errors[1] in builder.form.error.text()
    draft.undo.undo()
    assert draft.rows[1].params["out_features"] == 256
    assert not draft.result.errors
    draft.undo.redo()
    assert draft.result.errors


def test_reorder_and_remove_are_undoable(qtbot: QtBot, window: QtMainWindow) -> None:
    build_mlp(window)
    builder, draft = window.model_panel.builder, window.state.draft
    builder.select(2)
    builder.move_selected(-1)
    assert [r.kind for r in draft.rows] == ["input", "relu", "linear"]
    builder.remove()
    assert len(draft.rows) == 2
    draft.undo.undo()
    draft.undo.undo()
    assert [r.kind for r in draft.rows] == ["input", "linear", "relu"]


def test_save_and_open_a_network_file(qtbot: QtBot, window: QtMainWindow, tmp_path: Path) -> None:
    build_mlp(window)
    path = tmp_path / "mlp.json"
    window.save_network(str(path))
    assert json.loads(path.read_text())["layers"][1]["params"] == {"out_features": 256}
    window.new_network()
    assert window.state.draft.rows == []
    window.open_file(str(path))
    qtbot.waitUntil(lambda: len(window.state.draft.rows) == 3, timeout=5000)
    assert window.state.draft.source == str(path)
    assert peak(window) > 0


def test_bad_files_show_a_dialog_naming_the_file_and_lose_nothing(
    qtbot: QtBot, window: QtMainWindow, tmp_path: Path
) -> None:
    build_mlp(window)
    bad = tmp_path / "broken.json"
    bad.write_text(
        json.dumps(
            {
                "format": "advisor-network",
                "version": 1,
                "layers": [
                    {"name": "x", "kind": "input", "params": {"shape": [8]}},
                    {"name": "fc", "kind": "linear", "params": {"out_features": -3}},
                ],
            }
        )
    )
    window.open_file(str(bad))
    qtbot.waitUntil(lambda: bool(dialogs(window)), timeout=5000)
    (box,) = dialogs(window)
    assert "broken.json" in box.windowTitle() and "fc" in box.text() and "out_features" in box.text()
    box.close()
    window.open_file(str(tmp_path / "model.py"))
    qtbot.waitUntil(lambda: any("model.py" in b.text() for b in dialogs(window)), timeout=30000)
    assert [r.kind for r in window.state.draft.rows] == ["input", "linear", "relu"]  # nothing lost


def test_settings_and_last_model_persist(
    qtbot: QtBot, window: QtMainWindow, settings: QSettings, catalog_file: Path
) -> None:
    build_mlp(window)
    window.workload.batch.setValue(77)
    window.workload.inplace.setChecked(True)
    window.close()
    again = open_window(qtbot, settings, catalog_file)
    try:
        assert [r.name for r in again.state.draft.rows] == ["x", "linear1", "relu1"]
        assert again.state.choice.batch == 77 and again.state.choice.inplace
        assert again.workload.batch.value() == 77
    finally:
        again.runner.wait()
        again.catalog.close()


def test_every_menu_action_has_a_shortcut(window: QtMainWindow) -> None:
    actions = [a for top in window.menuBar().actions() for a in top.menu().actions() if not a.isSeparator()]
    assert len(actions) >= 12
    missing = [a.text() for a in actions if a.shortcut().isEmpty()]
    assert not missing
    shortcuts = [a.shortcut().toString() for a in actions]
    assert len(shortcuts) == len(set(shortcuts))


def test_in_place_activations_and_checkpointing_change_the_estimate(qtbot: QtBot, window: QtMainWindow) -> None:
    base = peak(window)  # resnet50 from the zoo
    window.workload.inplace.setChecked(True)
    assert peak(window) <= base  # the relus follow batch norms, whose outputs are not kept: no saving here
    assert window.state.result is not None
    relus = [n.op for n in window.state.result.graph.nodes if n.op.kind == "relu"]
    assert relus and all(op.inplace for op in relus)
    window.workload.inplace.setChecked(False)
    window.workload.checkpointing.setChecked(True)
    assert peak(window) < base


def test_error_dialog_is_a_warning(window: QtMainWindow) -> None:
    from advisor.ui.dialogs import show_error

    box = show_error(window, "t", "m")
    assert box.icon() == QMessageBox.Icon.Warning
    assert "Nothing was changed" in box.informativeText()


def test_language_menu_switches_every_visible_string(qtbot: QtBot, window: QtMainWindow) -> None:
    build_mlp(window)
    (language_menu,) = [a.menu() for a in window.menuBar().actions() if a.text() == "&Language"]
    (chinese,) = [a for a in language_menu.actions() if a.text() == "简体中文"]
    chinese.trigger()
    assert window.windowTitle() == "Advisor：为你的网络挑选 GPU"
    assert [window.tabs.tabText(i) for i in range(4)] == ["明细", "推荐", "显卡目录", "实时 GPU"]
    assert window.workload_box.title() == "工作负载"
    assert len(window.state.draft.rows) == 3  # the network survived the rebuild
    assert window.settings.value("language") == "zh_CN"
    qtbot.waitUntil(lambda: window.poller is not None and window.poller.state().polls > 0)
    window.live.refresh()
    assert window.live.status.text() == "1 张 NVIDIA GPU · NVIDIA 驱动 580.159.04"
    (card,) = window.live.cards.values()
    assert card.fit.text().startswith("resnet50 训练 b") or "可以放进你的 NVIDIA H200" in card.fit.text()


def test_live_gpus_tab_compares_the_workload_with_the_local_card(qtbot: QtBot, window: QtMainWindow) -> None:
    qtbot.waitUntil(lambda: window.poller is not None and window.poller.state().polls > 0)
    window.live.refresh()
    (card,) = window.live.cards.values()
    result = window.state.result
    assert result is not None
    needed_gib = (result.estimate.memory.required_bytes + PROCESS_OVERHEAD_BYTES) / 2**30
    assert card.title.text() == "[0] NVIDIA H200"
    assert card.fit.text().startswith(
        f"{result.estimate.model} training b{result.estimate.workload.batch} fits on "
        f"your NVIDIA H200: {needed_gib:.1f} of "
    )
    window.state.set_choice(batch=4096)  # far more than 140 GiB of activations
    window.state.recompute()
    assert "does not fit on your NVIDIA H200" in card.fit.text()


def test_sequence_length_only_for_sequence_models(qtbot: QtBot, window: QtMainWindow) -> None:
    from advisor.core import zoo
    from advisor.ui import draft_edits

    draft_edits.load_graph_into(window.state.draft, zoo.build("resnet18"), "zoo:resnet18")
    assert not window.workload.seq_len.isEnabled()
    draft_edits.load_graph_into(window.state.draft, zoo.build("gpt2", 256), "zoo:gpt2")
    assert window.workload.seq_len.isEnabled()
    build_mlp(window)  # a network built by hand has no length to change
    assert not window.workload.seq_len.isEnabled()


def test_qt_own_strings_follow_the_language(qtbot: QtBot, window: QtMainWindow) -> None:
    from PySide6.QtCore import QCoreApplication

    window.switch_language("zh_CN")
    assert QCoreApplication.translate("QPlatformTheme", "Cancel") == "取消"  # dialog buttons, from qtbase_zh_CN
    window.switch_language("en")
    assert QCoreApplication.translate("QPlatformTheme", "Cancel") == "Cancel"


def test_stale_state_is_cleared_or_marked(qtbot: QtBot, window: QtMainWindow) -> None:
    """New network clears the figures; an invalid field greys them and says they are stale; the zoo box
    names no zoo model for a built network; an undo from the menu rewrites the focused field."""
    assert window.model_panel.zoo.currentText() == "resnet50"
    window.new_network()
    qtbot.waitUntil(lambda: window.state.result is None, timeout=5000)
    assert window.breakdown.summary.values == {} and window.model_panel.zoo.currentIndex() == -1
    build_mlp(window)
    qtbot.waitUntil(lambda: window.state.result is not None, timeout=5000)
    window.model_panel.builder.select(1)  # the linear layer
    form = window.model_panel.builder.form
    editor = form.editors["out_features"]
    editor.setText("-3")
    editor.textEdited.emit("-3")
    qtbot.waitUntil(lambda: "last valid network" in window.breakdown.error.text(), timeout=5000)
    assert not window.breakdown.summary.isEnabled()
    assert editor.text() == "-3"  # the field being typed in keeps what was typed
    editor.setFocus()
    window.state.draft.undo.undo()
    assert form.editors["out_features"].text() == "256"
    qtbot.waitUntil(lambda: window.breakdown.error.text() == "", timeout=5000)
    assert window.breakdown.summary.isEnabled()


def test_builder_fields_have_human_labels_with_units(qtbot: QtBot, window: QtMainWindow) -> None:
    build_mlp(window)
    window.model_panel.builder.select(1)  # the linear layer
    form = window.model_panel.builder.form
    labels = [
        form.form.itemAt(r, form.form.ItemRole.LabelRole).widget().text()
        for r in range(form.form.rowCount())
        if form.form.itemAt(r, form.form.ItemRole.LabelRole)
    ]
    assert "Output features" in labels and "out_features" not in labels
    assert "inplace_" not in labels and "tied_to" not in labels


def test_inplace_toggle_is_ticked_and_locked_on_models_already_in_place(qtbot: QtBot, window: QtMainWindow) -> None:
    # resnet50 from the zoo: ReLU(inplace=True) throughout, so the rewrite would change nothing
    assert window.workload.inplace.isChecked() and not window.workload.inplace.isEnabled()
    window.new_network()
    build_mlp(window)  # its relu is not in place
    qtbot.waitUntil(lambda: window.workload.inplace.isEnabled(), timeout=5000)
    assert not window.workload.inplace.isChecked()


def test_seed_networks_come_last_and_say_what_they_are(qtbot: QtBot, window: QtMainWindow) -> None:
    from PySide6.QtCore import Qt

    box = window.model_panel.zoo
    names = [box.itemText(i) for i in range(box.count())]
    first_seed = next(i for i, n in enumerate(names) if n.startswith("seed:"))
    assert all(n.startswith("seed:") for n in names[first_seed:])
    assert names[first_seed - 1] == ""  # the separator
    assert "calibration" in str(box.itemData(first_seed, Qt.ItemDataRole.ToolTipRole))
