"""The price-history chart: purchase prices on one axis, rent per GPU-hour on its own, the user's filled."""

from __future__ import annotations

from datetime import date

import pytest
from PySide6.QtWidgets import QApplication

from advisor.catalog.exchange import bundled_rates
from advisor.catalog.records import PriceRecord
from advisor.charts.prices import price_history_figure


def p(
    amount: float, day: date, condition: str = "new", kind: str = "purchase", user: bool = False, currency: str = "USD"
) -> PriceRecord:
    market = "cloud_on_demand" if kind == "rent_hour" else "retail"
    return PriceRecord("GeForce RTX 4090", amount, currency, day, condition, "src", user, kind, market)


def test_purchase_and_rent_get_their_own_axes() -> None:
    prices = [
        p(1599, date(2022, 10, 12)),
        p(1999, date(2026, 5, 1)),
        p(1400, date(2025, 3, 1), "used"),
        p(0.69, date(2026, 5, 1), kind="rent_hour"),
        p(1750, date(2026, 4, 1), user=True),
    ]
    figure = price_history_figure("GeForce RTX 4090", prices)
    purchase, rent = figure.axes
    assert purchase.get_title() == "Price history: GeForce RTX 4090"
    assert purchase.get_ylabel() == "Price (USD)" and rent.get_ylabel() == "Rent (USD/GPU-hour)"
    new_line, used_line = purchase.get_lines()
    assert list(new_line.get_ydata()) == [1599, 1750, 1999]  # date order, the user's price among them
    assert list(used_line.get_ydata()) == [1400] and list(rent.get_lines()[0].get_ydata()) == [0.69]
    legend = [text.get_text() for text in purchase.get_legend().get_texts()]
    assert legend == ["new", "used or refurbished", "rent per GPU-hour"]


def test_no_usd_price_says_so_instead_of_empty_axes() -> None:
    figure = price_history_figure("X", [p(1500, date(2026, 1, 1), currency="XYZ")])  # no rate for XYZ
    assert figure.axes == [] and figure.texts[0].get_text() == "No prices in USD yet"


def test_a_euro_price_is_drawn_in_usd() -> None:
    figure = price_history_figure("X", [p(1000, date(2026, 1, 1), currency="EUR")])
    usd_per_eur = bundled_rates().usd_per_unit("EUR")
    assert usd_per_eur is not None
    assert list(figure.axes[0].get_lines()[0].get_ydata()) == pytest.approx([1000 * usd_per_eur])


def test_the_chart_speaks_chinese(qapp: QApplication) -> None:
    from advisor.ui.chart_canvas import chart_style
    from advisor.ui.i18n import set_language

    set_language("zh_CN")
    try:
        figure = price_history_figure("H100 SXM5", [p(2.99, date(2026, 5, 1), kind="rent_hour")], chart_style())
    finally:
        set_language("en")
    assert figure.axes[0].get_title() == "价格走势：H100 SXM5"


def test_job_cost_chart_draws_the_frontier_and_labels_it() -> None:
    from advisor.charts.job_cost import job_cost_figure
    from tests.recommend.test_money import rec

    rows = [
        rec(card="A", job_hours=1.0, job_cost_usd=900.0),
        rec(card="B", count=2, job_hours=10.0, job_cost_usd=300.0),
        rec(card="C", job_hours=20.0, job_cost_usd=400.0),
    ]
    axis = job_cost_figure(rows).axes[0]
    assert list(axis.get_lines()[0].get_xdata()) == [1.0, 10.0]  # C is slower and dearer than B
    assert [text.get_text() for text in axis.texts] == ["A", "2 × B"]  # the verdict's ×
    assert axis.get_xlabel() == "Hours to finish the job"
    assert job_cost_figure([rec()]).texts[0].get_text() == "Give the job's size to see its time and cost"


def test_frontier_names_never_print_over_each_other() -> None:
    from advisor.charts.job_cost import LABEL_GAP, _fraction, _spread

    # ten frontier points a hair apart in time, then one far away: the ends are named, the crowd once
    hours = [1.0 + k * 0.01 for k in range(10)] + [100.0]
    costs = [50.0 - k for k in range(10)] + [5.0]
    named = _spread(hours, costs, (1.0, 100.0), (5.0, 50.0))
    assert named[0] == 0 and named[-1] == 10 and len(named) < 11
    where = [(_fraction(hours[k], (1.0, 100.0)), _fraction(costs[k], (5.0, 50.0))) for k in named]
    for a, (ax, ay) in enumerate(where):
        for bx, by in where[a + 1 :]:
            assert abs(ax - bx) > LABEL_GAP or abs(ay - by) > LABEL_GAP / 2


def test_job_chart_minor_ticks_are_plain_and_sparse() -> None:
    from advisor.charts.job_cost import job_cost_figure
    from tests.recommend.test_money import rec

    # hours 0.2 to 0.9: less than a decade, so matplotlib labels minor ticks (as 2x10^-1, 3x10^-1... overlapping)
    rows = [rec(card="A", job_hours=0.2, job_cost_usd=5.0), rec(card="B", job_hours=0.9, job_cost_usd=1.0)]
    figure = job_cost_figure(rows)
    figure.canvas.draw()  # type: ignore[no-untyped-call]
    axis = figure.axes[0]
    labels = [t.get_text() for t in axis.xaxis.get_ticklabels(minor=True) if t.get_text()]
    assert labels and set(labels) <= {"0.2", "0.5", "2", "5", "20", "50"}  # the 1-2-5 steps, in plain numbers
