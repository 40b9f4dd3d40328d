"""'Make it fit on...': opened from a recommendation row, lists measured changes, Apply sets the controls."""

from __future__ import annotations

from collections.abc import Callable

from pytestqt.qtbot import QtBot

from advisor.recommend.fit.search import FitOption
from advisor.ui.i18n import set_language
from advisor.ui.main_window import QtMainWindow
from advisor.ui.make_it_fit import QtMakeItFit

Ranked = Callable[[QtBot, QtMainWindow], None]
CARD = "GeForce RTX 3060"
# resnet50 fp32 at batch 160 does not fit the 3060's 11.20 GiB (128 needs 11.12 GiB with the replay's 20 MiB margin)
BATCH = 160


def resnet50_too_big(qtbot: QtBot, window: QtMainWindow) -> None:
    window.model_panel.load_zoo("resnet50")
    window.workload.batch.setValue(BATCH)
    qtbot.waitUntil(
        lambda: (
            window.state.result is not None
            and window.state.result.estimate.workload.batch == BATCH
            and window.state.result.estimate.model == "resnet50"
        ),
        timeout=5000,
    )


def opened(qtbot: QtBot, window: QtMainWindow) -> QtMakeItFit:
    dialog = window.recommendations.make_it_fit(CARD)
    assert dialog is not None
    qtbot.waitUntil(lambda: dialog.report is not None, timeout=15000)
    return dialog


def select(dialog: QtMakeItFit, *keys: str) -> FitOption:
    row = next(i for i, o in enumerate(dialog.rows) if o is not None and o.changes == keys)
    dialog.table.selectRow(row)
    option = dialog.rows[row]
    assert option is not None
    return option


def test_the_row_action_opens_the_list_for_the_selected_card(
    qtbot: QtBot, window: QtMainWindow, wait_ranked: Ranked
) -> None:
    resnet50_too_big(qtbot, window)
    wait_ranked(qtbot, window)
    panel = window.recommendations
    assert not panel.fit_button.isEnabled()
    row = next(
        r
        for r in range(panel.proxy.rowCount())
        if panel.model.entries[panel.proxy.mapToSource(panel.proxy.index(r, 0)).row()].card == CARD
    )
    panel.table.selectRow(row)
    assert panel.fit_button.isEnabled()
    panel.fit_button.click()
    dialog = panel.fit_dialog
    assert dialog is not None and dialog.card == CARD and dialog.isVisible()
    qtbot.waitUntil(lambda: dialog.report is not None, timeout=15000)
    assert "does not fit" in dialog.verdict.text()


def test_apply_sets_the_workload_controls(qtbot: QtBot, window: QtMainWindow) -> None:
    resnet50_too_big(qtbot, window)
    dialog = opened(qtbot, window)
    option = select(dialog, "amp_bf16")
    assert option.fits and dialog.apply_button.isEnabled()
    dialog.apply_button.click()
    assert window.state.choice.precision == "amp_bf16"
    assert window.workload.precision.currentData() == "amp_bf16"
    qtbot.waitUntil(
        lambda: window.state.result is not None and window.state.result.estimate.workload.precision == "amp_bf16",
        timeout=5000,
    )
    # the list follows the new workload: it now fits, with the measured requirement of the change
    qtbot.waitUntil(lambda: dialog.report is not None and dialog.report.current.fits, timeout=15000)
    assert dialog.report.current.measured.required_bytes == option.measured.required_bytes


def test_checkpointing_and_batch_apply_and_script_only_changes_do_not(qtbot: QtBot, window: QtMainWindow) -> None:
    resnet50_too_big(qtbot, window)
    dialog = opened(qtbot, window)
    select(dialog, "freeze_head")
    assert not dialog.apply_button.isEnabled()  # freezing is set in the training script
    assert "training script" in dialog.table.item(dialog.table.currentRow(), 0).toolTip()
    batch = select(dialog, "batch")
    dialog.apply_selected()
    assert window.state.choice.batch == batch.settings["batch"] == window.workload.batch.value()
    qtbot.waitUntil(
        lambda: (
            dialog.report is not None and dialog.report.current.measured.samples_per_step == batch.settings["batch"]
        ),
        timeout=15000,
    )
    window.workload.batch.setValue(BATCH)
    qtbot.waitUntil(lambda: dialog.report is not None and not dialog.report.current.fits, timeout=15000)
    select(dialog, "checkpointing")
    dialog.apply_selected()
    assert window.state.choice.checkpointing and window.workload.checkpointing.isChecked()


def test_screenshot_and_chinese(qtbot: QtBot, window: QtMainWindow) -> None:
    resnet50_too_big(qtbot, window)
    dialog = opened(qtbot, window)
    dialog.grab().save("/tmp/make_it_fit.png")
    set_language("zh_CN")
    try:
        chinese = QtMakeItFit(window.state, window.catalog, window.runner, CARD, window)
        qtbot.addWidget(chinese)
        qtbot.waitUntil(lambda: chinese.report is not None, timeout=15000)
        labels = [chinese.table.item(r, 0).text() for r in range(chinese.table.rowCount())]
        assert "混合精度（bf16 autocast）" in labels and "放不下" in chinese.verdict.text()
    finally:
        set_language("en")


def test_a_card_that_already_fits_says_so_and_offers_only_speed_or_batch(qtbot: QtBot, window: QtMainWindow) -> None:
    window.model_panel.load_zoo("resnet18")  # batch 32 fp32: about 1.5 GiB on an 80 GB H100
    qtbot.waitUntil(
        lambda: window.state.result is not None and window.state.result.estimate.model == "resnet18", timeout=5000
    )
    dialog = window.recommendations.make_it_fit("H100 SXM5")
    assert dialog is not None
    qtbot.waitUntil(lambda: dialog.report is not None, timeout=15000)
    report = dialog.report
    assert report is not None and not report.needs_help
    spare = 1 - report.current.measured.required_bytes / report.usable_bytes
    assert f"fits with {spare:.0%} to spare" in dialog.verdict.text()
    shown = [o for o in dialog.rows if o is not None]
    need = report.current.measured.required_bytes
    assert all(o.slowdown < 0 or o.measured.required_bytes < need for o in shown)
    assert report.recommended is None or report.recommended.slowdown < 0
    assert "slower)" not in dialog.verdict.text()
