"""The model map: accuracy against compute on a log axis, circle area = parameters, source and own model."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
from matplotlib.collections import PathCollection
from matplotlib.figure import Figure
from matplotlib.image import imread

from advisor.charts.zoo_map import MODELS_GID, OWN_GID, marker_area, point_text, zoo_map_figure
from advisor.core import zoo
from advisor.core.analytic import estimate
from advisor.core.workload import Workload
from advisor.core.zoo.accuracy import TOP1, ModelPoint, is_imagenet_classifier, zoo_points


def models(figure: Figure) -> PathCollection:
    (found,) = [c for c in figure.axes[0].collections if c.get_gid() == MODELS_GID]
    assert isinstance(found, PathCollection)
    return found


def test_every_accuracy_is_torchvisions_v1_figure_for_a_zoo_classifier() -> None:
    assert TOP1["resnet50"] == ("ResNet50_Weights.IMAGENET1K_V1", 76.130)
    assert TOP1["vit_b_16"] == ("ViT_B_16_Weights.IMAGENET1K_V1", 81.072)
    for name, (weights, top1) in TOP1.items():
        assert name in zoo.zoo_names() and weights.endswith(".IMAGENET1K_V1") and 50 < top1 < 90
        graph = zoo.build(name)
        assert is_imagenet_classifier(graph.task, graph.nodes[-1].output.shape)


def test_points_are_the_zoo_graphs_own_compute_and_size() -> None:
    points = {p.name: p for p in zoo_points()}
    resnet = estimate(zoo.build("resnet50"), Workload(mode="infer", batch=1))
    assert points["resnet50"].forward_macs == resnet.forward_macs  # 4.09 G, torchvision's "GFLOPS" 4.09
    assert points["resnet50"].param_count == 25_557_032


def test_chart_draws_every_model_with_area_proportional_to_parameters() -> None:
    points = zoo_points()
    figure = zoo_map_figure(points)
    figure.savefig(io.BytesIO(), format="png")
    axis = figure.axes[0]
    drawn = models(figure)
    assert axis.get_xscale() == "log"
    assert len(drawn.get_offsets()) == len(points)
    sizes = drawn.get_sizes()
    assert list(sizes) == pytest.approx([marker_area(p.param_count) for p in points])
    big, small = max(points, key=lambda p: p.param_count), min(points, key=lambda p: p.param_count)
    ratio = sizes[points.index(big)] / sizes[points.index(small)]
    assert ratio == pytest.approx(big.param_count / small.param_count)
    texts = [t.get_text() for t in [*axis.texts, *figure.texts]]
    assert any("IMAGENET1K_V1" in t and "pytorch.org/vision" in t for t in texts)  # the source, on the chart
    assert any(t.startswith("ideal") for t in texts)
    assert not any(line.get_gid() == OWN_GID for line in axis.lines)


def test_own_model_is_a_line_at_its_compute_with_accuracy_unknown() -> None:
    own = ModelPoint("my_net", 2_000_000_000, 9_000_000, None)
    figure = zoo_map_figure(zoo_points(), own)
    (line,) = [line for line in figure.axes[0].lines if line.get_gid() == OWN_GID]
    assert list(line.get_xdata()) == [2.0, 2.0]
    assert any("accuracy unknown" in t.get_text() and "my_net" in t.get_text() for t in figure.axes[0].texts)
    assert "accuracy unknown" in point_text(own, str)


def test_hover_text_shows_the_numbers() -> None:
    resnet = next(p for p in zoo_points() if p.name == "resnet50")
    assert point_text(resnet, str) == "resnet50\ntop-1 76.1%\n4.09 GMACs per image\n25.6 M parameters"


def test_screenshot(tmp_path: Path) -> None:
    figure = zoo_map_figure(zoo_points(), ModelPoint("my_net", 2_100_000_000, 9_000_000, None))
    out = tmp_path / "zoo_map.png"
    figure.savefig(out, dpi=130)
    pixels = imread(out)
    width_in, height_in = figure.get_size_inches()
    assert pixels.shape[:2] == (round(height_in * 130), round(width_in * 130))  # inches x dots per inch
    assert len(np.unique(pixels.reshape(-1, pixels.shape[-1]), axis=0)) > 100  # drawn, not a blank canvas


def test_log_axis_ticks_are_plain_numbers() -> None:
    from advisor.charts.zoo_map import zoo_map_figure
    from advisor.core.zoo.accuracy import zoo_points

    figure = zoo_map_figure(zoo_points())
    figure.canvas.draw()
    labels = {t.get_text() for t in figure.axes[0].get_xticklabels() if t.get_text()}
    assert {"0.1", "1", "10"} <= labels  # not mathtext powers like $\mathdefault{10^{-1}}$


def test_own_model_past_the_known_ones_stays_inside_the_axes_and_the_loaded_one_is_ringed() -> None:
    from advisor.charts.zoo_map import CURRENT_GID

    huge = ModelPoint("my_giant", 900_000_000_000, 2_000_000_000, None)  # 900 GMACs, past vit_l_16's ~61
    figure = zoo_map_figure(zoo_points(), huge, current="resnet50")
    axis = figure.axes[0]
    low, high = axis.get_xlim()
    assert low < 900 < high
    (label,) = [t for t in axis.texts if t.get_gid() == OWN_GID + "-label"]
    assert label.get_horizontalalignment() == "right"  # on the right half, the text runs leftwards, inside
    (ring,) = [c for c in axis.collections if c.get_gid() == CURRENT_GID]
    resnet50 = next(p for p in zoo_points() if p.name == "resnet50")
    assert tuple(ring.get_offsets()[0]) == pytest.approx((resnet50.forward_macs / 1e9, resnet50.top1_percent))
