"""The distribution as users get it: scripts/wheel_check.sh builds the gpu-advisor wheel and sdist, installs
the wheel into a clean virtual environment and runs `advisor --self-check` from outside the checkout."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from advisor import DISTRIBUTION

REPO = Path(__file__).resolve().parents[2]


def test_the_distribution_name_is_ours_everywhere() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert project["name"] == DISTRIBUTION == "gpu-advisor"
    assert project["scripts"]["advisor"] == "advisor.cli:main"  # the command keeps its name
    readme = (REPO / "README.md").read_text()
    assert "pip install gpu-advisor " in readme and not re.search(r"pip install \"?advisor[\[ ]", readme)


@pytest.mark.skipif(sys.platform != "linux", reason="the check script is bash")
def test_wheel_installs_and_self_checks_in_a_clean_venv() -> None:
    pytest.importorskip("setuptools", minversion="77")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        ["bash", str(REPO / "scripts" / "wheel_check.sh"), sys.executable],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    lines = done.stdout.splitlines()
    assert "(gpu-advisor on the package index;" in lines[0] and "/venv/lib/" in lines[0]  # the wheel's copy ran
    assert any(line.startswith("self-check passed in ") for line in lines)
    built = r"wheel_check: gpu_advisor-[\d.]+-py3-none-any\.whl and gpu_advisor-[\d.]+\.tar\.gz built"
    assert re.match(built, lines[-1])
