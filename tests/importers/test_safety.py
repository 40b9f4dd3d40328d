"""Model files are data: a pickle that would run code is refused unless the user trusts the file."""

from __future__ import annotations

import io
import json
import pickle
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")

from malicious_files import overwriting_torchscript  # noqa: E402

from advisor.cli import main  # noqa: E402
from advisor.core.errors import SpecError  # noqa: E402
from advisor.importers.code_scan import risky_name, torchscript_problems  # noqa: E402
from advisor.importers.spec_graph import load_graph  # noqa: E402
from advisor.importers.torch_loader import load_module  # noqa: E402


class WritesMarker:
    """Unpickling this calls pathlib.Path.touch(marker): code running is visible as a file appearing."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (_touch, (str(self.marker),))


def _touch(path: str) -> None:
    Path(path).touch()


def malicious_zip(path: Path, marker: Path) -> Path:
    """A torch.save-style archive (zip with archive/data.pkl) whose pickle calls _touch."""
    payload = pickle.dumps({"weight": WritesMarker(marker)}, protocol=2)
    buffer = io.BytesIO()
    torch.save({"weight": torch.zeros(2)}, buffer)
    with zipfile.ZipFile(io.BytesIO(buffer.getvalue())) as src, zipfile.ZipFile(path, "w") as dst:
        for item in src.infolist():
            data = src.read(item.filename)
            dst.writestr(item, payload if item.filename.endswith("data.pkl") else data)
    return path


@pytest.mark.parametrize("suffix", [".pt", ".pth", ".bin"])
def test_malicious_pickle_does_not_run(tmp_path: Path, suffix: str) -> None:
    marker = tmp_path / "ran"
    path = malicious_zip(tmp_path / f"evil{suffix}", marker)
    with pytest.raises(SpecError, match="--trust-pickle"):
        load_graph(str(path))
    with pytest.raises(SpecError, match="--trust-pickle"):
        load_module(str(path))
    assert not marker.exists()


def test_legacy_raw_pickle_does_not_run(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    path = tmp_path / "evil.pth"
    path.write_bytes(pickle.dumps(WritesMarker(marker)))
    with pytest.raises(SpecError) as error:
        load_graph(str(path))
    assert not marker.exists() and str(error.value).startswith(str(path))


def test_cli_refuses_with_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    marker = tmp_path / "ran"
    path = malicious_zip(tmp_path / "evil.pt", marker)
    assert main(["estimate", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--trust-pickle" in err and str(path) in err
    assert not marker.exists()


def test_the_payload_really_runs_when_trusted(tmp_path: Path) -> None:
    """The check above means something: with --trust-pickle the same file does run its code."""
    marker = tmp_path / "ran"
    path = malicious_zip(tmp_path / "evil.pt", marker)
    with pytest.raises(SpecError, match="not a model"):
        load_module(str(path), trust_pickle=True)
    assert marker.exists()


def test_trusted_whole_model_loads(tmp_path: Path) -> None:
    path = tmp_path / "whole.pt"
    torch.save(torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(3 * 32 * 32, 4)), path)
    with pytest.raises(SpecError, match="--trust-pickle"):
        load_graph(str(path))
    graph = load_graph(str(path), trust_pickle=True)
    assert graph.param_count == 3 * 32 * 32 * 4 + 4


# --- torch.export archives (.pt2): read part by part, nothing pickled runs (issue 16, item 1) ------------------


class Tiny(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(4, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear(x)


def _rewritten(src: Path, dst: Path, change: Callable[[str, bytes], bytes]) -> Path:
    with zipfile.ZipFile(src) as old, zipfile.ZipFile(dst, "w") as new:
        for item in old.infolist():
            new.writestr(item, change(item.filename, old.read(item.filename)))
    return dst


def _exported(tmp_path: Path) -> Path:
    path = tmp_path / "good.pt2"
    torch.export.save(torch.export.export(Tiny(), (torch.randn(2, 4),)), path)
    return path


def _pickled_weight(payload: bytes) -> Callable[[str, bytes], bytes]:
    def change(name: str, data: bytes) -> bytes:
        if name.endswith("model_weights_config.json"):  # mark the first weight as pickled...
            config = json.loads(data)
            config["config"]["linear.weight"]["use_pickle"] = True
            return json.dumps(config).encode()
        return payload if name.endswith("weights/weight_0") else data  # ...and make it the payload

    return change


def _pickled_inputs(payload: bytes) -> Callable[[str, bytes], bytes]:
    return lambda name, data: payload if name.endswith("sample_inputs/model.pt") else data


@pytest.mark.parametrize("make", [_pickled_weight, _pickled_inputs], ids=["weight", "sample-inputs"])
def test_a_pt2_with_a_pickled_payload_runs_nothing(tmp_path: Path, make: Callable[..., Any]) -> None:
    marker = tmp_path / "ran"
    payload = pickle.dumps(WritesMarker(marker), protocol=2)
    path = _rewritten(_exported(tmp_path), tmp_path / "evil.pt2", make(payload))
    with pytest.raises(SpecError, match=r"pickled Python objects.*--trust-pickle"):
        load_module(str(path))
    assert not marker.exists()
    # The file really is malicious: torch.export.load (what --trust-pickle uses) runs the payload.
    with pytest.raises(Exception):  # noqa: B017 - the payload's return value breaks loading afterwards
        torch.export.load(str(path))
    assert marker.exists()


def test_a_clean_pt2_still_loads_with_its_weights_and_inputs(tmp_path: Path) -> None:
    loaded = load_module(str(_exported(tmp_path)))
    args, _ = loaded.example_inputs(5)
    assert tuple(args[0].shape) == (5, 4)  # the sample input (2, 4) with batch 5
    assert sum(p.numel() for p in loaded.module.parameters()) == 4 * 3 + 3  # weight 4x3, bias 3


@pytest.mark.parametrize(
    ("name", "risky"),
    [
        ("ops.aten.from_file.default", True),
        ("ops.image.write_file.default", True),
        ("ops.image.read_file", True),
        ("ops.mylib.anything.default", True),
        ("torch.from_file", True),
        ("torch.save", True),
        ("ops.aten.linear.default", False),
        ("ops.aten.add.Tensor", False),
        ("torch.matmul", False),
        ("ops.torchvision.nms.default", False),
        ("<built-in function getitem>", False),
        ("torch.ops.profiler._record_function_enter_new", False),
        ("ops.aten._pad_packed_sequence", False),
        ("torch._C._jit_pickle", True),
        ("torch.UntypedStorage.from_file", True),
    ],
)
def test_operators_that_reach_files_are_named_risky(name: str, risky: bool) -> None:
    assert risky_name(name) is risky


# --- TorchScript: code that reaches files is refused before torch.jit.load runs it (issue 16, item 1) ---------


def test_torchscript_that_overwrites_a_file_on_load_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    path = tmp_path / "evil.pt"
    path.write_bytes(overwriting_torchscript(str(victim)))
    assert main(["estimate", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "torch.from_file" in err and "--trust-pickle" in err
    assert victim.read_text() == "precious"
    torch.jit.load(str(path))  # the check means something: loading it does overwrite the file
    assert victim.read_text() == "AAAAAAAA"


def test_ordinary_torchscript_passes_the_code_check(tmp_path: Path) -> None:
    layer = torch.nn.TransformerEncoderLayer(8, 2, batch_first=True)
    for index, module in enumerate([torch.jit.script(layer), torch.jit.trace(Tiny(), torch.randn(2, 4))]):
        path = tmp_path / f"plain{index}.pt"
        torch.jit.save(module, str(path))
        assert torchscript_problems(path) == []


def test_an_onnx_graph_with_a_cycle_is_refused(tmp_path: Path) -> None:
    import onnx
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])
    nodes = [
        helper.make_node("Add", ["x", "b"], ["a"], name="first"),  # reads b, which second makes from a
        helper.make_node("Relu", ["a"], ["b"], name="second"),
        helper.make_node("Relu", ["a"], ["y"], name="out"),
    ]
    path = tmp_path / "cycle.onnx"
    onnx.save(helper.make_model(helper.make_graph(nodes, "cycle", [x], [y])), str(path))
    with pytest.raises(SpecError, match="'first' reads 'b' before any node makes it"):
        load_graph(str(path))


def test_a_trusted_load_logs_nothing_even_from_loggers_torch_configures_meanwhile(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Issue 29 saw a 73-line logged traceback under --trust-pickle: a logger given its own level and handler
    while the file loads (as torch._logging does for its export loggers) must print nothing either."""
    import logging
    import sys as system

    from advisor.importers.torch_loader import EXPORT_LOGGERS, quiet_log

    with quiet_log(*EXPORT_LOGGERS, everything=True):
        logger = logging.getLogger("torch._export.serde.serialize.issue29")
        logger.setLevel(logging.WARNING)
        logger.addHandler(logging.StreamHandler(system.stderr))
        logger.warning("Ran into the following error when deserializing", exc_info=ValueError("damaged"))
    assert capsys.readouterr().err == ""
    logger.warning("after the load")  # and logging works again afterwards
    assert "after the load" in capsys.readouterr().err
