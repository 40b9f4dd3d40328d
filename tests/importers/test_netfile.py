"""Networks saved as .json: round trip of every zoo model, and errors that name the file, layer and field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from advisor.core import zoo
from advisor.core.errors import SpecError
from advisor.importers.netfile import graph_to_json, load_graph_file, save_graph
from advisor.importers.spec_graph import load_graph


@pytest.mark.parametrize("name", ["seed:mlp", "resnet18", "gpt2", "swin_t"])
def test_round_trip_gives_the_same_graph(tmp_path: Path, name: str) -> None:
    graph = zoo.build(name)
    path = tmp_path / "net.json"
    save_graph(graph, path)
    assert load_graph_file(path) == graph
    assert load_graph(str(path)) == graph  # the SPEC form FILE.json


def write(tmp_path: Path, layers: list[dict[str, object]]) -> Path:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"format": "advisor-network", "version": 1, "name": "n", "layers": layers}))
    return path


def test_hand_written_network_defaults_inputs_to_the_layer_before(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        [
            {"name": "x", "kind": "input", "params": {"shape": [784]}},
            {"name": "fc", "kind": "linear", "params": {"out_features": 10}},
        ],
    )
    graph = load_graph_file(path)
    assert graph.nodes[1].inputs == (0,)
    assert graph.nodes[1].output.shape == (10,)
    assert "inputs" not in graph_to_json(graph)["layers"][1]


@pytest.mark.parametrize(
    ("layers", "message"),
    [
        (
            [
                {"name": "x", "kind": "input", "params": {"shape": [8]}},
                {"name": "fc", "kind": "linear", "params": {"out_features": "ten"}},
            ],
            "fc: field out_features: expected a whole",
        ),
        (
            [{"name": "x", "kind": "input", "params": {"shape": [8]}}, {"name": "fc", "kind": "linaer"}],
            "fc: unknown layer kind 'linaer'",
        ),
        (
            [
                {"name": "x", "kind": "input", "params": {"shape": [8]}},
                {"name": "c", "kind": "conv", "params": {"out_channels": 4, "kernel_size": 3}},
            ],
            "c: ",
        ),
        (
            [
                {"name": "x", "kind": "input", "params": {"shape": [8]}},
                {"name": "fc", "kind": "linear", "inputs": ["y"]},
            ],
            "fc: input 'y' is not a layer before",
        ),
        ([{"name": "x", "kind": "input", "params": {"shape": [8], "colour": 1}}], "x: input has no field 'colour'"),
    ],
)
def test_errors_name_the_file_layer_and_field(tmp_path: Path, layers: list[dict[str, object]], message: str) -> None:
    path = write(tmp_path, layers)
    with pytest.raises(SpecError) as caught:
        load_graph_file(path)
    assert str(caught.value).startswith(f"{path}: ")
    assert message in str(caught.value)


def test_not_json_and_not_a_network(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text("{oops")
    with pytest.raises(SpecError, match="not valid JSON"):
        load_graph_file(path)
    path.write_text("{}")
    with pytest.raises(SpecError, match="not an advisor network"):
        load_graph_file(path)
    with pytest.raises(SpecError, match="cannot read"):
        load_graph_file(tmp_path / "missing.json")
