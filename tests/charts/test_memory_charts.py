"""Chart builders render to PNG through Agg and draw what they are given."""

from __future__ import annotations

import io
import itertools
from dataclasses import replace

import pytest
from matplotlib.container import BarContainer
from matplotlib.figure import Figure

from advisor.charts import CardLine, ChartStyle, batch_curve_figure, category_figure, layer_figure, timeline_figure
from advisor.core import zoo
from advisor.core.analytic import estimate
from advisor.core.budget import analytic_curves
from advisor.core.estimate import Estimate
from advisor.core.workload import Workload


@pytest.fixture(scope="module")
def resnet() -> Estimate:
    return estimate(zoo.build("resnet18"), Workload(batch=16))


def png(figure: Figure) -> bytes:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    data = buffer.getvalue()
    assert data.startswith(b"\x89PNG")
    return data


def bars(figure: Figure) -> list[BarContainer]:
    return [c for c in figure.axes[0].containers if isinstance(c, BarContainer)]


def test_category_bars_are_sorted_and_labelled_with_size_and_share(resnet: Estimate) -> None:
    at_peak = resnet.memory.at_peak.as_dict()
    figure = category_figure(at_peak)
    png(figure)
    drawn = bars(figure)
    nonzero = {n: v for n, v in at_peak.items() if v > 0}
    assert len(drawn) == len(nonzero)
    widths = [c.patches[0].get_width() for c in drawn]
    assert widths == sorted(nonzero.values())  # bottom-up, so the largest category is the top bar
    assert sum(widths) == pytest.approx(sum(at_peak.values()))
    labels = [t.get_text() for t in figure.axes[0].texts]
    largest = max(nonzero.values())
    assert any(f"({largest / sum(nonzero.values()):.0%})" in label for label in labels)
    assert figure.axes[0].get_xlabel() == "Memory at the peak"


def test_category_bar_without_bytes_says_so() -> None:
    figure = category_figure(dict.fromkeys(("weights", "activations"), 0))
    png(figure)
    assert not figure.axes
    assert figure.texts[0].get_text() == "No estimate yet"


def test_layer_chart_shows_the_top_n_largest_first(resnet: Estimate) -> None:
    figure = layer_figure(resnet.layers, "kept_bytes", top=5)
    png(figure)
    (container,) = bars(figure)
    widths = [p.get_width() for p in container.patches]
    assert len(widths) == 5
    assert widths == sorted(widths)  # drawn bottom-up, so the largest is the top bar
    assert widths[-1] == max(r.kept_bytes for r in resnet.layers)
    labels = [t.get_text() for t in figure.axes[0].get_yticklabels()]
    assert labels[-1] == max(resnet.layers, key=lambda r: r.kept_bytes).name


def test_layer_flops_counts_forward_and_backward(resnet: Estimate) -> None:
    figure = layer_figure(resnet.layers, "flops", top=3)
    png(figure)
    top = max(resnet.layers, key=lambda r: r.forward_flops + r.backward_flops)
    assert bars(figure)[0].patches[-1].get_width() == top.forward_flops + top.backward_flops
    assert "FLOPs" in figure.axes[0].get_xlabel()
    with pytest.raises(ValueError, match="metric"):
        layer_figure(resnet.layers, "watts")


def test_timeline_marks_the_estimate_peak(resnet: Estimate) -> None:
    figure = timeline_figure(resnet.timeline)
    png(figure)
    axis = figure.axes[0]
    (peak,) = [line for line in axis.lines if line.get_gid() == "peak"]
    assert peak.get_ydata()[0] == max(p.total_bytes for p in resnet.timeline)
    phases = {t.get_text() for t in axis.texts}
    assert {"forward", "backward", "optimizer step"} <= phases


def test_batch_curve_puts_card_lines_at_usable_memory() -> None:
    graph = zoo.build("resnet18")
    curve, required = analytic_curves(graph, Workload(batch=16), ())
    cards = [CardLine("RTX 4090", 22 * 2**30), CardLine("T4", 14 * 2**30)]
    figure = batch_curve_figure(curve, required, 16, cards)
    png(figure)
    axis = figure.axes[0]
    lines = {line.get_gid(): line for line in axis.lines}
    assert lines["card:RTX 4090"].get_ydata()[0] == 22 * 2**30
    assert lines["card:T4"].get_ydata()[0] == 14 * 2**30
    peak = lines["peak"]
    assert peak.get_ydata()[0] == curve.peak_bytes(1)
    assert peak.get_xdata()[-1] >= required.max_batch(22 * 2**30)  # the 4090's limit is on the chart
    needs = lines["required"]
    assert needs.get_ydata()[0] == required.peak_bytes(1) > peak.get_ydata()[0]
    assert axis.get_xlabel() == "Batch size"


def test_labels_go_through_the_text_function(resnet: Estimate) -> None:
    style = ChartStyle(text=lambda s: {"Batch size": "批大小"}.get(s, s), fonts=("Noto Sans CJK SC", "DejaVu Sans"))
    curve, required = analytic_curves(zoo.build("resnet18"), replace(resnet.workload), ())
    figure = batch_curve_figure(curve, required, 16, style=style)
    png(figure)
    assert figure.axes[0].get_xlabel() == "批大小"
    assert figure.axes[0].xaxis.label.get_fontfamily()[0] == "Noto Sans CJK SC"


def test_step_chart_peak_label_is_the_estimates_peak(resnet: Estimate) -> None:
    """The timeline samples between layers; a layer's temporaries can lift the true peak above every sample,
    and the marker must still say the headline figure."""
    from advisor.core.units import format_bytes

    sampled = max(p.total_bytes for p in resnet.timeline)
    figure = timeline_figure(resnet.timeline, peak_bytes=resnet.memory.peak_bytes)
    labels = [t.get_text() for t in figure.axes[0].texts if t.get_text().startswith("peak")]
    assert labels == [f"peak {format_bytes(max(sampled, resnet.memory.peak_bytes))}"]
    assert resnet.memory.peak_bytes >= sampled


def test_card_labels_on_memory_vs_batch_do_not_overlap(resnet: Estimate) -> None:
    from advisor.charts.memory import LABEL_GAP, spread

    # in height order: 10 stays, 10.2 -> 10 + 2 = 12, 10.5 -> 12 + 2 = 14, 30 stays
    assert spread([10.0, 10.5, 30.0, 10.2], 2.0) == [10.0, 14.0, 30.0, 12.0]
    curve, required = analytic_curves(zoo.build("resnet18"), Workload(batch=16), ())
    gib = 2**30
    cards = [CardLine("A 24 GB", 23 * gib), CardLine("B 24 GB", int(23.2 * gib)), CardLine("C 80 GB", 79 * gib)]
    figure = batch_curve_figure(curve, required, 16, cards)
    axis = figure.axes[0]
    heights = sorted(t.get_position()[1] for t in axis.texts if str(t.get_gid()).startswith("label:"))
    span = axis.get_ylim()[1]
    assert len(heights) == 3
    assert all(b - a >= span * LABEL_GAP * 0.99 for a, b in itertools.pairwise(heights))


def test_the_category_chart_is_titled_with_the_headlines_peak() -> None:
    # a simulated step's categories can add up to a little less than its peak: the title says the peak
    at_peak = {"weights": 150 * 2**20, "activations": 74 * 2**20 + 747 * 2**10}  # 224.73 MiB in all
    figure = category_figure(at_peak, peak_bytes=225 * 2**20 + 369 * 2**10)  # 225.36 MiB
    assert figure.axes[0].get_title() == "Peak 225.36 MiB by category"
    assert category_figure(at_peak).axes[0].get_title() == "Peak 224.73 MiB by category"
