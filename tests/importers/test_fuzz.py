"""A small seeded sample of the importer fuzz (benchmarks/fuzz_importers.py throws 10,000 files per importer).

Every file must import or give a one-line SpecError naming the file, and no malicious file (a pickle that
creates a marker, TorchScript that overwrites a canary through torch.from_file) may leave a trace. Each
importer runs in its own process, so a crash in a C++ parser fails this test with its output rather than
ending the test run. No time limit here: a slow or loaded machine must not fail it (issue 18, item 10); the
benchmark counts hangs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FUZZ = ROOT / "benchmarks" / "fuzz_importers.py"
COUNTS = {"safetensors": 150, "onnx": 150, "pth": 60, "pt2": 40, "pt": 60}


@pytest.mark.parametrize("kind", list(COUNTS))
def test_a_fuzzed_sample_never_crashes_or_runs_code(kind: str, tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, str(FUZZ), "--worker", kind, str(COUNTS[kind]), "20240611", str(tmp_path), "--hang-s", "0"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["failure_count"] == 0, report["failures"]
    assert report["side_effect"] == 0 and report["hang"] == 0
    assert report["files"] == COUNTS[kind] == report["spec_error"] + report["imported"]
    assert report["spec_error"] > COUNTS[kind] // 4  # the mutations really damage files
