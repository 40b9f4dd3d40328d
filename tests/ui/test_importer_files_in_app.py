"""Every importer's test file goes through the app's draft unchanged and gets the command line's figures:
the app estimates the draft's graph (recommend.prepare.prepare_graph, as AppState does) and the command line
the SPEC (prepare_spec, as `advisor estimate`); both must agree on every memory figure (issue 27: a file whose
graph held a kind the draft did not know could not be estimated in the app at all)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
import torch
from test_state_view import TINY_RES

from advisor.appstate import check, drafts_from_graph
from advisor.core.workload import Workload
from advisor.importers.netfile import save_graph
from advisor.importers.spec_graph import load_graph
from advisor.recommend.prepare import prepare_graph, prepare_spec
from tests.importers.model_files import TINY_CNN, onnx_mlp_bytes, write_gpt2_safetensors


def _py(text: str) -> Callable[[Path], Path]:
    def write(folder: Path) -> Path:
        path = folder / "model.py"
        path.write_text(text)
        return path

    return write


def _state_dict(folder: Path) -> Path:
    path = folder / "weights.pth"  # a plain state_dict: parameter counts only
    torch.save(torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Linear(8, 2)).state_dict(), path)
    return path


def _onnx(folder: Path) -> Path:
    path = folder / "mlp.onnx"
    path.write_bytes(onnx_mlp_bytes())
    return path


def _netfile(folder: Path) -> Path:
    path = folder / "saved.json"
    save_graph(load_graph(str(_py(TINY_RES)(folder)), 512), path)
    return path


FILES = {
    "tiny_cnn.py": _py(TINY_CNN),
    "opaque_ops.py": _py(TINY_RES),
    "state_dict.pth": _state_dict,
    "mlp.onnx": _onnx,
    "gpt2.safetensors": write_gpt2_safetensors,
    "network.json": _netfile,
}


@pytest.mark.parametrize("name", sorted(FILES))
def test_an_importer_file_gets_the_command_lines_figures_in_the_app(name: str, tmp_path: Path) -> None:
    path = str(FILES[name](tmp_path))
    # what the window's open_file passes: the workload's sequence length (the tiny GPT-2 has 32 positions)
    seq_len = None if path.endswith(".json") else 16 if name.startswith("gpt2") else 512
    graph = load_graph(path, seq_len)
    drafted = check(graph.name, graph.task, drafts_from_graph(graph))
    assert drafted.errors == {} and drafted.graph == graph
    workload = Workload("train", 4, "fp32", "adam")
    app = prepare_graph(drafted.graph, workload).estimate
    cli = prepare_spec(path, workload, seq_len=seq_len, method="analytic").estimate
    assert (app.model, app.param_count) == (cli.model, cli.param_count)
    assert json.dumps(app.memory.at_peak.as_dict()) == json.dumps(cli.memory.at_peak.as_dict())
    assert (app.memory.peak_bytes, app.memory.required_bytes) == (cli.memory.peak_bytes, cli.memory.required_bytes)
