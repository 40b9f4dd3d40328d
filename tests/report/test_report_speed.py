"""Issue 24 item 3 in the PDF: the report of a FILE.py prints the step time and throughput that `advisor
recommend FILE.py --json` gives for each listed card (as the report rounds them), within 10% of the analytic
method's."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from report_support import poppler

MODELS = Path(__file__).resolve().parents[1] / "recommend" / "speed_models"
OPTIONS = ("--batch", "256", "--precision", "amp_bf16", "--optimizer", "adamw", "--max-gpus", "1")
# a row's first line: rank, card, fits, needs, max batch, step ms, throughput (pdftotext -layout)
ROW = re.compile(r"^\s*\d+ (?P<card>\S.*?)\s{2,}(?:yes|no)\s+[\d.]+ \w?i?B\s+\d+\s+"
                 r"(?P<ms>[\d,.]+)\s+(?P<tput>[\d,]+)\s")


def _advisor(catalog: Path, *args: str) -> str:
    env = {**os.environ, "ADVISOR_CATALOG": str(catalog), "QT_QPA_PLATFORM": "offscreen"}
    done = subprocess.run([sys.executable, "-m", "advisor", *args], capture_output=True, text=True, env=env,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_pdf_prints_recommends_speed_of_a_file(tmp_path: Path) -> None:
    spec, catalog, pdf = str(MODELS / "mlp.py"), tmp_path / "c.sqlite3", tmp_path / "mlp.pdf"
    _advisor(catalog, "report", spec, *OPTIONS, "--out", str(pdf), "--no-local-gpus", "--lang", "en")
    text = poppler("pdftotext", "-layout", pdf, "-")
    rows = {m["card"]: m for m in map(ROW.match, text.splitlines()) if m}
    assert len(rows) == 10, rows.keys()  # the report's top ten cards
    assert "one card of each kind" in text and "1 to 1 cards" not in text  # --max-gpus 1 in words
    ranked = [json.loads(_advisor(catalog, "recommend", spec, *OPTIONS, *method, "--json"))["recommendations"]
              for method in ((), ("--method", "analytic"))]  # FILE.py: simulated by default
    cli, analytic = ({r["card"]: r for r in entries} for entries in ranked)
    for card, row in rows.items():
        step_s, throughput = cli[card]["step_time_s"], cli[card]["throughput"]
        assert (row["ms"], row["tput"]) == (f"{step_s * 1e3:,.1f}", f"{throughput:,.0f}"), card
        assert step_s == pytest.approx(analytic[card]["step_time_s"], rel=0.10), card
        assert throughput == pytest.approx(256 / step_s), card  # samples/s = batch / step time, one card
