"""A small seeded sample of the importer fuzz (benchmarks/fuzz_importers.py throws 10,000 files per importer).

Every file must import or give a one-line SpecError naming the file, and no malicious file (a pickle that
creates a marker, TorchScript that overwrites a canary through torch.from_file) may leave a trace. The
importers run in one worker process, and each file in a forked, capped child of it (importers/sandbox.py),
so a crash in a C++ parser fails this test with its output rather than ending the test run. One process for
the five importers, not one each: torch and torch.export's modules were imported five times (about 16 s of
the 2-core run). No time limit here: a slow or loaded machine must not fail it (issue 18, item 10); the
benchmark counts hangs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FUZZ = ROOT / "benchmarks" / "fuzz_importers.py"
# Past the worker's imports (torch, torch.export, TorchScript: most of its time), a .pt file costs about 0.1 s
# and an .onnx one 0.013 s of CPU, so 60 -> 30 and 150 -> 75 of them: with this seed 5 of the 30 .pt files are
# the malicious seeds, intact or mutated (a sixth of the picks, makers() in the benchmark; 12 of 60 before),
# and the benchmark throws 10,000 of each.
COUNTS = {"safetensors": 150, "onnx": 75, "pth": 60, "pt2": 40, "pt": 30}


def test_a_fuzzed_sample_never_crashes_or_runs_code(tmp_path: Path) -> None:
    kinds, counts = ",".join(COUNTS), ",".join(str(n) for n in COUNTS.values())
    result = subprocess.run(
        [sys.executable, str(FUZZ), "--worker", kinds, counts, "20240611", str(tmp_path), "--hang-s", "0"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    reports = [json.loads(line) for line in result.stdout.strip().splitlines()[-len(COUNTS) :]]
    assert [r["kind"] for r in reports] == list(COUNTS)
    for report in reports:
        kind = report["kind"]
        assert report["failure_count"] == 0, (kind, report["failures"])
        assert report["side_effect"] == 0 and report["hang"] == 0, kind
        assert report["files"] == COUNTS[kind] == report["spec_error"] + report["imported"], kind
        assert report["spec_error"] > COUNTS[kind] // 4, kind  # the mutations really damage files
