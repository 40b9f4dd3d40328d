"""packaging/: the PyInstaller spec, build.sh, the Linux desktop entry, AppStream metainfo and icons agree
with each other and with the project (the build itself is too slow for CI: packaging/build.sh runs it)."""

from __future__ import annotations

import ast
import configparser
import os
import shutil
import struct
import subprocess
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import advisor

REPO = Path(__file__).resolve().parents[2]
PACKAGING = REPO / "packaging"
APP_ID = "io.github.advisor.Advisor"
DESKTOP = PACKAGING / "linux" / f"{APP_ID}.desktop"
METAINFO = PACKAGING / "linux" / f"{APP_ID}.metainfo.xml"
ICONS = PACKAGING / "icons"
ICON_SIZES = (16, 24, 32, 48, 64, 128, 256, 512)


def spec_list(name: str) -> list[str]:
    tree = ast.parse((PACKAGING / "advisor.spec").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            value = ast.literal_eval(node.value)
            assert isinstance(value, list)
            return value
    raise AssertionError(f"advisor.spec has no {name} = [...]")


def run_tool(*command: str) -> subprocess.CompletedProcess[str]:
    if shutil.which(command[0]) is None:
        pytest.skip(f"{command[0]} is not installed")
    return subprocess.run(command, capture_output=True, text=True, timeout=120)


def test_spec_bundles_the_package_and_its_data_and_leaves_the_heavy_extras_out() -> None:
    text = (PACKAGING / "advisor.spec").read_text(encoding="utf-8")
    assert 'collect_data_files("advisor")' in text
    assert 'collect_submodules("advisor"' in text  # cli.py imports its subcommands by name
    assert "advisor_entry.py" in text and (PACKAGING / "advisor_entry.py").is_file()
    assert {"torch", "onnx", "safetensors", "torchvision", "timm", "transformers"} <= set(spec_list("OPTIONAL_HEAVY"))
    # nothing the app imports is excluded
    excluded = set(spec_list("OPTIONAL_HEAVY")) | set(spec_list("UNUSED"))
    used = {
        "PySide6.QtCore",
        "PySide6.QtGui",
        "PySide6.QtWidgets",
        "PySide6.QtSvg",
        "matplotlib",
        "numpy",
        "sqlalchemy",
        "pynvml",
        "platformdirs",
        "psutil",
        "PIL",
    }
    assert not used & excluded
    compile(text, "advisor.spec", "exec")


def test_pyproject_declares_the_data_and_the_extras() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert {"data/*.csv", "data/README.md"} <= set(project["tool"]["setuptools"]["package-data"]["advisor"])
    assert {"torch", "onnx"} <= set(project["project"]["optional-dependencies"])
    assert project["project"]["version"] == advisor.__version__


SCRIPTS = [PACKAGING / "build.sh", PACKAGING / "linux" / "stage.sh", PACKAGING / "linux" / "install.sh"]


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda path: path.name)
def test_scripts_are_executable_bash(script: Path) -> None:
    assert os.access(script, os.X_OK)
    text = script.read_text(encoding="utf-8")
    assert text.startswith("#!/usr/bin/env bash\n") and "set -euo pipefail\n" in text


def test_scripts_are_shellcheck_clean() -> None:
    done = run_tool("shellcheck", *map(str, SCRIPTS))
    assert done.returncode == 0, done.stdout


def test_build_outputs_are_ignored() -> None:
    ignored = (REPO / ".gitignore").read_text(encoding="utf-8").splitlines()
    for path in ("/packaging/.venv/", "/packaging/build/", "/packaging/dist/"):
        assert path in ignored


def test_desktop_entry_starts_the_installed_command_with_our_icon() -> None:
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read(DESKTOP, encoding="utf-8")
    entry = parser["Desktop Entry"]
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
    assert entry["Type"] == "Application"
    assert entry["Exec"] in scripts  # the command pip installs, and the packaged binary's name
    assert entry["Icon"] == APP_ID
    assert entry["Terminal"] == "false"
    assert "Name[zh_CN]" in entry and "Comment[zh_CN]" in entry


def test_desktop_entry_validates() -> None:
    done = run_tool("desktop-file-validate", str(DESKTOP))
    assert done.returncode == 0 and not done.stdout.strip(), done.stdout


def test_metainfo_names_the_desktop_entry_and_the_current_release() -> None:
    root = ET.parse(METAINFO).getroot()
    assert root.get("type") == "desktop-application"
    assert root.findtext("id") == APP_ID
    assert root.findtext("launchable") == DESKTOP.name
    assert root.findtext("provides/binary") == "advisor"
    assert root.findtext("project_license") == "MIT"
    releases = root.findall("releases/release")
    assert releases and releases[0].get("version") == advisor.__version__, "add a <release> for the new version"


def test_metainfo_validates() -> None:
    done = run_tool("appstreamcli", "validate", "--no-net", "--pedantic", str(METAINFO))
    assert done.returncode == 0, done.stdout
    assert "E:" not in done.stdout and "W:" not in done.stdout, done.stdout


def png_size(path: Path) -> tuple[int, int]:
    header = path.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n" and header[12:16] == b"IHDR", path
    width, height = struct.unpack(">II", header[16:24])
    return width, height


def test_icon_svg_and_every_png_size() -> None:
    svg = ET.parse(ICONS / f"{APP_ID}.svg").getroot()
    assert svg.get("viewBox") == "0 0 128 128"
    for size in ICON_SIZES:
        assert png_size(ICONS / "hicolor" / f"{size}x{size}" / "apps" / f"{APP_ID}.png") == (size, size)
    assert (ICONS / "advisor.ico").read_bytes()[:4] == b"\x00\x00\x01\x00"
    assert (ICONS / "advisor.icns").read_bytes()[:4] == b"icns"
