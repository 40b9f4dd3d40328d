"""The bundled catalog data is package data (advisor/data): found in the source tree, shipped in the wheel,
and found in a PyInstaller bundle."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from advisor.catalog import bundled

REPO = Path(__file__).resolve().parents[2]


def test_source_tree_data_is_inside_the_package() -> None:
    assert bundled.bundled_dir() == REPO / "advisor" / "data"
    for name in bundled.DATA_FILES:
        assert (bundled.bundled_dir() / name).is_file()
    assert not (REPO / "data").exists(), "the bundled data moved to advisor/data"


def test_frozen_bundle_falls_back_to_meipass(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "elsewhere" / "advisor"
    bundle = tmp_path / "bundle"
    (bundle / "advisor" / "data").mkdir(parents=True)
    (bundle / "advisor" / "data" / "cards.csv").write_text("name\n")
    monkeypatch.setattr(bundled, "__file__", str(package / "catalog" / "bundled.pyc"))
    assert bundled.bundled_dir() == package / "data"  # nothing anywhere: says where it should be
    monkeypatch.setattr(sys, "_MEIPASS", str(bundle), raising=False)
    assert bundled.bundled_dir() == bundle / "advisor" / "data"
    (package / "data").mkdir(parents=True)
    (package / "data" / "cards.csv").write_text("name\n")
    assert bundled.bundled_dir() == package / "data"  # beside the package comes first


def test_the_wheel_carries_the_data(tmp_path: Path) -> None:
    # the build runs in this venv (no network): pyproject's PEP 639 `license = "MIT"` needs setuptools 77
    pytest.importorskip("setuptools", minversion="77")
    source = tmp_path / "src"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, source / name)
    shutil.copytree(REPO / "advisor", source / "advisor", ignore=shutil.ignore_patterns("__pycache__"))
    built = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "--quiet",
            "-w",
            str(tmp_path / "dist"),
            str(source),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stderr
    (wheel,) = (tmp_path / "dist").glob("gpu_advisor-*.whl")  # the distribution gpu-advisor
    names = set(zipfile.ZipFile(wheel).namelist())
    for name in (*bundled.DATA_FILES, "README.md"):
        assert f"advisor/data/{name}" in names
    assert "advisor/i18n/zh_CN.py" in names
    assert "advisor/py.typed" in names
