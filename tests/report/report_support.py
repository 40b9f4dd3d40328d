"""Helpers of the report tests: a report from a seeded catalog and a replayed H200, and reading a PDF back
with poppler (pdftotext, pdftoppm, pdfinfo, pdfimages, pdffonts). A module of its own, not conftest: tests/ui
has a conftest too, and `from conftest import` would find whichever came first."""

from __future__ import annotations

import re
import subprocess
from datetime import UTC, datetime
from pathlib import Path

from advisor.catalog import open_catalog
from advisor.core.workload import Workload
from advisor.recommend.prepare import prepare_spec
from advisor.recommend.ranking import RankingOptions
from advisor.recommend.service import CardFilter
from advisor.report import Report, build_report, rank_for_report
from advisor.telemetry.fake import FakeReader

TELEMETRY = Path(__file__).resolve().parents[1] / "telemetry" / "fixtures"
WHEN = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)


def make_report(
    catalog_path: Path,
    spec: str = "zoo:gpt2",
    workload: Workload | None = None,
    cards: CardFilter = CardFilter(),  # noqa: B008
    options: RankingOptions = RankingOptions(),  # noqa: B008
    gpus: bool = True,
    seq_len: int | None = 512,
) -> Report:
    job = prepare_spec(spec, workload or Workload("train", 8, "amp_bf16", "adamw"), seq_len=seq_len)
    catalog = open_catalog(catalog_path)
    try:
        with catalog.read() as session:
            ranking = rank_for_report(session, job, cards, options)
    finally:
        catalog.close()
    snapshot = FakeReader(TELEMETRY / "nvml_device.json", TELEMETRY / "nvml_timeseries.csv").read() if gpus else None
    return build_report(job, ranking, snapshot, spec, WHEN)


def poppler(*command: str | Path) -> str:
    return subprocess.run([str(c) for c in command], check=True, capture_output=True, text=True).stdout


def pdf_text(path: Path, page: int | None = None) -> str:
    pages = ["-f", str(page), "-l", str(page)] if page else []
    return poppler("pdftotext", *pages, path, "-")


def words(text: str) -> str:
    """Lines joined, spaces squeezed: a phrase wrapped over two lines still reads as one."""
    return re.sub(r"\s+", " ", text)


def page_count(path: Path) -> int:
    return int(re.search(r"Pages:\s+(\d+)", poppler("pdfinfo", path)).group(1))  # type: ignore[union-attr]
