"""The recommendations panel's price-basis and software selectors, and the money lines of a row's detail."""

from __future__ import annotations

from collections.abc import Callable

from pytestqt.qtbot import QtBot

from advisor.ui.main_window import QtMainWindow

Ranked = Callable[[QtBot, QtMainWindow], None]


def test_software_and_rent_selectors_change_the_ranking(
    qtbot: QtBot, window: QtMainWindow, wait_ranked: Ranked
) -> None:
    panel = window.recommendations
    panel.money.software.setCurrentIndex(panel.money.software.findData("ROCm"))
    panel.money.basis.setCurrentIndex(panel.money.basis.findData("rent"))
    wait_ranked(qtbot, window)
    entries = panel.model.entries
    assert entries and {e.software for e in entries} == {"ROCm"}
    assert all(e.price_kind in (None, "rent_hour") for e in entries)  # rent basis: no purchase price
    panel.table.selectRow(0)
    assert panel.detail.text().count("PyTorch runs this card through ROCm") == 1  # said once, in the reason
    unpriced = [
        r
        for r in range(panel.proxy.rowCount())
        if panel.model.entries[panel.proxy.mapToSource(panel.proxy.index(r, 0)).row()].price_usd is None
    ]
    assert unpriced  # consumer Radeon cards are not rented by clouds
    panel.table.selectRow(unpriced[0])  # a card without a rent price says how to give it one
    assert "No price on this basis" in panel.detail.text()


def test_a_job_size_adds_costs_and_the_time_against_cost_chart(
    qtbot: QtBot, window: QtMainWindow, wait_ranked: Ranked
) -> None:
    panel = window.recommendations
    assert panel.job_chart.isHidden()  # no job size yet
    panel.money.samples.setValue(1e7)
    wait_ranked(qtbot, window)
    priced = [e for e in panel.model.entries if e.fits and e.price_usd is not None]
    assert priced and all(e.job_hours is not None and e.job_cost_usd is not None for e in priced)
    qtbot.waitUntil(lambda: not panel.job_chart.isHidden(), timeout=5000)
    figure = panel.job_chart.figure
    assert figure is not None and figure.axes[0].get_ylabel() == "Cost of the job (USD)"
    # on screen, not merely "visible" in a splitter that gave it no room: beside the row's explanation
    chart, detail = panel.job_chart.geometry(), panel.detail.geometry()
    assert chart.width() > 200 and chart.height() > 150 and chart.left() >= detail.right()


def test_the_budget_box_greys_with_a_reason_where_rent_without_a_job_size_leaves_nothing_to_cap(
    qtbot: QtBot, window: QtMainWindow
) -> None:
    panel = window.recommendations
    panel.budget.setValue(5000)
    assert panel.budget.isEnabled() and panel.budget_note.isHidden()
    assert panel.request()[1].budget_usd == 5000  # a purchase price: the budget caps it
    panel.money.basis.setCurrentIndex(panel.money.basis.findData("rent"))
    # rent per hour, no job size: no total, so no budget is asked for and the box says why (the CLI refuses)
    assert not panel.budget.isEnabled() and not panel.budget_note.isHidden()
    assert panel.request()[1].budget_usd is None
    assert "no total to cap" in panel.budget.toolTip() and "job size" in panel.budget_note.text()
    panel.money.samples.setValue(1e7)  # a job size: the budget caps the rented job's cost
    assert panel.budget.isEnabled() and panel.budget_note.isHidden()
    assert panel.request()[1].budget_usd == 5000 and "Most you will pay" in panel.budget.toolTip()
    panel.money.samples.setValue(0)  # "no job size" again
    assert not panel.budget.isEnabled()
    panel.money.basis.setCurrentIndex(panel.money.basis.findData("new"))
    assert panel.budget.isEnabled() and panel.budget.value() == 5000  # the value waited, unchanged
