"""Reports made once per session from a seeded catalog (never the user's) and a replayed H200, and helpers
that read a PDF back with poppler (pdftotext, pdftoppm, pdfinfo, pdfimages, pdffonts)."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication

from advisor.catalog import open_catalog
from advisor.core.workload import Workload
from advisor.estimating import prepare_spec
from advisor.recommend.engine import Options
from advisor.recommend.service import CardFilter
from advisor.report import Report, build_report, rank_for_report, write_pdf
from advisor.telemetry.fake import FakeReader
from advisor.ui.i18n import fonts, set_language, tr

TELEMETRY = Path(__file__).resolve().parents[1] / "telemetry" / "fixtures"
WHEN = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)


@pytest.fixture(scope="session", autouse=True)
def application(qapp: QApplication) -> QApplication:
    """A QApplication, not the QGuiApplication the report would make: the UI tests share this process."""
    return qapp


@pytest.fixture(scope="session")
def catalog_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("catalog") / "catalog.sqlite3"
    open_catalog(path).close()
    return path


def make_report(catalog_path: Path, spec: str = "zoo:gpt2", workload: Workload | None = None,
                cards: CardFilter = CardFilter(), options: Options = Options(),  # noqa: B008
                gpus: bool = True, seq_len: int | None = 512) -> Report:
    job = prepare_spec(spec, workload or Workload("train", 8, "amp_bf16", "adamw"), seq_len=seq_len)
    catalog = open_catalog(catalog_path)
    try:
        with catalog.read() as session:
            ranking = rank_for_report(session, job, cards, options)
    finally:
        catalog.close()
    snapshot = FakeReader(TELEMETRY / "nvml_device.json", TELEMETRY / "nvml_timeseries.csv").read() if gpus else None
    return build_report(job, ranking, snapshot, spec, WHEN)


@pytest.fixture(scope="session")
def english(catalog_path: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Report, Path, int]:
    report = make_report(catalog_path, cards=CardFilter(vendor="NVIDIA"))
    path, pages = write_pdf(tmp_path_factory.mktemp("en") / "report.pdf", report, "a4")
    return report, path, pages


@pytest.fixture(scope="session")
def chinese(catalog_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Report, Path, int]]:
    report = make_report(catalog_path)
    set_language("zh_CN")
    try:
        path, pages = write_pdf(tmp_path_factory.mktemp("zh") / "report.pdf", report, "a4", tr, fonts())
    finally:
        set_language("en")
    yield report, path, pages


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
