"""ONNX and safetensors (no torch needed), bad files, the CLI end to end, and torch staying optional."""

from __future__ import annotations

import json
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from model_files import (
    GPT2_TINY_CONFIG,
    ONNX_MLP_PARAMS,
    TINY_CNN,
    gpt2_tiny_tensors,
    onnx_mlp_bytes,
    safetensors_bytes,
    write,
    write_gpt2_safetensors,
)

from advisor.cli import main
from advisor.core.errors import SpecError
from advisor.core.zoo.text import GPT2Config, gpt2
from advisor.importers.spec_graph import load_graph

onnx = pytest.importorskip("onnx")
ROOT = Path(__file__).resolve().parents[2]


def test_onnx_graph_and_parameters(tmp_path: Path) -> None:
    path = tmp_path / "mlp.onnx"
    path.write_bytes(onnx_mlp_bytes())
    graph = load_graph(str(path))
    assert [(n.name, n.op.kind, n.output.shape) for n in graph.nodes] == [
        ("x", "input", (4,)),
        ("fc1", "linear", (8,)),
        ("relu", "relu", (8,)),
        ("fc2", "linear", (3,)),
    ]
    assert graph.param_count == ONNX_MLP_PARAMS == 67


def test_safetensors_reads_the_header_and_builds_from_config(tmp_path: Path) -> None:
    path = write_gpt2_safetensors(tmp_path)
    graph = load_graph(str(path), seq_len=16)
    zoo = gpt2(GPT2Config(hidden=16, layers=2, heads=2, vocab=100, max_positions=32, dropout=0.1), 16, "z")
    assert graph.param_count == zoo.param_count
    # GPT-2 params: wte 100x16 + wpe 32x16 + per layer (ln_1 2x16, c_attn 16x48+48, c_proj 16x16+16, ln_2 2x16,
    # c_fc 16x64+64, mlp c_proj 64x16+16 = 3280) + ln_f 2x16 = 1600 + 512 + 6560 + 32; tied lm_head adds none
    assert graph.param_count == 1600 + 512 + 2 * (32 + 816 + 272 + 32 + 1088 + 1040) + 32 == 8704
    header_count = sum(_numel(shape) for _, shape in gpt2_tiny_tensors().values())
    assert header_count == graph.param_count
    assert "gpt2 from config.json" in graph.name and graph.task == "language_model"


def _numel(shape: list[int]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def test_safetensors_unknown_architecture_gives_parameters_only(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "mamba"}))
    path = tmp_path / "model.safetensors"
    path.write_bytes(safetensors_bytes({"a": ("F16", [10, 3]), "ids": ("I64", [4])}))
    graph = load_graph(str(path))
    assert graph.param_count == 30 and "no activation memory" in graph.name


def _header_file(tmp_path: Path, header: object, data: bytes = b"", length: int | None = None) -> Path:
    raw = json.dumps(header).encode()
    path = tmp_path / "bad.safetensors"
    path.write_bytes(struct.pack("<Q", len(raw) if length is None else length) + raw + data)
    (tmp_path / "config.json").write_text(json.dumps(GPT2_TINY_CONFIG))
    return path


@pytest.mark.parametrize(
    ("header", "data", "length", "message"),
    [
        (
            {"w": {"dtype": "F32", "shape": [2**40, 2**40], "data_offsets": [0, 16]}},
            bytes(16),
            None,
            "needs more bytes than the file holds",
        ),
        ({"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}}, bytes(8), None, "outside the file"),
        ({"w": {"dtype": "Q7", "shape": [4], "data_offsets": [0, 16]}}, bytes(16), None, "unknown dtype"),
        ({"w": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 16]}}, bytes(16), None, "non-negative"),
        ({"w": {"dtype": "F32", "shape": [3], "data_offsets": [0, 16]}}, bytes(16), None, "needs 12 bytes"),
        (
            {
                "a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]},
                "b": {"dtype": "F32", "shape": [2], "data_offsets": [8, 16]},
            },
            bytes(16),
            None,
            "overlap",
        ),
        ([1, 2], b"", None, "not a JSON object"),
        ({}, b"", 10**12, "header length"),
    ],
)
def test_bad_safetensors_headers(tmp_path: Path, header: object, data: bytes, length: int | None, message: str) -> None:
    path = _header_file(tmp_path, header, data, length)
    with pytest.raises(SpecError) as error:
        load_graph(str(path))
    assert str(error.value).startswith(str(path)) and message in str(error.value)


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("model.onnx", b"\x00garbage\xff" * 10, "not a readable ONNX model"),
        ("model.onnx", onnx_mlp_bytes()[:40], "not a readable ONNX model"),
        ("model.safetensors", b"\x01\x02", "shorter than its 8-byte header length"),
        ("model.pth", b"PK\x03\x04 truncated", "not a readable torch file"),
        ("model.pt2", b"not a zip", "not a zip archive"),
    ],
)
def test_truncated_and_wrong_format_files(tmp_path: Path, name: str, content: bytes, message: str) -> None:
    if name.endswith((".pth", ".pt2")):
        pytest.importorskip("torch")
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(SpecError, match=message):
        load_graph(str(path))


def test_missing_config_and_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "model.safetensors"
    path.write_bytes(safetensors_bytes({"w": ("F32", [2, 2])}))
    with pytest.raises(SpecError, match=r"no config\.json beside it"):
        load_graph(str(path))
    with pytest.raises(SpecError, match="no such file"):
        load_graph(str(tmp_path / "absent.onnx"))
    with pytest.raises(SpecError, match="not a model spec"):
        load_graph(str(tmp_path / "model.h5"))
    (tmp_path / "net.json").write_text("{}")  # .json is the app's network format: this is not one
    with pytest.raises(SpecError, match=r"net\.json: not an advisor network"):
        load_graph(str(tmp_path / "net.json"))


def test_cli_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "mlp.onnx"
    path.write_bytes(onnx_mlp_bytes())
    assert main(["estimate", str(path), "--batch", "8", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["params"] == 67 and out["method"] == "analytic"
    # 8 samples x (fc1 8x4 + fc2 3x8) = 8 x 56 = 448 MACs
    assert out["compute"]["macs_forward"] == 8 * (8 * 4 + 3 * 8) == 448
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"nope")
    assert main(["estimate", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(bad) in err


BLOCK = """
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in ('torch', 'torchvision', 'timm', 'transformers'):
            raise ImportError('blocked: ' + name)
sys.meta_path.insert(0, Block())
from advisor.core.errors import SpecError
from advisor.importers.spec_graph import load_graph
print(load_graph('zoo:resnet18').param_count)
print(load_graph(sys.argv[1]).param_count)
print(load_graph(sys.argv[2], seq_len=8).param_count)
for spec in sys.argv[3:]:
    try:
        print(load_graph(spec).param_count)
    except SpecError as error:
        print(error)
print('torch' in sys.modules)
"""


def test_without_torch_zoo_onnx_and_safetensors_work(tmp_path: Path) -> None:
    onnx_path = tmp_path / "mlp.onnx"
    onnx_path.write_bytes(onnx_mlp_bytes())
    st_path = write_gpt2_safetensors(tmp_path)
    py_path = write(tmp_path / "cnn.py", TINY_CNN)
    (tmp_path / "w.pth").write_bytes(b"x")
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            BLOCK,
            str(onnx_path),
            str(st_path),
            str(py_path),
            str(tmp_path / "w.pth"),
            "hf:" + str(tmp_path / "config.json"),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[1:3] == ["67", "8704"]
    assert all("needs the torch package (install gpu-advisor[torch])" in line for line in lines[3:5]), lines
    assert lines[5] == "8704"  # hf: with a decoder config builds the analytic graph, no torch needed
    assert lines[-1] == "False"
