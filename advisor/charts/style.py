"""Colours, fonts and byte axes common to every chart."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import matplotlib
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, MaxNLocator

from advisor.core.units import GIB, MIB, format_bytes

# One colour per memory category, the same in every chart and in the report.
CATEGORY_COLORS: dict[str, str] = {
    "weights": "#4C72B0",
    "gradients": "#DD8452",
    "optimizer_state": "#55A868",
    "activations": "#C44E52",
    "temporaries": "#8172B3",
    "inputs": "#937860",
    "kv_cache": "#DA8BC3",
}

Text = Callable[[str], str]


def _same(text: str) -> str:
    return text


@dataclass(frozen=True)
class ChartStyle:
    """How a chart is lettered: a translation function and the font families to try, in order.

    Chinese labels need a CJK font; matplotlib falls back glyph by glyph only within this list.
    """

    text: Text = _same
    fonts: tuple[str, ...] = field(default=("DejaVu Sans",))
    width_in: float = 6.4
    height_in: float = 3.6
    dpi: int = 100


@contextmanager
def lettering(style: ChartStyle) -> Iterator[None]:
    # Text objects read the font from rcParams when they are created, so build inside this context.
    with matplotlib.rc_context({"font.family": list(style.fonts), "axes.unicode_minus": False}):
        yield


def new_figure(style: ChartStyle) -> Figure:
    return Figure(figsize=(style.width_in, style.height_in), dpi=style.dpi, layout="constrained")


class BytesLocator(MaxNLocator):
    """Ticks at round numbers of GiB/MiB/KiB (2, 4, 6 GiB), not at round numbers of bytes."""

    def tick_values(self, vmin: float, vmax: float) -> list[float]:
        unit = next((u for u in (GIB, MIB, 1024) if max(abs(vmin), abs(vmax)) >= u), 1)
        return [float(v) * unit for v in super().tick_values(vmin / unit, vmax / unit)]


def _tick_label(value: float, _pos: object) -> str:
    if not value:
        return "0"
    text = format_bytes(value)
    number, _, unit = text.partition(" ")
    return f"{float(number):g} {unit}"  # "2.00 GiB" -> "2 GiB" on an axis


def bytes_axis(axis: Axes, which: str = "y") -> None:
    target = axis.yaxis if which == "y" else axis.xaxis
    target.set_major_locator(BytesLocator(nbins=6, steps=[1, 2, 2.5, 5, 10]))
    target.set_major_formatter(FuncFormatter(_tick_label))


def empty_message(figure: Figure, message: str) -> Figure:
    """A figure that says why there is nothing to draw, rather than empty axes."""
    figure.text(0.5, 0.5, message, ha="center", va="center", fontsize=11, color="#666666")
    return figure
