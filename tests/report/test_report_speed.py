"""Issue 24 item 3 in the PDF: the report of a FILE.py prints the step time and throughput that `advisor
recommend FILE.py --json` gives for each listed card (as the report rounds them), within 10% of the analytic
method's."""

from __future__ import annotations

import json
import re
from functools import partial
from pathlib import Path

import pytest
from report_support import poppler

from advisor.cli import main

MODELS = Path(__file__).resolve().parents[1] / "recommend" / "speed_models"
OPTIONS = ("--batch", "256", "--precision", "amp_bf16", "--optimizer", "adamw", "--max-gpus", "1")
# a row's first line: rank, card, fits, needs, max batch, step ms, throughput (pdftotext -layout)
ROW = re.compile(
    r"^\s*\d+ (?P<card>\S.*?)\s{2,}(?:yes|no)\s+[\d.]+ \w?i?B\s+[\d,]+\s+"  # the max batch, grouped
    r"(?P<ms>[\d,.]+)\s+(?P<tput>[\d,]+)\s"
)


def _advisor(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    """`advisor ARGS` in this process (a subprocess spent its time importing torch again): its stdout."""
    capsys.readouterr()
    assert main(list(args)) == 0
    return capsys.readouterr().out


def test_the_pdf_prints_recommends_speed_of_a_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    spec, pdf = str(MODELS / "mlp.py"), tmp_path / "mlp.pdf"
    monkeypatch.setenv("ADVISOR_CATALOG", str(tmp_path / "c.sqlite3"))  # a fresh copy of the bundled catalog

    advisor = partial(_advisor, capsys)
    advisor("report", spec, *OPTIONS, "--out", str(pdf), "--no-local-gpus", "--lang", "en")
    text = poppler("pdftotext", "-layout", pdf, "-")
    rows = {m["card"]: m for m in map(ROW.match, text.splitlines()) if m}
    assert len(rows) == 10, rows.keys()  # the report's top ten cards
    assert "one card of each kind" in text and "1 to 1 cards" not in text  # --max-gpus 1 in words
    ranked = [
        json.loads(advisor("recommend", spec, *OPTIONS, *method, "--json"))["recommendations"]
        for method in ((), ("--method", "analytic"))
    ]  # FILE.py: simulated by default
    cli, analytic = ({r["card"]: r for r in entries} for entries in ranked)
    for card, row in rows.items():
        step_s, throughput = cli[card]["step_time_s"], cli[card]["throughput"]
        assert (row["ms"], row["tput"]) == (f"{step_s * 1e3:,.1f}", f"{throughput:,.0f}"), card
        assert step_s == pytest.approx(analytic[card]["step_time_s"], rel=0.10), card
        assert throughput == pytest.approx(256 / step_s), card  # samples/s = batch / step time, one card


# generation adds the prefill tokens/s after the decode tokens/s; its narrower card column leaves pdftotext one
# space between "GeForce GTX 1650 Super" and "yes"
GENERATE_ROW = re.compile(
    ROW.pattern.replace(r"\s{2,}(?:yes", r"\s+(?:yes").removesuffix(r"\s") + r"\s+(?P<prefill>[\d,]+)\s"
)
LLAMA_1B = Path(__file__).resolve().parents[2] / "advisor/data/llm_configs/llama-3.2-1b/config.json"
GENERATE = ("--mode", "generate", "--precision", "bf16", "--batch", "1", "--prompt-len", "512", "--new-tokens", "128")


def test_the_pdf_prints_recommends_decode_speed_of_a_generation_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Generation: each listed card's step is one decode step, its throughput the decode tokens/s and its prefill
    column the prefill tokens/s that `advisor recommend` gives, in its JSON and its table (tests/recommend/
    test_methods_agree.py holds the zoo: and hf: routes alike)."""
    spec, pdf = f"hf:{LLAMA_1B}", tmp_path / "llama.pdf"
    monkeypatch.setenv("ADVISOR_CATALOG", str(tmp_path / "c.sqlite3"))
    options = (*GENERATE, "--max-gpus", "1")
    _advisor(capsys, "report", spec, *options, "--out", str(pdf), "--no-local-gpus", "--lang", "en")
    text = poppler("pdftotext", "-layout", pdf, "-")
    rows = {m["card"]: m for m in map(GENERATE_ROW.match, text.splitlines()) if m}
    assert len(rows) == 10, rows.keys()
    assert "Prefill" in text and "Decode" in text  # the two speeds' headers
    cli = {r["card"]: r for r in json.loads(_advisor(capsys, "recommend", spec, *options, "--json"))["recommendations"]}
    header, _rule, *lines = _advisor(capsys, "recommend", spec, *options).splitlines()
    prefill_at = re.split(r"\s{2,}", header).index("Prefill tok/s")
    table = {cells[1]: cells[prefill_at] for cells in (re.split(r"\s{2,}", line) for line in lines) if len(cells) > 3}
    for card, row in rows.items():
        step_s, decode, prefill = (cli[card][k] for k in ("step_time_s", "decode_tokens_per_s", "prefill_tokens_per_s"))
        assert (row["ms"], row["tput"]) == (f"{step_s * 1e3:,.1f}", f"{decode:,.0f}"), card
        assert decode == pytest.approx(1 / step_s, rel=0.01), card  # batch 1: one token per decode step
        assert row["prefill"] == f"{prefill:,.0f}", card  # the JSON's figure, as rate_text rounds it (>= 10)
        assert prefill > decode, card  # 512 prompt tokens at once: compute-bound, faster than one token a step
        assert table[card] == row["prefill"], card  # the command line's table prints the same figure
