"""The report's charts: the app's own Figure builders (advisor.charts), saved as SVG so that the PDF holds
them as vectors, with their text as real text (searchable, and sharp at any zoom).
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable

import matplotlib
from matplotlib.figure import Figure

from advisor.charts import CardLine, ChartStyle, batch_curve_figure, category_figure, layer_figure
from advisor.charts.job_cost import job_cost_figure
from advisor.charts.zoo_map import zoo_map_figure
from advisor.core.zoo.accuracy import TOP1, ModelPoint, estimate_point, zoo_points
from advisor.report.content import Report

TOP_LAYERS = 12
BATCH_CHART_CARDS = 3
_FAMILY = re.compile(rb"font-family: [^;\"]*")


def to_svg(figure: Figure, family: str) -> bytes:
    """SVG with text kept as <text> elements in one font family.

    matplotlib writes the whole fallback list ('Noto Sans CJK SC', 'DejaVu Sans'); Qt's SVG renderer does not
    honour the list and falls back to fontconfig's choice, whose CJK font is the Japanese variant (wrong glyph
    forms for Chinese). Naming only the first family, the one matplotlib measured the text with, keeps the
    layout and the glyphs as the app shows them.
    """
    buffer = io.BytesIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "advisor-report"}):
        figure.savefig(buffer, format="svg")
    return _FAMILY.sub(b"font-family: " + family.encode(), buffer.getvalue())


def chart_builders(report: Report, style: ChartStyle) -> dict[str, Callable[[], Figure]]:
    """Each chart the report shows, by the key its section names it with."""
    e = report.estimate
    short = ChartStyle(style.text, style.fonts, style.width_in, 2.3, style.dpi)
    fitting = [CardLine(r.card, r.usable_bytes) for r in report.ranking.rows if r.fits][:BATCH_CHART_CARDS]
    builders: dict[str, Callable[[], Figure]] = {
        "breakdown": lambda: category_figure(e.memory.at_peak.as_dict(), short, e.memory.peak_bytes),
        # inference keeps nothing for backward ("No layer uses any"): its layers' outputs, as the app shows
        "layers_memory": lambda: layer_figure(
            e.layers, "kept_bytes" if e.workload.training else "output_bytes", TOP_LAYERS, style
        ),
        "layers_compute": lambda: layer_figure(e.layers, "flops", TOP_LAYERS, style),
        "batch": lambda: batch_curve_figure(report.curve, report.required, e.workload.batch, fitting, style),
    }
    if report.ranking.costed:
        builders["job_cost"] = lambda: job_cost_figure(report.ranking.costed, style)
    if shows_model_map(report):
        tall = ChartStyle(style.text, style.fonts, style.width_in, style.width_in * 0.62, style.dpi)
        builders["model_map"] = lambda: zoo_map_figure(zoo_points(), own_point(report), tall)
    return builders


def own_point(report: Report) -> ModelPoint | None:
    """The report's model on the map, unless it is one of the zoo's classifiers (drawn there already)."""
    if report.source.removeprefix("zoo:") in TOP1:
        return None
    return estimate_point(report.estimate)


def shows_model_map(report: Report) -> bool:
    """The accuracy / compute / size map belongs in the report of an ImageNet-style image classifier."""
    return report.source.removeprefix("zoo:") in TOP1 or estimate_point(report.estimate) is not None


def chart_svgs(report: Report, style: ChartStyle) -> dict[str, bytes]:
    return {key: to_svg(build(), style.fonts[0]) for key, build in chart_builders(report, style).items()}
