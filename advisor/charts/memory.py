"""Where the memory and the compute go: the breakdown at the peak, per layer, over the step, and by batch."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from matplotlib.axes import Axes
from matplotlib.figure import Figure

from advisor.charts.style import (
    CATEGORY_COLORS,
    ChartStyle,
    bytes_axis,
    empty_message,
    lettering,
    new_figure,
)
from advisor.core.curve import MemoryCurve
from advisor.core.estimate import LayerRow
from advisor.core.tracker import TimelinePoint
from advisor.core.units import format_bytes, format_count

PHASE_COLORS = {"forward": "#E8F0FA", "recompute": "#F4ECF7", "backward": "#FBEDE4", "optimizer step": "#E9F5EC"}
LAYER_METRICS = ("kept_bytes", "output_bytes", "flops")


@dataclass(frozen=True)
class CardLine:
    """A card drawn across the memory-vs-batch chart at the memory a step may use on it."""

    label: str
    usable_bytes: int


def category_figure(
    at_peak: Mapping[str, int], style: ChartStyle | None = None, peak_bytes: int | None = None
) -> Figure:
    """One bar per memory category at the step's peak, largest on top, each labelled with its size and share,
    so the biggest consumer reads at a glance (a single stacked bar hid the small categories). `peak_bytes`:
    the estimate's peak for the title, the figure the headline shows (the categories of a simulated step
    can add up to a little less: 224.73 against 225.36 MiB)."""
    style = style or ChartStyle(height_in=2.2)
    t = style.text
    with lettering(style):
        figure = new_figure(style)
        total = sum(at_peak.values())
        if total <= 0:
            return empty_message(figure, t("No estimate yet"))
        axis = figure.add_subplot()
        shown = sorted(((n, v) for n, v in at_peak.items() if v > 0), key=lambda item: item[1])
        for row, (name, value) in enumerate(shown):  # drawn bottom-up: the largest ends on top
            axis.barh([row], [value], color=CATEGORY_COLORS.get(name, "#999999"), gid=name, height=0.7)
            # an offset in points, not leading spaces: SVG (the PDF's charts) collapses them onto the bar's end
            axis.annotate(
                f"{format_bytes(value)} ({value / total:.0%})",
                (value, row),
                xytext=(4, 0),
                textcoords="offset points",
                va="center",
                fontsize=8,
            )
        axis.set_yticks(range(len(shown)), [t(name) for name, _ in shown])
        axis.set_xlim(0, shown[-1][1] * 1.35)  # room for the largest bar's label
        bytes_axis(axis, "x")
        axis.set_xlabel(t("Memory at the peak"))
        axis.set_title(t("Peak {total} by category").format(total=format_bytes(peak_bytes or total)))
    return figure


def _layer_value(row: LayerRow, metric: str) -> float:
    if metric == "flops":
        return row.forward_flops + row.backward_flops
    return float(getattr(row, metric))


def layer_figure(
    rows: Sequence[LayerRow], metric: str = "kept_bytes", top: int = 15, style: ChartStyle | None = None
) -> Figure:
    """The `top` layers by `metric` (kept_bytes, output_bytes or flops = forward + backward), largest on top."""
    if metric not in LAYER_METRICS:
        raise ValueError(f"metric must be one of {', '.join(LAYER_METRICS)}, got {metric!r}")
    style = style or ChartStyle()
    t = style.text
    ranked = sorted((r for r in rows if _layer_value(r, metric) > 0), key=lambda r: -_layer_value(r, metric))
    shown = ranked[:top][::-1]  # barh draws bottom-up; the largest belongs at the top
    with lettering(style):
        figure = new_figure(style)
        if not shown:
            return empty_message(figure, t("No layer uses any"))
        axis = figure.add_subplot()
        values = [_layer_value(r, metric) for r in shown]
        axis.barh(range(len(shown)), values, color="#4C72B0" if metric != "flops" else "#DD8452")
        axis.set_yticks(range(len(shown)), [r.name for r in shown], fontsize=7)
        _fit_names(figure, axis, [r.name for r in shown])
        if metric == "flops":
            axis.xaxis.set_major_formatter(lambda value, _pos: format_count(value))
            axis.set_xlabel(t("FLOPs per step (forward + backward)"))
        else:
            bytes_axis(axis, "x")
            axis.set_xlabel(t("Kept for backward") if metric == "kept_bytes" else t("Output size"))
        axis.set_title(t("Top {n} layers").format(n=len(shown)))
    return figure


NAME_POINTS, SMALLEST_NAME_POINTS = 7.0, 5.0


def _fit_names(figure: Figure, axis: Axes, names: list[str]) -> None:
    """The bars' names at a size their rows hold, and every second one when even the smallest overlaps (in
    the app the chart takes its widget's height: 15 names at 7 pt printed over each other in 170 pixels);
    again on each resize."""

    def fit(_event: object = None) -> None:
        figure.draw_without_rendering()  # constrained layout: the axes' height once title and labels are in
        row_points = axis.get_position().height * figure.get_figheight() * 72 / max(len(names), 1)
        size = max(SMALLEST_NAME_POINTS, min(NAME_POINTS, row_points * 0.85))
        step = max(1, math.ceil(size / (row_points * 0.85)))  # the largest (top) bar always keeps its name
        top = len(names) - 1
        axis.set_yticks(
            range(len(names)), [n if (top - i) % step == 0 else "" for i, n in enumerate(names)], fontsize=size
        )

    fit()
    figure.canvas.mpl_connect("resize_event", fit)


def _phase_spans(points: Sequence[TimelinePoint]) -> list[tuple[str, int, int]]:
    spans: list[tuple[str, int, int]] = []
    for index, point in enumerate(points):
        if spans and spans[-1][0] == point.phase:
            spans[-1] = (point.phase, spans[-1][1], index)
        else:
            spans.append((point.phase, index, index))
    return spans


def timeline_figure(
    points: Sequence[TimelinePoint], style: ChartStyle | None = None, peak_bytes: int | None = None
) -> Figure:
    """Allocated bytes after each layer's forward and backward and the optimizer step; the peak marked.

    The points are sampled between layers, so a layer's own temporaries can lift the true peak above the
    highest point: the marker's label shows `peak_bytes` (the estimate's headline figure) when given."""
    style = style or ChartStyle()
    t = style.text
    with lettering(style):
        figure = new_figure(style)
        if not points:
            return empty_message(figure, t("No estimate yet"))
        axis = figure.add_subplot()
        for phase, start, end in _phase_spans(points):
            axis.axvspan(start - 0.5, end + 0.5, color=PHASE_COLORS.get(phase, "#F2F2F2"), lw=0)
            # the optimizer step is one point at the right edge: right-align its label so it is not cut off
            last = end == len(points) - 1 and end - start < len(points) / 8
            axis.text(
                end + 0.5 if last else (start + end) / 2,
                1.0,
                t(phase),
                transform=axis.get_xaxis_transform(),
                ha="right" if last else "center",
                va="bottom",
                fontsize=8,
            )
        totals = [p.total_bytes for p in points]
        axis.step(range(len(points)), totals, where="mid", color="#333333", lw=1.2, gid="allocated")
        peak = max(range(len(points)), key=totals.__getitem__)
        axis.plot([peak], [totals[peak]], "o", color="#C44E52", gid="peak")
        label = format_bytes(max(peak_bytes or 0, totals[peak]))
        axis.annotate(
            t("peak {value}").format(value=label),
            (peak, totals[peak]),
            xytext=(6, 6),
            textcoords="offset points",
            fontsize=8,
            color="#C44E52",
        )
        axis.set_ylim(0, totals[peak] * 1.12)
        axis.set_xlim(-0.5, len(points) - 0.5)
        bytes_axis(axis)
        axis.set_xlabel(t("Step of the training loop (layer by layer)"))
        axis.set_ylabel(t("Allocated"))
    return figure


def _batch_range(required: MemoryCurve, batch: int, cards: Sequence[CardLine]) -> int:
    """Far enough right to show the current batch and where each card runs out, within reason."""
    ends = [2 * batch, 16]
    ends += [int(required.max_batch(c.usable_bytes) * 1.15) for c in cards]
    return max(2, min(max(ends), 1 << 16))


LABEL_GAP = 0.05  # of the y range: about one line of 8-point text on the app's and the report's charts


def spread(values: Sequence[float], gap: float) -> list[float]:
    """Label heights near `values` (same order) that are at least `gap` apart, each moved up only as far as
    needed, so card names whose memory is close (24 and 24.5 GiB) do not print over each other."""
    placed = [0.0] * len(values)
    floor = float("-inf")
    for index in sorted(range(len(values)), key=values.__getitem__):
        placed[index] = max(values[index], floor + gap)
        floor = placed[index]
    return placed


def same_memory(cards: Sequence[CardLine]) -> list[CardLine]:
    """One line for cards that leave the same memory usable (Arc A580 and A750: 7.22 GiB), named after all
    of them: two lines drawn over each other showed one colour and two names, one far above its line."""
    merged: dict[int, list[str]] = {}
    for card in cards:
        merged.setdefault(card.usable_bytes, []).append(card.label)
    return [CardLine(", ".join(names), usable) for usable, names in merged.items()]


def batch_curve_figure(
    curve: MemoryCurve,
    required: MemoryCurve,
    batch: int,
    cards: Sequence[CardLine] = (),
    style: ChartStyle | None = None,
) -> Figure:
    """Peak and required memory against the batch, with a horizontal line at each card's usable memory.

    A card fits a batch where the required curve (the peak plus what the caching allocator cannot reuse,
    core/budget.py) stays under its line, which is how the recommendations decide.
    """
    style = style or ChartStyle()
    t = style.text
    with lettering(style):
        figure = new_figure(style)
        axis = figure.add_subplot()
        last = _batch_range(required, batch, cards)
        step = max(1, last // 200)
        batches = list(range(1, last + 1, step))
        peaks = [curve.peak_bytes(b) for b in batches]
        axis.plot(batches, peaks, color="#333333", label=t("peak allocated"), gid="peak")
        needs = [required.peak_bytes(b) for b in batches]
        axis.plot(
            batches, needs, color="#333333", ls="--", label=t("required (with allocator overhead)"), gid="required"
        )
        axis.axvline(batch, color="#C44E52", lw=1, ls=":", label=t("batch {batch}").format(batch=batch))
        top = max([needs[-1], *(c.usable_bytes for c in cards)]) * 1.08
        lines = same_memory(cards)
        heights = spread([c.usable_bytes for c in lines], top * LABEL_GAP)
        for index, (card, height) in enumerate(zip(lines, heights, strict=True)):
            axis.axhline(card.usable_bytes, color=f"C{index}", lw=1.2, gid=f"card:{card.label}")
            # on a white ground: the rising curves cross the lines where the names sit, at the right edge
            axis.text(
                batches[-1],
                height,
                f"{card.label} ",
                va="bottom",
                ha="right",
                fontsize=8,
                color=f"C{index}",
                gid=f"label:{card.label}",
                zorder=5,
                bbox={"boxstyle": "square,pad=0.1", "fc": "white", "ec": "none", "alpha": 0.85},
            )
        axis.set_xlim(1, last)
        axis.set_ylim(0, max(top, max(heights, default=0) + top * LABEL_GAP))
        bytes_axis(axis)
        axis.set_xlabel(t("Batch size"))
        axis.set_ylabel(t("Memory per card"))
        axis.legend(loc="upper left", fontsize=8)
    return figure
