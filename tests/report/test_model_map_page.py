"""Issue 10 in the report: the accuracy / compute / size map appears for image classifiers only."""

from __future__ import annotations

from pathlib import Path

import pytest
from report_support import poppler

from advisor.cli import main


def report_text(catalog_path: Path, tmp_path: Path, spec: str, *extra: str) -> str:
    """`advisor report` in this process (a subprocess spent its time importing the program and seeding a
    catalog again), on the session's seeded catalog: the PDF's text."""
    out = tmp_path / "r.pdf"
    argv = ["report", spec, "--out", str(out), "--no-local-gpus", "--catalog", str(catalog_path), "--lang", "en"]
    assert main([*argv, *extra]) == 0
    return poppler("pdftotext", "-layout", out, "-")


@pytest.mark.parametrize("spec, shown", [("zoo:resnet18", True), ("zoo:gpt2", False)])
def test_model_map_for_image_classifiers_only(catalog_path: Path, tmp_path: Path, spec: str, shown: bool) -> None:
    text = report_text(catalog_path, tmp_path, spec, "--batch", "8")
    assert ("Choose the model" in text) is shown
    assert ("Accuracy, compute and size of known models" in text) is shown  # the chart's own title, as text
    if shown:
        assert "mobilenet_v2" in text and "vit_b_16" in text  # the zoo's circles are labelled
