"""advisor.telemetry has no UI: it and `advisor monitor` import with Qt and matplotlib made unimportable."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PROBE = """
import sys
for blocked in ("PySide6", "matplotlib", "shiboken6"):
    sys.modules[blocked] = None  # import raises ImportError
import advisor.telemetry.nvml, advisor.telemetry.fake, advisor.telemetry.poller, advisor.telemetry.present
import advisor.commands.monitor
print("ok")
"""


def test_telemetry_imports_without_qt_or_matplotlib() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=REPO, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
