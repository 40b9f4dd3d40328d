"""A card's price history: purchase prices (new, used/refurbished) over time, and cloud rent per GPU-hour on
its own axis (a different unit). The user's own prices are filled markers, bundled ones hollow."""

from __future__ import annotations

from collections.abc import Sequence

from matplotlib.axes import Axes
from matplotlib.dates import date2num
from matplotlib.figure import Figure

from advisor.catalog.exchange import priced_in_usd
from advisor.catalog.records import PriceRecord
from advisor.charts.style import ChartStyle, empty_message, lettering, new_figure

SERIES_COLORS = {"new": "#4C72B0", "used": "#DD8452", "rent": "#55A868"}


def _series(prices: Sequence[PriceRecord]) -> dict[str, list[PriceRecord]]:
    """new / used (used and refurbished) purchases and rent, in USD (other currencies converted at the
    bundled rates; one without a rate is left out)."""
    found: dict[str, list[PriceRecord]] = {"new": [], "used": [], "rent": []}
    for p in sorted(priced_in_usd(prices), key=lambda p: p.date):
        key = "rent" if p.kind == "rent_hour" else ("new" if p.condition == "new" else "used")
        found[key].append(p)
    return found


def _days(prices: list[PriceRecord]) -> list[float]:
    return [float(date2num(p.date)) for p in prices]  # type: ignore[no-untyped-call]


def _plot(axis: Axes, prices: list[PriceRecord], color: str, label: str) -> None:
    axis.plot(
        _days(prices), [p.amount for p in prices], color=color, linewidth=1.2, label=label, drawstyle="steps-post"
    )
    for mine in (False, True):
        points = [p for p in prices if p.user_owned == mine]
        if points:
            axis.scatter(
                _days(points),
                [p.amount for p in points],
                s=22,
                zorder=3,
                color=color,
                facecolors=color if mine else "white",
                linewidths=1.2,
            )
    axis.xaxis_date()


def price_history_figure(card: str, prices: Sequence[PriceRecord], style: ChartStyle | None = None) -> Figure:
    style = style or ChartStyle(height_in=2.6)
    t = style.text
    with lettering(style):
        figure = new_figure(style)
        series = _series(prices)
        if not any(series.values()):
            return empty_message(figure, t("No prices in USD yet"))
        axis = figure.add_subplot()
        axis.set_title(t("Price history: {card}").format(card=card), fontsize=10)
        labels = {"new": t("new"), "used": t("used or refurbished")}
        for key in ("new", "used"):
            if series[key]:
                _plot(axis, series[key], SERIES_COLORS[key], labels[key])
        axis.set_ylabel(t("Price (USD)"))
        if series["rent"]:
            rent_axis = axis.twinx() if series["new"] or series["used"] else axis
            _plot(rent_axis, series["rent"], SERIES_COLORS["rent"], t("rent per GPU-hour"))
            rent_axis.set_ylabel(t("Rent (USD/GPU-hour)"))  # short: the vertical label fits a 2.6-inch chart
        handles = [h for a in figure.axes for h in a.get_legend_handles_labels()[0]]
        figure.axes[0].legend(handles=handles, fontsize=8, loc="best")
        figure.autofmt_xdate()
    return figure
