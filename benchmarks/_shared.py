"""Where the shared calibration data lies: ../shared beside the repository (or $ADVISOR_SHARED)."""

from __future__ import annotations

import os
from pathlib import Path

SHARED = Path(os.environ.get("ADVISOR_SHARED", Path(__file__).resolve().parents[2] / "shared"))
MEASUREMENTS = SHARED / "calibration" / "h200" / "measurements.csv"
