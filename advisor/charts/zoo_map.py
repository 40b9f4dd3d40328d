"""Choose the model: published ImageNet top-1 accuracy against forward compute, circle area = parameters.

The top-left corner is the ideal (little compute, high accuracy); small circles are small models. The user's
own model, when it is a 1000-class image classifier, is drawn at its compute as a dashed line: its accuracy
is not known. The same Figure serves the app's "Choose the model" view and (later) the PDF report.
"""

from __future__ import annotations

from collections.abc import Sequence

from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter
from matplotlib.transforms import Bbox, BboxBase

from advisor.charts.labels import Offset, place_labels
from advisor.charts.style import ChartStyle, Text, empty_message, lettering, new_figure
from advisor.core.zoo.accuracy import SOURCE_URL, ModelPoint

MODELS_GID = "zoo-models"  # the scatter of the zoo's models (hit-testing for hover and click)
OWN_GID = "own-model"
CURRENT_GID = "current-model"
AREA_PER_MPARAM = 3.0  # marker area in pt^2 per million parameters: area is proportional to size
SIZE_KEYS = (5e6, 25e6, 100e6)
COLOR = "#4C72B0"


def gmacs(point: ModelPoint) -> float:
    return point.forward_macs / 1e9


def marker_area(param_count: int) -> float:
    return AREA_PER_MPARAM * param_count / 1e6


def point_text(point: ModelPoint, t: Text) -> str:
    """What hovering a model shows: its numbers."""
    lines = [point.name]
    if point.top1_percent is not None:
        lines.append(t("top-1 {value}%").format(value=f"{point.top1_percent:.1f}"))
    else:
        lines.append(t("accuracy unknown"))
    lines.append(t("{value} GMACs per image").format(value=f"{gmacs(point):.2f}"))
    lines.append(t("{value} M parameters").format(value=f"{point.param_count / 1e6:.1f}"))
    return "\n".join(lines)


def zoo_map_figure(
    points: Sequence[ModelPoint],
    own: ModelPoint | None = None,
    style: ChartStyle | None = None,
    current: str | None = None,
) -> Figure:
    """`own`: the user's model (compute known, accuracy not); `current`: the zoo model now loaded, ringed."""
    style = style or ChartStyle(width_in=7.2, height_in=4.8)
    t = style.text
    with lettering(style):
        figure = new_figure(style)
        shown = [p for p in points if p.top1_percent is not None and p.forward_macs > 0]
        if not shown:
            return empty_message(figure, t("No published accuracy to show"))
        axis = figure.add_subplot()
        x = [gmacs(p) for p in shown]
        y = [float(p.top1_percent or 0.0) for p in shown]
        axis.scatter(
            x,
            y,
            s=[marker_area(p.param_count) for p in shown],
            color=COLOR,
            alpha=0.55,
            edgecolors="#23395B",
            linewidths=0.6,
            gid=MODELS_GID,
            zorder=3,
        )
        axis.set_xscale("log")
        # plain numbers (0.1, 1, 10): mathtext powers of ten fall apart in SVG renderers (the PDF report)
        axis.xaxis.set_major_formatter(FuncFormatter(lambda value, _pos: f"{value:g}"))
        axis.set_ylim(min(y) - 3, max(y) + 4)
        spread_x = [*x, gmacs(own)] if own is not None else x  # the user's model inside the axes, too
        axis.set_xlim(min(spread_x) / 1.8, max(spread_x) * 1.8)
        for index, point in enumerate(shown):
            if point.name == current:
                axis.scatter(
                    [x[index]],
                    [y[index]],
                    s=marker_area(point.param_count) + 160,
                    facecolors="none",
                    edgecolors="#C44E52",
                    linewidths=2.0,
                    gid=CURRENT_GID,
                    zorder=4,
                )
        if own is not None:
            _own_model(axis, own, t)
        _ideal_corner(axis, t)
        _size_key(axis, t)
        axis.set_xlabel(t("Forward compute per image (GMACs, log scale)"))
        axis.set_ylabel(t("ImageNet top-1 accuracy (%)"))
        axis.set_title(t("Accuracy, compute and size of known models"))
        axis.grid(True, which="major", color="#E6E6E6", lw=0.6, zorder=0)
        # leave a strip under the axes for the source line (constrained layout does not see figure text)
        figure.get_layout_engine().set(rect=(0, 0.035, 1, 0.965))  # type: ignore[union-attr, call-arg]
        figure.text(
            0.01,
            0.005,
            t("Top-1: torchvision IMAGENET1K_V1 weights, acc@1") + f" ({SOURCE_URL})",
            fontsize=6.5,
            color="#666666",
            ha="left",
            va="bottom",
        )
        _labels(figure, axis, shown, x, y)  # last: the layout is final
    return figure


LABEL_POINTS = 7


def _offsets(radius: float) -> list[Offset]:
    """Where a name may go beside its circle, in points: right, left, above, below, then the corners."""
    gap = radius + 2
    return [
        (gap, -3, "left"),
        (-gap, -3, "right"),
        (0, gap, "center"),
        (0, -gap - LABEL_POINTS, "center"),
        (gap, gap / 2, "left"),
        (gap, -gap, "left"),
        (-gap, gap / 2, "right"),
        (-gap, -gap, "right"),
    ]


def _labels(figure: Figure, axis: Axes, shown: Sequence[ModelPoint], x: list[float], y: list[float]) -> None:
    """Names beside the circles, each at the first place where it covers no circle and no name already
    placed, measured after the layout (place_labels); a name with no such place is left to the hover text."""
    radii = [(marker_area(p.param_count) ** 0.5 / 1.772) for p in shown]  # points: area = pi r^2, sqrt(pi)
    labels = [
        axis.annotate(
            p.name,
            (x[i], y[i]),
            xytext=_offsets(radii[i])[0][:2],
            textcoords="offset points",
            fontsize=LABEL_POINTS,
            ha="left",
            zorder=4,
        )
        for i, p in enumerate(shown)
    ]

    def obstacles() -> list[BboxBase]:  # after the layout: the circles in pixels, and the size key
        scale, boxes = figure.dpi / 72, list[BboxBase]()  # the canvas's dpi (a HiDPI screen doubles it)
        for i in range(len(shown)):
            cx, cy = axis.transData.transform((x[i], y[i]))
            r = radii[i] * scale
            boxes.append(Bbox.from_extents(cx - r, cy - r, cx + r, cy + r))
        legend = axis.get_legend()
        return boxes + ([legend.get_window_extent()] if legend is not None else [])

    order = sorted(range(len(shown)), key=lambda i: -shown[i].param_count)  # big models first: most known
    place_labels(figure, [labels[i] for i in order], [_offsets(radii[i]) for i in order], obstacles)


def _own_model(axis: Axes, own: ModelPoint, t: Text) -> None:
    axis.axvline(gmacs(own), color="#C44E52", ls="--", lw=1.2, gid=OWN_GID, zorder=2)
    label = t("your model: {name}").format(name=own.name) + "\n" + t("accuracy unknown")
    low, high = axis.get_xlim()
    right_half = gmacs(own) > (low * high) ** 0.5  # log axis: the geometric middle
    # above the bottom tick labels, on the side with room, so it neither leaves the axes nor covers the ticks
    axis.text(
        gmacs(own),
        0.06,
        f" {label} " if right_half else f" {label}",
        transform=axis.get_xaxis_transform(),
        color="#C44E52",
        fontsize=7.5,
        ha="right" if right_half else "left",
        va="bottom",
        gid=OWN_GID + "-label",
        bbox={"boxstyle": "round,pad=0.2", "fc": "white", "ec": "none", "alpha": 0.8},
    )


def _ideal_corner(axis: Axes, t: Text) -> None:
    axis.annotate(
        t("ideal: fast, accurate, small"),
        xy=(0.0, 1.0),
        xycoords="axes fraction",
        xytext=(0.05, 0.9),
        textcoords="axes fraction",
        fontsize=8,
        color="#2E7D32",
        ha="left",
        va="top",
        arrowprops={"arrowstyle": "->", "color": "#2E7D32", "lw": 1.0},
    )


def _size_key(axis: Axes, t: Text) -> None:
    handles = [
        axis.scatter(
            [],
            [],
            s=marker_area(int(n)),
            color=COLOR,
            alpha=0.55,
            edgecolors="#23395B",
            linewidths=0.6,
            label=t("{value} M parameters").format(value=f"{n / 1e6:.0f}"),
        )
        for n in SIZE_KEYS
    ]
    axis.legend(
        handles=handles,
        loc="lower right",
        fontsize=7,
        labelspacing=1.6,
        borderpad=1.0,
        title=t("circle area"),
        title_fontsize=7,
        frameon=True,
    )
