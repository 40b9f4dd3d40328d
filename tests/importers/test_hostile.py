"""The attacker pass of issue 29: every hostile file of hostile_files.CASES is refused by the command line in
one line (exit 2) naming the file, creates no marker, leaves the victim file as it was and imports no module
it names, even with its own folder as the working folder and on sys.path (`python -m advisor` run there).
The bombs' refusals come from the zip directory (the message gives the declared size), so nothing was
decompressed; benchmarks/fuzz_importers.py --hostile prints the time each class takes."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("onnx")

from hostile_files import CASES, SECRET_NUMBER, VICTIM_TEXT, build  # noqa: E402

from advisor.cli import main  # noqa: E402


def _refusal(
    case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> tuple[int, str, str]:
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    spec = build(case, tmp_path)
    code = main(["estimate", spec])
    out, err = capsys.readouterr()
    assert not (tmp_path / "marker").exists(), f"{case}: the file's code ran"
    assert (tmp_path / "victim.txt").read_text() == VICTIM_TEXT, f"{case}: the victim file was changed"
    assert "evil_helper" not in sys.modules, f"{case}: a module the file names was imported"
    return code, out, err


@pytest.mark.parametrize("case", [c for c in CASES if not c.startswith("onnx-external")])
def test_a_hostile_file_is_refused_in_one_line(
    case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _out, err = _refusal(case, tmp_path, monkeypatch, capsys)
    assert code == 2, err
    assert err.count("\n") == 1 and str(tmp_path) in err, err
    assert __import__("re").search(CASES[case][2], err), err


def test_onnx_external_data_is_never_read_from_the_working_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _refusal("onnx-external-data-from-cwd", tmp_path, monkeypatch, capsys)
    assert code in (0, 2) and err.count("\n") <= 1, err
    assert SECRET_NUMBER not in out + err  # the file's bytes (3, 4999) never become a shape


def test_the_custom_autograd_pt2_really_imports_what_it_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The refusal above means something: torch.export.load (what --trust-pickle uses) imports the helper."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    spec = build("pt2-custom-autograd-import", tmp_path)
    sys.modules.pop("evil_helper", None)
    try:
        torch.export.load(spec).module()(torch.randn(2, 4))
    finally:
        sys.modules.pop("evil_helper", None)
    assert (tmp_path / "marker").exists()


@pytest.mark.parametrize(
    "case",
    ["ts-backslash-before-paren", "ts-comment-before-paren", "ts-parenthesised-callee", "ts-code-member-builtins.PY"],
)
def test_the_torchscript_variants_really_overwrite_the_victim(case: str, tmp_path: Path) -> None:
    """And torch.jit.load of each TorchScript variant does overwrite the victim: the check is what stops it."""
    torch.jit.load(build(case, tmp_path))
    assert (tmp_path / "victim.txt").read_text() == "AAAAAAAA"


class _Forks(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        doubled = torch.nn.functional.interpolate(x[None], scale_factor=2.0)
        return torch.jit.wait(torch.jit.fork(torch.relu, x)) + doubled.sum()


def test_ordinary_torchscript_passes_the_allowlist(tmp_path: Path) -> None:
    """No false refusals on what scripting writes: recurrent, quantized (torchbind packed weights), fork/wait."""
    from advisor.importers.code_scan import torchscript_problems

    linear = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    models = [
        torch.nn.LSTM(4, 8, 2),
        torch.nn.GRU(4, 8),
        torch.nn.MultiheadAttention(8, 2),
        _Forks(),
        torch.ao.quantization.quantize_dynamic(linear, {torch.nn.Linear}, dtype=torch.qint8),
    ]
    for index, model in enumerate(models):
        path = tmp_path / f"plain{index}.pt"
        torch.jit.save(torch.jit.script(model), str(path))
        assert torchscript_problems(path) == [], type(model).__name__


class _Mixed(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv, self.norm = torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.norm(self.conv(x)).mean((2, 3))
        with torch.autocast("cpu", dtype=torch.bfloat16):
            z = y @ y.T
        return torch.cond(z.sum() > 0, lambda a: a * 2, lambda a: a + 1, (z.float(),))


def test_ordinary_exports_pass_the_graph_allowlist() -> None:
    """Dynamic shapes (SymInt arithmetic), autocast regions and torch.cond subgraphs are all allowed."""
    import io
    import json
    import zipfile

    from advisor.importers.pt2_graph import program_problems

    batch = torch.export.Dim("batch", min=2)
    buffer = io.BytesIO()
    torch.export.save(torch.export.export(_Mixed(), (torch.randn(2, 3, 8, 8),), dynamic_shapes=({0: batch},)), buffer)
    with zipfile.ZipFile(buffer) as archive:
        program = json.loads(archive.read(next(n for n in archive.namelist() if n.endswith("models/model.json"))))
    assert program_problems(program) == []


def test_an_absurd_lora_rank_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["estimate", "zoo:gpt2", "--mode", "generate", "--finetune", "lora", "--lora-rank", str(10**12)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "lora_rank: at most 4,096" in err, err
