"""Thousands of mutated files per importer: each must import or give a one-line SpecError naming the file,
within a per-file time limit. Each importer's fuzz runs in its own process (fuzz_worker.py), so a crash in a
C++ parser shows up as a failed test with its output rather than a dead test run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

WORKER = Path(__file__).with_name("fuzz_worker.py")
ROOT = Path(__file__).resolve().parents[2]
# Files per importer. (TorchScript once needed seconds per damaged file: building an error message unpickles
# the archive's debug info, and a broken one took 15-30 s inside C++; the loader now checks it first.)
COUNTS = {"safetensors": 3000, "onnx": 3000, "pth": 2000, "pt2": 1000, "pt": 2000}
LIMIT_S: dict[str, float] = {}
NEEDS = {"safetensors": None, "onnx": "onnx", "pth": "torch", "pt2": "torch", "pt": "torch"}


@pytest.mark.parametrize("kind", list(COUNTS))
def test_fuzzed_files_never_crash_or_hang(kind: str, tmp_path: Path) -> None:
    if NEEDS[kind]:
        pytest.importorskip(NEEDS[kind])
    if kind != "onnx":
        pytest.importorskip("onnx")  # the seed files are written with onnx.helper's module imported
    result = subprocess.run([sys.executable, str(WORKER), kind, str(COUNTS[kind]), "20240611", str(tmp_path)],
                            capture_output=True, text=True, cwd=ROOT, timeout=240)
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["failure_count"] == 0, report["failures"]
    assert report["files"] == COUNTS[kind] == report["spec_error"] + report["imported"]
    assert report["spec_error"] > COUNTS[kind] // 4  # the mutations really damage files
    assert report["slowest_s"] < LIMIT_S.get(kind, 10.0)
    print(json.dumps(report))
