"""Words for readings, shared by `advisor monitor` and the Live GPUs panel: None is always "n/a"."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from advisor.telemetry.readings import DeviceReading

NA = "n/a"
GIB = 1024**3
MIB = 1024**2


def na(value: float | None, unit: str = "", digits: int = 0) -> str:
    if value is None:
        return NA
    return f"{value:.{digits}f}{unit}"


def gib(value: int | None, digits: int = 1, unit: str = " GiB") -> str:
    return NA if value is None else f"{value / GIB:.{digits}f}{unit}"


def figures(device: DeviceReading) -> list[tuple[str, str]]:
    """(label, text) rows in the order the panel shows them."""
    pcie = (
        NA
        if device.pcie_gen is None and device.pcie_width is None
        else (f"Gen {na(device.pcie_gen)} x{na(device.pcie_width)}")
    )
    return [
        ("Memory used", f"{gib(device.memory_used_bytes, unit='')} / {gib(device.memory_total_bytes)}"),
        ("Memory free", gib(device.memory_free_bytes)),
        ("Driver reserved", gib(device.memory_reserved_bytes, 2)),
        ("GPU utilisation", na(device.gpu_util_pct, " %")),
        ("Memory utilisation", na(device.mem_util_pct, " %")),
        ("Temperature", na(device.temperature_c, " °C")),
        ("Fan", na(device.fan_speed_pct, " %")),
        ("Power", f"{na(device.power_draw_w, ' W')} / {na(device.power_limit_w, ' W')}"),
        ("SM clock", na(device.sm_clock_mhz, " MHz")),
        ("Memory clock", na(device.mem_clock_mhz, " MHz")),
        ("PCIe link", pcie),
    ]


def process_lines(device: DeviceReading) -> list[str]:
    return [
        f"{p.pid} {p.name} {NA if p.used_memory_bytes is None else f'{p.used_memory_bytes / MIB:.0f} MiB'}"
        for p in device.processes
    ]


def gpustat_line(device: DeviceReading) -> str:
    """One line a card, as gpustat prints it: [0] NAME | 40°C,  0 % |   615 / 143771 MiB | 533 / 700 W | procs."""
    head = f"[{device.index}] {device.name:<20}"
    if device.error and device.memory_total_bytes is None:
        return f"{head} | error: {device.error}"
    used = NA if device.memory_used_bytes is None else f"{device.memory_used_bytes // MIB:>6}"
    total = NA if device.memory_total_bytes is None else f"{device.memory_total_bytes // MIB}"
    procs = " ".join(
        f"{p.name}/{p.pid}({NA if p.used_memory_bytes is None else f'{p.used_memory_bytes // MIB}M'})"
        for p in device.processes
    )
    line = (
        f"{head} | {na(device.temperature_c, '°C'):>5}, {na(device.gpu_util_pct, ' %'):>5} | "
        f"{used} / {total} MiB | {na(device.power_draw_w, ' W'):>6} / {na(device.power_limit_w, ' W')}"
    )
    return f"{line} | {procs}" if procs else line


@dataclass(frozen=True)
class Fit:
    fits: bool | None  # None when the card's memory is unknown
    sentence: str  # in English, for the command line; the app words it from the fields below
    device_name: str = ""
    required_gib: float = 0.0
    usable_gib: float | None = None
    free_gib_if_short: float | None = None  # set when it fits the card but not what is free right now


def fit(device: DeviceReading, required_bytes: int, label: str = "") -> Fit:
    """Does a workload needing `required_bytes` fit this card? Compared with what processes can ever have
    (the total less the driver's reservation); a note is added when it fits the card but not what is free now.
    """
    subject = f"{label} " if label else ""
    usable = device.process_memory_bytes
    required = required_bytes / GIB
    if usable is None:
        return Fit(None, f"{subject}vs your {device.name}: memory n/a", device.name, required)
    need = f"{required:.1f} of {usable / GIB:.1f} GiB"
    if required_bytes > usable:
        return Fit(False, f"{subject}does not fit on your {device.name}: {need}", device.name, required, usable / GIB)
    sentence = f"{subject}fits on your {device.name}: {need}"
    free = device.memory_free_bytes
    short = free / GIB if free is not None and required_bytes > free else None
    if short is not None:
        sentence += f" (but only {short:.1f} GiB are free now)"
    return Fit(True, sentence, device.name, required, usable / GIB, short)


def series(
    readings: Sequence[DeviceReading], figure: str, now: float, scale: float = 1.0
) -> tuple[list[float], list[float]]:
    """(minutes before `now`, value / scale) for a chart; a missing value is NaN so that the line breaks there
    (a lost GPU shows as a gap, not as a drop to zero)."""
    minutes = [(reading.timestamp - now) / 60 for reading in readings]
    values = [getattr(reading, figure) for reading in readings]
    return minutes, [math.nan if value is None else value / scale for value in values]
