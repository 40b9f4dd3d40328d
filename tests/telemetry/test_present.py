"""Words for readings: "n/a" for what a card does not report, gpustat lines, and the fit sentence."""

from __future__ import annotations

from dataclasses import replace

import pytest

from advisor.telemetry.fake import FakeReader
from advisor.telemetry.present import GIB, NA, figures, fit, gpustat_line, process_lines
from advisor.telemetry.readings import DeviceReading, ProcessReading


@pytest.fixture
def h200(fake: FakeReader) -> DeviceReading:
    return fake.read().devices[0]


def test_figures_of_the_h200(h200: DeviceReading) -> None:
    rows = dict(figures(h200))
    assert rows["Memory used"] == "0.6 / 140.4 GiB"
    assert rows["Driver reserved"] == "0.60 GiB"
    assert rows["Power"] == "79 W / 700 W"
    assert rows["PCIe link"] == "Gen 5 x16"
    assert rows["Fan"] == NA  # NotSupported on the real card


def test_every_figure_of_an_empty_reading_is_na() -> None:
    rows = dict(figures(DeviceReading(index=0, name="GPU 0", uuid=None)))
    assert rows["Memory used"] == "n/a / n/a"
    assert all(text in (NA, "n/a / n/a") for text in rows.values()), rows


def test_gpustat_line(h200: DeviceReading) -> None:
    busy = replace(h200, processes=(ProcessReading(42, "python", 2 * GIB), ProcessReading(7, NA, None)))
    assert gpustat_line(busy) == (
        "[0] NVIDIA H200          |  33°C,   0 % |    618 / 143771 MiB |   79 W / 700 W | python/42(2048M) n/a/7(n/a)"
    )
    assert process_lines(busy) == ["42 python 2048 MiB", "7 n/a n/a"]


def test_gpustat_line_of_a_lost_gpu() -> None:
    lost = DeviceReading(index=1, name="NVIDIA H200", uuid=None, error="GPU is lost (NVMLError_GpuIsLost)")
    assert gpustat_line(lost) == "[1] NVIDIA H200          | error: GPU is lost (NVMLError_GpuIsLost)"


def test_fit_compares_with_the_total_less_the_driver_reservation(h200: DeviceReading) -> None:
    assert fit(h200, int(17.1 * GIB)).sentence == "fits on your NVIDIA H200: 17.1 of 139.8 GiB"
    usable = h200.process_memory_bytes
    assert usable == 150_754_820_096 - 644_939_776
    assert fit(h200, usable).fits is True
    no = fit(h200, usable + 1, "llama-7b training")
    assert no.fits is False
    assert no.sentence == "llama-7b training does not fit on your NVIDIA H200: 139.8 of 139.8 GiB"


def test_fit_notes_when_the_card_is_busy_now(h200: DeviceReading) -> None:
    busy = replace(h200, memory_free_bytes=10 * GIB)
    sentence = fit(busy, 20 * GIB).sentence
    assert sentence == "fits on your NVIDIA H200: 20.0 of 139.8 GiB (but only 10.0 GiB are free now)"


def test_fit_without_memory_figures() -> None:
    result = fit(DeviceReading(index=0, name="GPU 0", uuid=None), GIB)
    assert result.fits is None and result.sentence == "vs your GPU 0: memory n/a"
