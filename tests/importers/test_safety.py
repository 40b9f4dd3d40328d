"""Model files are data: a pickle that would run code is refused unless the user trusts the file."""

from __future__ import annotations

import io
import pickle
import zipfile
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from advisor.cli import main  # noqa: E402
from advisor.core.errors import SpecError  # noqa: E402
from advisor.importers.torch_loader import load_module  # noqa: E402
from advisor.specs import load_graph  # noqa: E402


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
