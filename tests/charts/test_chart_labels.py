"""No chart prints a name over another (issue 27: the model map, memory vs batch, the job chart, the PDF's
bars), in English and in Chinese, measured on the drawn figure."""

from __future__ import annotations

import itertools

import pytest
from matplotlib.backend_bases import ResizeEvent
from matplotlib.figure import Figure
from matplotlib.text import Text
from PySide6.QtWidgets import QApplication

from advisor.catalog import open_catalog
from advisor.charts import CardLine, ChartStyle, batch_curve_figure, category_figure, layer_figure
from advisor.charts.job_cost import job_cost_figure
from advisor.charts.zoo_map import zoo_map_figure
from advisor.core import zoo
from advisor.core.analytic import estimate
from advisor.core.workload import Workload
from advisor.core.zoo.accuracy import zoo_points
from advisor.recommend.money import MoneyOptions
from advisor.recommend.prepare import prepare_spec
from advisor.recommend.ranking import RankingOptions
from advisor.recommend.recommendation import Recommendation
from advisor.recommend.service import CardFilter, recommend
from advisor.ui.i18n import set_language, tr

FONTS = {"en": ("DejaVu Sans",), "zh_CN": ("Noto Sans CJK SC", "DejaVu Sans")}


def _style(language: str, width_in: float, height_in: float) -> ChartStyle:
    return ChartStyle(text=tr, fonts=FONTS[language], width_in=width_in, height_in=height_in)


def _overlaps(figure: Figure, texts: list[Text]) -> list[tuple[str, str]]:
    figure.draw_without_rendering()
    boxes = [(t.get_text(), t.get_window_extent()) for t in texts if t.get_visible()]
    return [(a, b) for (a, box_a), (b, box_b) in itertools.combinations(boxes, 2) if box_a.overlaps(box_b)]


@pytest.fixture(scope="module")
def costed(tmp_path_factory: pytest.TempPathFactory) -> list[Recommendation]:
    catalog = open_catalog(tmp_path_factory.mktemp("catalog") / "c.sqlite3")
    job = prepare_spec("zoo:resnet50", Workload("train", 32, "amp_bf16", "adam"))
    with catalog.read() as session:
        entries = recommend(session, job, CardFilter(), RankingOptions(money=MoneyOptions(samples=1e8)))
    catalog.close()
    return entries


@pytest.mark.parametrize("language", ["en", "zh_CN"])
def test_the_model_maps_names_cover_no_name_and_no_circle(language: str, qapp: QApplication) -> None:
    # qapp: the app's language is held by its QApplication (advisor/ui/i18n)
    set_language(language)
    try:
        figure = zoo_map_figure(zoo_points(), None, _style(language, 7.2, 4.8))
    finally:
        set_language("en")
    axis = figure.axes[0]
    names = [t for t in axis.texts if t.get_text() in {p.name for p in zoo_points()}]
    assert not _overlaps(figure, names)
    shown = [t for t in names if t.get_visible()]
    assert len(shown) >= 0.8 * len(names) >= 16  # most are named; a crowded one is left to the hover text
    circles = axis.collections[0].get_offsets()
    pixels = axis.transData.transform(circles)
    for name in shown:  # no name sits on a circle's centre (they did: vgg16 and vgg11 over their circles)
        box = name.get_window_extent()
        assert not any(box.contains(x, y) for x, y in pixels), name.get_text()


@pytest.mark.parametrize("language", ["en", "zh_CN"])
def test_the_job_charts_names_do_not_overlap(costed: list[Recommendation], language: str, qapp: QApplication) -> None:
    set_language(language)
    try:
        figure = job_cost_figure(costed, _style(language, 6.0, 3.0))
    finally:
        set_language("en")
    axis = figure.axes[0]
    names = [t for t in axis.texts if t.get_visible()]
    assert len(names) >= 3 and not _overlaps(figure, names)
    legend = axis.get_legend().get_window_extent()
    assert not any(t.get_window_extent().overlaps(legend) for t in names)


def test_cards_with_the_same_memory_share_one_line(costed: list[Recommendation]) -> None:
    a580 = next(e for e in costed if e.card == "Arc A580")
    cards = [
        CardLine("Arc A580", a580.usable_bytes),
        CardLine("Arc A750", a580.usable_bytes),
        CardLine("RTX 4090", 23 * 2**30),
    ]
    job = prepare_spec("zoo:resnet50", Workload("train", 32, "amp_bf16", "adam"))
    figure = batch_curve_figure(job.curve, job.required, 32, cards, ChartStyle())
    labels = [t.get_text().strip() for t in figure.axes[0].texts]
    assert labels == ["Arc A580, Arc A750", "RTX 4090"]  # one line each, not two lines drawn over each other
    assert not _overlaps(figure, list(figure.axes[0].texts))


def test_a_bars_label_stands_off_its_bar_by_points_not_spaces() -> None:
    """SVG collapses leading spaces, so the PDF's labels touched their bars: the gap is an offset now."""
    figure = category_figure({"weights": 3 * 2**30, "activations": 2**30, "inputs": 2**20})
    labels = figure.axes[0].texts
    assert [t.get_text() for t in labels] == ["1.00 MiB (0%)", "1.00 GiB (25%)", "3.00 GiB (75%)"]
    assert all(t.xyann == (4, 0) and not t.get_text().startswith(" ") for t in labels)  # type: ignore[attr-defined]


def test_names_are_placed_again_when_the_canvas_resizes(costed: list[Recommendation]) -> None:
    """The app's chart takes its widget's size (4 x 2.4 inches beside the ranking at 1280x720): the names
    placed for 6 x 3 inches overlapped there."""
    figure = job_cost_figure(costed, _style("en", 6.0, 3.0))
    figure.set_size_inches(4.0, 2.4)
    figure.canvas.callbacks.process("resize_event", ResizeEvent("resize_event", figure.canvas))
    names = [t for t in figure.axes[0].texts if t.get_visible()]
    assert names and not _overlaps(figure, names)
    axes = figure.axes[0].get_window_extent()
    assert all(axes.x0 <= t.get_window_extent().x0 and t.get_window_extent().x1 <= axes.x1 for t in names)


@pytest.mark.parametrize("height_in", [3.6, 1.8])
def test_the_layer_charts_names_do_not_overlap_however_short(height_in: float) -> None:
    """15 layer names at 7 pt printed over each other where the app gave the chart 170 pixels."""
    rows = estimate(zoo.build("resnet18"), Workload(batch=16)).layers
    figure = layer_figure(rows, "kept_bytes", 15, ChartStyle(height_in=3.6))
    figure.set_size_inches(6.4, height_in)
    figure.canvas.callbacks.process("resize_event", ResizeEvent("resize_event", figure.canvas))
    names = [t for t in figure.axes[0].get_yticklabels() if t.get_text()]
    assert len(names) >= (15 if height_in > 3 else 5)  # all at full height; every second one when short
    assert not _overlaps(figure, names)
