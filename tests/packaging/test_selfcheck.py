"""`advisor --self-check`: passes on a working install without a display and without touching the user's
files; fails with a clear line when something is broken."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from advisor import cli, selfcheck

REPO = Path(__file__).resolve().parents[2]


def line(status: str, check: str) -> str:
    """The start of a check's line as the report prints it."""
    out = io.StringIO()
    selfcheck.Report(out).line(status, check, "")
    return out.getvalue().rstrip("\n")


def test_passes_offscreen_and_leaves_the_users_files_alone(tmp_path: Path) -> None:
    home, temp = tmp_path / "home", tmp_path / "tmp"
    temp.mkdir()
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM", "ADVISOR_CATALOG")
    }
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / "config"),
        XDG_DATA_HOME=str(home / "data"),
        XDG_CACHE_HOME=str(home / "cache"),
        TMPDIR=str(temp),
        PYTHONPATH=str(REPO),
    )
    done = subprocess.run(
        [sys.executable, "-m", "advisor", "--self-check"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    for check in ("data", "catalog", "estimate", "translations", "window"):
        assert any(line.split()[:2] == ["ok", check] for line in lines), (check, done.stdout)
    window = next(line for line in lines if line.startswith("ok   window"))
    assert "offscreen platform" in window and "cards ranked" in window
    assert str(REPO / "advisor" / "data") in done.stdout
    assert lines[-1].startswith("self-check passed in ")
    # no catalog or settings of the user's were created, and the temporary folder is gone again
    assert not (home / "data" / "advisor").exists()
    assert not (home / "config" / "advisor").exists()
    assert list(temp.iterdir()) == []


def test_missing_data_fails_every_check_that_needs_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    monkeypatch.setattr("advisor.catalog.bundled.bundled_dir", lambda: tmp_path)
    monkeypatch.setattr("advisor.catalog.database.bundled_dir", lambda: tmp_path)
    out = io.StringIO()
    assert selfcheck.run(out) == 1
    text = out.getvalue()
    assert f"{line('FAIL', 'data')}bundled data missing in {tmp_path}: sources.csv, cards.csv, prices.csv" in text
    assert f"{line('FAIL', 'catalog')}FileNotFoundError" in text
    assert f"{line('FAIL', 'window')}not tried: the catalog check failed" in text
    assert "ok   estimate" in text
    assert text.splitlines()[-1].startswith("self-check FAILED (data, catalog, window) in ")


def test_a_window_that_cannot_be_built_fails_the_check(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")

    def broken(*_args: object) -> object:
        raise RuntimeError("no platform plugin")

    monkeypatch.setattr("advisor.ui.app.make_window", broken)
    out = io.StringIO()
    assert selfcheck.run(out) == 1
    assert f"{line('FAIL', 'window')}RuntimeError: no platform plugin" in out.getvalue()
    assert out.getvalue().splitlines()[-1].startswith("self-check FAILED (window) in ")


@pytest.mark.parametrize(
    ("environ", "system", "offscreen"),
    [
        ({}, "Linux", True),
        ({"DISPLAY": ":0"}, "Linux", False),
        ({"WAYLAND_DISPLAY": "wayland-0"}, "Linux", False),
        ({"QT_QPA_PLATFORM": "xcb"}, "Linux", False),  # the user's choice wins
        ({}, "FreeBSD", True),
        ({}, "Windows", False),
        ({}, "Darwin", False),
    ],
)
def test_offscreen_only_without_a_display(environ: dict[str, str], system: str, offscreen: bool) -> None:
    assert selfcheck.needs_offscreen(environ, system) is offscreen


def test_the_flag_runs_the_check_and_exits_with_its_code(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("advisor.selfcheck.run", lambda: 7)
    assert cli.main(["--self-check"]) == 7
