"""Recommendations: sorting the table, the explanation of a row, and a price edit that changes the ranking."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from typing import Any

from PySide6.QtCore import QDate, Qt
from pytestqt.qtbot import QtBot

from advisor.recommend.reasons import ReasonCode, reason, reasons_text
from advisor.recommend.recommendation import Recommendation
from advisor.ui.i18n import set_language
from advisor.ui.main_window import QtMainWindow
from advisor.ui.recommend_model import explain
from advisor.ui.table_model import SORT_ROLE

Ranked = Callable[[QtBot, QtMainWindow], None]


def column(window: QtMainWindow, header: str) -> int:
    model = window.recommendations.proxy
    return next(c for c in range(model.columnCount()) if model.headerData(c, Qt.Orientation.Horizontal) == header)


def values(window: QtMainWindow, col: int) -> list[object]:
    proxy = window.recommendations.proxy
    return [proxy.index(row, col).data(SORT_ROLE) for row in range(proxy.rowCount())]


def test_every_row_says_how_pytorch_runs_its_card(qtbot: QtBot, window: QtMainWindow, wait_ranked: Ranked) -> None:
    from advisor.catalog.software import software_path

    wait_ranked(qtbot, window)
    proxy, software = window.recommendations.proxy, column(window, "Software")
    assert not window.recommendations.table.horizontalHeader().isSectionHidden(software)  # shown at first
    entries = window.recommendations.model.entries
    by_card = {
        e.card: proxy.index(row, software).data()
        for row in range(proxy.rowCount())
        for e in [entries[proxy.mapToSource(proxy.index(row, 0)).row()]]
    }
    assert by_card["Instinct MI300X"] == "ROCm" and by_card["Arc B580"] == "XPU" and by_card["H100 SXM5"] == "CUDA"
    assert by_card["Gaudi 3"] == software_path("Intel", "Gaudi 3") == "Gaudi"


def test_sort_by_any_column(qtbot: QtBot, window: QtMainWindow, wait_ranked: Ranked) -> None:
    wait_ranked(qtbot, window)
    table = window.recommendations.table
    assert window.recommendations.proxy.rowCount() > 50
    price = column(window, "Price USD")
    table.horizontalHeader().sectionClicked.emit(price)  # what a click on the header does
    table.sortByColumn(price, Qt.SortOrder.AscendingOrder)
    prices = values(window, price)
    assert prices == sorted(prices)  # type: ignore[type-var]
    memory = column(window, "Usable/card")
    table.sortByColumn(memory, Qt.SortOrder.DescendingOrder)
    usable = values(window, memory)
    assert usable == sorted(usable, reverse=True)  # type: ignore[type-var]
    assert window.recommendations.proxy.headerData(price, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole)


def test_selecting_a_multi_gpu_row_explains_pooling(qtbot: QtBot, window: QtMainWindow, wait_ranked: Ranked) -> None:
    panel = window.recommendations
    panel.all_configs.setChecked(True)
    wait_ranked(qtbot, window)
    rows = [
        r
        for r in range(panel.proxy.rowCount())
        if panel.model.entries[panel.proxy.mapToSource(panel.proxy.index(r, 0)).row()].plan == "data_parallel"
    ]
    panel.table.selectRow(rows[0])
    assert "does not pool" in panel.detail.text()
    assert "per card at batch 32" in panel.detail.text()
    # the selected card is drawn on the memory-vs-batch chart
    chosen = panel.model.entries[panel.proxy.mapToSource(panel.proxy.index(rows[0], 0)).row()].card
    assert window.breakdown.cards[0].label == chosen


def test_a_new_price_changes_the_ranking(qtbot: QtBot, window: QtMainWindow, wait_ranked: Ranked) -> None:
    panel = window.recommendations
    panel.objective.setCurrentIndex(panel.objective.findData("cheapest"))
    wait_ranked(qtbot, window)
    before = [e.card for e in panel.model.entries if e.fits]
    target = before[10]  # a card that fits but is not the cheapest
    editor = window.catalog_editor
    qtbot.waitUntil(lambda: editor.proxy.rowCount() > 100, timeout=5000)
    editor.search.setText(target)
    editor.select(target)
    assert editor.selected_card() == target
    editor.form.amount.setValue(1.0)
    editor.form.on.setDate(QDate(date.today().year, date.today().month, date.today().day))
    editor.save_price()

    def cheapest_is_target() -> bool:  # a ranking already in flight may land first: wait for the new one
        after = [e for e in panel.model.entries if e.fits]
        return bool(after) and after[0].card == target and after[0].price_usd == 1.0

    qtbot.waitUntil(cheapest_is_target, timeout=15000)
    qtbot.waitUntil(lambda: editor.prices.count() > 0 and "1.00 USD" in editor.prices.item(0).text(), timeout=5000)


def test_filters_narrow_the_ranking(qtbot: QtBot, window: QtMainWindow, wait_ranked: Ranked) -> None:
    panel = window.recommendations
    panel.vendor.setCurrentIndex(panel.vendor.findData("AMD"))
    panel.max_gpus.setCurrentIndex(panel.max_gpus.findData(1))
    panel.budget.setValue(1000)
    wait_ranked(qtbot, window)
    entries = panel.model.entries
    assert entries and all(e.count == 1 and (e.price_usd is None or e.price_usd <= 1000) for e in entries)
    names = {c.name: c.vendor for c in window.catalog_editor.cards}
    assert {names[e.card] for e in entries} == {"AMD"}


def test_cancel_drops_the_running_ranking(qtbot: QtBot, window: QtMainWindow) -> None:
    window.recommendations.refresh()
    assert window.runner.running("recommend")
    assert not window.task_bar.isHidden()
    window.task_bar.cancel_button.click()
    assert not window.runner.running("recommend")
    assert window.task_bar.isHidden()


def test_add_your_own_card(qtbot: QtBot, window: QtMainWindow) -> None:
    editor = window.catalog_editor
    dialog = editor.open_add_card()
    dialog.name.setText("My Lab Card")
    dialog.memory.setValue(48)
    dialog.bandwidth.setValue(900)
    dialog.fp32.setValue(40)
    dialog.tdp.setValue(300)
    dialog.accept()
    qtbot.waitUntil(lambda: any(c.name == "My Lab Card" and c.user_owned for c in editor.cards), timeout=5000)


def test_needs_per_card_is_the_headline_required(qtbot: QtBot, window: QtMainWindow, wait_ranked: Ranked) -> None:
    """Single-card rows at the estimated batch show the estimate's own Required, not a curve's rounding."""
    wait_ranked(qtbot, window)
    assert window.state.result is not None
    required = window.state.result.estimate.memory.required_bytes
    singles = [e for e in window.recommendations.entries if e.count == 1]
    assert singles and {e.required_bytes for e in singles} == {required}


def test_an_empty_card_is_refused_by_the_dialog(qtbot: QtBot, window: QtMainWindow) -> None:
    dialog = window.catalog_editor.open_add_card()
    dialog.accept()  # nothing typed: no name, 0 GiB, 0 GB/s, 0 TFLOPS
    assert dialog.isVisible()
    text = dialog.problem.text()
    assert "a name" in text and "memory above 0 GiB" in text and "an FP32 rate above 0" in text


def test_an_incomplete_card_ranks_last_and_the_rest_still_rank(
    qtbot: QtBot, window: QtMainWindow, wait_ranked: Ranked
) -> None:
    """A card stored without figures (an older version let one in) breaks nothing; it can be removed."""
    from advisor.catalog.orm import USER, Card

    catalog = window.catalog.catalog
    assert catalog is not None
    with catalog.write() as session:
        card = session.get(Card, 1)
        assert card is not None
        broken_name = card.name
        card.fp32_tflops, card.bandwidth_gbs, card.origin = 0.0, 0.0, USER
    window.catalog.changed.emit()
    wait_ranked(qtbot, window)
    entries = window.recommendations.entries
    broken = [e for e in entries if e.card == broken_name]
    assert [e.plan for e in broken] == ["incomplete"] and entries[-1].card == broken_name
    assert "bandwidth_gbs, fp32_tflops" in reasons_text(broken[0].reasons)
    assert any(e.fits for e in entries)
    editor = window.catalog_editor
    qtbot.waitUntil(lambda: any(c.name == broken_name for c in editor.cards), timeout=5000)
    editor.select(broken_name)
    assert editor.remove_button.isEnabled()
    editor.remove_button.click()
    qtbot.waitUntil(lambda: bool(editor.cards) and all(c.name != broken_name for c in editor.cards), timeout=10000)


def test_a_negative_price_cannot_be_typed(qtbot: QtBot, window: QtMainWindow) -> None:
    box = window.catalog_editor.form.amount
    box.lineEdit().clear()
    qtbot.keyClicks(box.lineEdit(), "-50")
    assert "-" not in box.text() and box.value() == 50  # the minus is refused, the digits are kept


def _fitting_entry(**given: Any) -> Recommendation:
    """A ranked entry that fits: 20 GiB needed of 22 GiB usable, 20 tokens/s, no price."""
    return Recommendation(
        **{
            "fits": True,
            "required_bytes": 20 * 2**30,
            "usable_bytes": 22 * 2**30,
            "max_batch": 4,
            "step_time_s": 0.05,
            "throughput": 20.0,
            "throughput_unit": "tokens/s",
            "price_usd": None,
            "price_date": None,
            "price_condition": None,
            "perf_per_dollar": None,
            "perf_per_watt": 0.1,
            **given,
        }
    )


def test_the_explanation_keeps_a_fit_that_only_splitting_buys_in_the_users_language(qtbot: QtBot) -> None:
    split = _fitting_entry(
        card="RTX 3090",
        count=2,
        plan="layer_split",
        reasons=(
            reason(
                ReasonCode.FITS,
                required_bytes=20 * 2**30,
                batch=1,
                memory_bytes=24 * 2**30,
                usable_bytes=22 * 2**30,
                context="the CUDA context",
            ),
            reason(ReasonCode.LAYER_SPLIT, count=2, link="PCIe 4.0 x16"),
            reason(ReasonCode.ONLY_LAYER_SPLIT, count=2),
        ),
    )
    assert "Fits only because layers are split over 2 cards." in explain(split, 1)
    set_language("zh_CN")
    try:
        text = explain(split, 1)
    finally:
        set_language("en")
    assert "只因各层被拆分到 2 张卡上才放得下" in text and "按层拆分到 2 张卡上（PCIe 4.0 x16）" in text
    assert "只因各层被拆分到 2 张卡上才放得下。" in text and "下." not in text  # full-width stops in Chinese


def test_the_explanation_names_the_context_of_the_cards_own_runtime(qtbot: QtBot) -> None:
    # qtbot: the language lives on the QApplication it makes
    amd = _fitting_entry(card="Instinct MI300X", count=1, plan="single", reasons=(), software="ROCm")
    # 22 GiB usable - 20 GiB needed = 2.00 GiB to spare
    assert "the card has 22.00 GiB usable after the HIP context (2.00 GiB to spare)" in explain(amd, 4)
    set_language("zh_CN")
    try:
        text = explain(amd, 4)
    finally:
        set_language("en")
    assert "扣除 HIP 上下文后该卡可用 22.00 GiB" in text and "CUDA" not in text


def test_the_app_the_pdf_and_the_command_line_print_a_large_batch_and_a_long_step_alike(qtbot: QtBot) -> None:
    """A tiny network's max batch (118,262) and a slow step (1,255.6 ms) read the same in the three tables: the
    app printed 118262 and 1255.6 beside 22,346 samples/s, the PDF 118262 and 1,255.6; the app and the PDF
    give the value for money per $1k."""
    from advisor.recommend.present import render_table
    from advisor.report.card_pages import _row as pdf_row
    from advisor.ui.recommend_model import RecommendationTableModel

    big = Recommendation(
        card="GeForce GTX Titan X",
        count=1,
        plan="single",
        fits=True,
        required_bytes=2**25,
        usable_bytes=11 * 2**30,
        max_batch=118_262,
        step_time_s=1.2556,
        throughput=22_346.0,
        throughput_unit="samples/s",
        price_usd=179.0,
        price_date=date(2026, 3, 6),
        price_condition="new",
        perf_per_dollar=22_346.0 / 179,
        perf_per_watt=0.1,
        reasons=(),
        price_kind="purchase",
    )
    model = RecommendationTableModel()
    model.set_entries([big])
    app_cells = [model.data(model.index(0, column)) for column in range(model.columnCount())]
    pdf_cells = pdf_row(1, big, str)
    command_line = render_table([big], 1)
    for shown in ("118,262", "1,255.6"):  # 1.2556 s = 1,255.6 ms
        assert shown in app_cells and shown in pdf_cells and f"  {shown}  " in command_line, shown
    assert "Largest batch per card that fits: 118,262." in explain(big, 32)
    # value for money per $1k in both: 22,346 / 179 x 1,000 = 124,838 -> 125,000 (the PDF printed 125 per USD)
    assert "125,000 samples/s" in app_cells and "125,000" in pdf_cells
