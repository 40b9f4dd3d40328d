"""Telemetry fixtures: a FakeReader over trimmed copies of a real H200's NVML readings (tests/telemetry/fixtures),
and the full recordings in ../shared/calibration/h200 for the tests that want them."""

from __future__ import annotations

from pathlib import Path

import pytest

from advisor.telemetry.fake import FakeReader

FIXTURES = Path(__file__).resolve().parent / "fixtures"
# The repository root's parent holds shared/ (the worktrees and CI check out beside it).
SHARED_H200 = Path(__file__).resolve().parents[3] / "shared" / "calibration" / "h200"


@pytest.fixture
def fake() -> FakeReader:
    return FakeReader(FIXTURES / "nvml_device.json", FIXTURES / "nvml_timeseries.csv")


@pytest.fixture
def two_fakes() -> FakeReader:
    return FakeReader(FIXTURES / "nvml_device.json", FIXTURES / "nvml_timeseries.csv", device_count=2)


@pytest.fixture
def shared_h200() -> Path:
    if not (SHARED_H200 / "nvml_timeseries.csv").is_file():
        pytest.skip(f"the shared calibration data is not at {SHARED_H200} (it sits beside the repository in CI)")
    return SHARED_H200
