"""Adding a card figure, done for real on a copy of the package (issue 31: "a new card figure touches at most
three files"): one field of CardSpec in catalog/records.py and its column in data/cards.csv are the whole
change (the third file is the figure's convention in data/README.md, which no code reads). The database
column and the migration that adds it to an existing catalog, the CSV reader and writer, the `catalog
add/edit` option and the `catalog show` line all follow from the declaration (catalog/figures.py)."""

from __future__ import annotations

import filecmp
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# The worked example: the boost clock, a figure every vendor's spec sheet gives (NVIDIA's RTX 4090 page
# lists 2.52 GHz), declared as ecc_memory_bytes is and added by a schema 6 migration derived from `since`
FIELD = """
    boost_clock_mhz: float | None = field(
        default=None,
        kw_only=True,
        metadata=figure(
            "boost_clock_mhz",
            Kind.RATE,
            "MHz",
            "boost clock",
            "the vendor's boost clock (MHz)",
            "the vendor's specification page",
            since=6,
        ),
    )
"""
ANCHOR = "\n\nFIGURES: tuple[Figure, ...] = declared(CardSpec)"


def _package_with_the_figure(where: Path) -> Path:
    """A copy of advisor/ with the figure added: the field in records.py, its column in cards.csv."""
    package = where / "advisor"
    shutil.copytree(ROOT / "advisor", package, ignore=shutil.ignore_patterns("__pycache__"))
    records = package / "catalog" / "records.py"
    text = records.read_text()
    assert text.count(ANCHOR) == 1
    records.write_text(text.replace(ANCHOR, FIELD.rstrip("\n") + ANCHOR))
    cards = package / "data" / "cards.csv"
    lines = cards.read_text().splitlines()
    filled = [line + (",2520" if line.startswith("GeForce RTX 4090,") else ",") for line in lines[1:]]
    cards.write_text("\n".join([lines[0] + ",boost_clock_mhz", *filled]) + "\n")
    return package


def _changed_files(original: Path, copy: Path) -> list[str]:
    changed: list[str] = []

    def walk(cmp: filecmp.dircmp[str], prefix: str) -> None:
        changed.extend(prefix + name for name in cmp.diff_files + cmp.left_only + cmp.right_only)
        for name, sub in cmp.subdirs.items():
            walk(sub, f"{prefix}{name}/")

    walk(filecmp.dircmp(original, copy, ignore=["__pycache__"]), "")
    return sorted(changed)


def _advisor(package_root: Path, catalog: Path, *argv: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(package_root), "ADVISOR_CATALOG": str(catalog)}
    done = subprocess.run(
        [sys.executable, "-m", "advisor", *argv],
        cwd=package_root,  # `-m` puts the working directory first on the path
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_new_card_figure_is_one_field_and_its_data_column(tmp_path: Path) -> None:
    package = _package_with_the_figure(tmp_path / "new")
    assert _changed_files(ROOT / "advisor", package) == ["catalog/records.py", "data/cards.csv"]
    catalog = tmp_path / "catalog.sqlite3"
    _advisor(ROOT, catalog, "catalog", "list")  # a catalog of the current schema, without the column
    shown = _advisor(package.parent, catalog, "catalog", "show", "RTX 4090")  # upgraded by the derived step
    assert "boost clock" in shown and "2520 MHz" in shown, shown
    _advisor(package.parent, catalog, "catalog", "edit", "RTX 4090", "--boost-clock-mhz", "2595")
    exported = tmp_path / "cards.csv"
    _advisor(package.parent, catalog, "catalog", "export", str(exported))  # the CSV writer has the column
    header, *rows = exported.read_text().splitlines()
    edited = next(r for r in rows if r.startswith("GeForce RTX 4090,"))
    assert header.endswith(",boost_clock_mhz") and edited.endswith(",2595"), (header, edited)
