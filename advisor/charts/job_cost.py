"""Time against cost of the whole job (--samples / --tokens): every fitting configuration with a price, and
the frontier of best choices (nothing else is both faster and cheaper) drawn and labelled."""

from __future__ import annotations

import math
from collections.abc import Sequence

from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from advisor.charts.labels import Offset, place_labels
from advisor.charts.style import ChartStyle, empty_message, lettering, new_figure
from advisor.recommend.money import frontier
from advisor.recommend.recommendation import Recommendation

_POINTS, _FRONTIER = "#9DB4D6", "#C44E52"
# Nearest two frontier names may sit, as a fraction of the log-scaled axes: a name of ~20 characters at 7 pt
# is about a quarter of a 4-inch plot wide and a twentieth of a 2.4-inch one high.
LABEL_GAP = 0.25


def _xy(entries: Sequence[Recommendation]) -> tuple[list[float], list[float]]:
    pairs = [(e.job_hours, e.job_cost_usd) for e in entries if e.job_hours is not None]
    known = [(h, c) for h, c in pairs if h is not None and c is not None]
    return [h for h, _ in known], [c for _, c in known]


def _label(e: Recommendation) -> str:
    return f"{e.count} × {e.card}" if e.count > 1 else e.card  # the verdict's "×"


def _spread(
    hours: list[float],
    costs: list[float],
    x_range: tuple[float, float],
    y_range: tuple[float, float],
    gap: float = LABEL_GAP,
    most: int = 8,
) -> list[int]:
    """Which frontier points get a name: the two ends first (the fastest and the cheapest choice), then the
    others in order, each at least `gap` of the log-scaled axes away from every named one, so no two names
    print over each other."""

    def where(k: int) -> tuple[float, float]:
        return (_fraction(hours[k], x_range), _fraction(costs[k], y_range))

    named: list[int] = []
    for k in dict.fromkeys([0, len(hours) - 1, *range(1, len(hours) - 1)]):
        x, y = where(k)
        if len(named) < most and all(abs(x - nx) > gap or abs(y - ny) > gap / 2 for nx, ny in map(where, named)):
            named.append(k)
    return sorted(named)


def _minor_label(value: float, _position: object) -> str:
    leading = f"{value:.0e}"[0]
    return f"{value:,g}" if leading in "25" else ""


def _fraction(value: float, bounds: tuple[float, float]) -> float:
    """Where `value` sits between `bounds` on a log axis, 0 to 1."""
    low, high = math.log10(bounds[0]), math.log10(bounds[1])
    return (math.log10(value) - low) / (high - low) if high > low else 0.5


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
        all_hours, all_costs = _xy(points)
        x_range = (min(all_hours), max(all_hours))
        named = _spread(hours, costs, x_range, (min(all_costs), max(all_costs)))
        named = sorted(named, key=lambda k: (k not in (0, len(hours) - 1), k))  # the two ends first
        labels, offsets = [], []  # each name, and where it may go (place_labels picks)
        for k in named:
            right = _fraction(hours[k], x_range) > 0.75  # a name near the right edge reads leftwards, inside
            sides: list[Offset] = [(-4.0, 3.0, "right"), (4.0, 3.0, "left")]
            sides = sides if right else sides[::-1]
            offsets.append([*sides, *((dx, -10.0, ha) for dx, _dy, ha in sides)])
            labels.append(
                axis.annotate(
                    _label(best[k]),
                    (hours[k], costs[k]),
                    fontsize=7,
                    xytext=sides[0][:2],
                    textcoords="offset points",
                    ha=sides[0][2],
                    zorder=5,
                    bbox={"boxstyle": "square,pad=0.1", "fc": "white", "ec": "none", "alpha": 0.75},
                )
            )  # readable over the dots
        axis.set_xscale("log")
        axis.set_yscale("log")
        for scale in (axis.xaxis, axis.yaxis):  # 0.1, 1, 10 rather than 10^-1: plain text, also in the PDF's SVG
            scale.set_major_formatter(FuncFormatter(lambda value, _position: f"{value:,g}"))
            # within a decade matplotlib labels the minor ticks as 2x10^-1, 3x10^-1...: they overlapped; plain
            # 0.2, 0.5 (the 1-2-5 steps) instead, the others unlabelled
            scale.set_minor_formatter(FuncFormatter(_minor_label))
        axis.set_xlabel(t("Hours to finish the job"))
        axis.set_ylabel(t("Cost of the job (USD)"))
        legend = axis.legend(fontsize=8, loc="best")  # where "best" puts it: no name may cover it either
        place_labels(figure, labels, offsets, lambda: [legend.get_window_extent()])
    return figure
