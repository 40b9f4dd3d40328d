"""Reports made once per session from a seeded catalog (never the user's), in English and in Chinese."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication
from report_support import make_report

from advisor.catalog import open_catalog
from advisor.recommend.service import CardFilter
from advisor.report import Report, write_pdf
from advisor.ui.i18n import fonts, set_language, tr


@pytest.fixture(scope="session", autouse=True)
def application(qapp: QApplication) -> QApplication:
    """A QApplication, not the QGuiApplication the report would make: the UI tests share this process."""
    return qapp


@pytest.fixture(scope="session")
def catalog_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("catalog") / "catalog.sqlite3"
    open_catalog(path).close()
    return path


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
