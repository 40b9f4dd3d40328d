"""Issue 10 in the report: the accuracy / compute / size map appears for image classifiers only."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest


def report_text(tmp_path: Path, spec: str, *extra: str) -> str:
    out = tmp_path / "r.pdf"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "advisor",
            "report",
            spec,
            "--out",
            str(out),
            "--no-local-gpus",
            "--catalog",
            str(tmp_path / "c.sqlite3"),
            "--lang",
            "en",
            *extra,
        ],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    return subprocess.run(["pdftotext", "-layout", str(out), "-"], capture_output=True, text=True).stdout


@pytest.mark.parametrize("spec, shown", [("zoo:resnet18", True), ("zoo:gpt2", False)])
def test_model_map_for_image_classifiers_only(tmp_path: Path, spec: str, shown: bool) -> None:
    text = report_text(tmp_path, spec, "--batch", "8")
    assert ("Choose the model" in text) is shown
    assert ("Accuracy, compute and size of known models" in text) is shown  # the chart's own title, as text
    if shown:
        assert "mobilenet_v2" in text and "vit_b_16" in text  # the zoo's circles are labelled
