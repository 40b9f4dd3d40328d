"""Time against cost of the whole job (--samples / --tokens): every fitting configuration with a price, and
the frontier of best choices (nothing else is both faster and cheaper) drawn and labelled."""

from __future__ import annotations

from collections.abc import Sequence

from matplotlib.figure import Figure

from advisor.charts.style import ChartStyle, empty_message, lettering, new_figure
from advisor.recommend.money import frontier
from advisor.recommend.ranking import Recommendation

_POINTS, _FRONTIER = "#9DB4D6", "#C44E52"


def _xy(entries: Sequence[Recommendation]) -> tuple[list[float], list[float]]:
    pairs = [(e.job_hours, e.job_cost_usd) for e in entries if e.job_hours is not None]
    known = [(h, c) for h, c in pairs if h is not None and c is not None]
    return [h for h, _ in known], [c for _, c in known]


def _label(e: Recommendation) -> str:
    return f"{e.count} x {e.card}" if e.count > 1 else e.card


def job_cost_figure(entries: Sequence[Recommendation], style: ChartStyle | None = None) -> Figure:
    style = style or ChartStyle(height_in=3.0)
    t = style.text
    with lettering(style):
        figure = new_figure(style)
        points = [e for e in entries if e.fits and e.job_hours is not None and e.job_cost_usd is not None]
        if not points:
            return empty_message(figure, t("Give the job's size to see its time and cost"))
        axis = figure.add_subplot()
        axis.scatter(*_xy(points), s=10, color=_POINTS, label=t("fitting configurations"))
        best = frontier(points)
        hours, costs = _xy(best)
        axis.plot(hours, costs, marker="o", markersize=4, color=_FRONTIER, linewidth=1.2, label=t("best choices"))
        for e, h, c in list(zip(best, hours, costs, strict=True))[:8]:
            axis.annotate(_label(e), (h, c), fontsize=7, xytext=(4, 3), textcoords="offset points")
        axis.set_xscale("log")
        axis.set_yscale("log")
        axis.set_xlabel(t("Hours to finish the job"))
        axis.set_ylabel(t("Cost of the job (USD)"))
        axis.legend(fontsize=8, loc="best")
    return figure
