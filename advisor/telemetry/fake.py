"""FakeReader: replays recorded readings of a real GPU through the real NvmlReader code.

`FakeNvml` stands in for the pynvml module: static figures (name, power limit, PCIe link, the calls the card
does not support) come from an `nvml_device.json` dump, the moving ones (memory, utilisation, power,
temperature, clocks) from an `nvml_timeseries.csv` recorded at 5 Hz while the card trained models. Each
read() advances one sample, so the replay clock runs at the recording's pace however fast a test polls.
A GPU can be made to disappear mid-session: "lost" (calls fail with NVMLError_GpuIsLost) or "removed"
(the device count drops), the two ways NVML shows a card falling off the bus.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Literal

import pynvml

from advisor.telemetry.nvml import NvmlReader
from advisor.telemetry.readings import Snapshot

MIB = 1024**2
# The replay clock starts here (2024-01-01 UTC) so timestamps look like real epoch seconds.
REPLAY_EPOCH = 1_704_067_200.0


@dataclass(frozen=True)
class Sample:
    """One row of nvml_timeseries.csv."""

    t_s: float
    mem_used_mib: int
    util_gpu_pct: int
    util_mem_pct: int
    power_w: float
    temp_c: int
    sm_clock_mhz: int
    mem_clock_mhz: int


def load_timeseries(path: Path) -> tuple[Sample, ...]:
    with path.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    return tuple(
        Sample(
            float(r["t_s"]),
            int(r["mem_used_mib"]),
            int(r["util_gpu_pct"]),
            int(r["util_mem_pct"]),
            float(r["power_w"]),
            int(r["temp_c"]),
            int(r["sm_clock_mhz"]),
            int(r["mem_clock_mhz"]),
        )
        for r in rows
    )


def _raise_if_error(value: Any) -> Any:
    """The dump stores an unsupported call as {"error": "NVMLError_NotSupported", ...}: raise that again."""
    if isinstance(value, dict) and "error" in value:
        raise getattr(pynvml, value["error"], pynvml.NVMLError_Unknown)()
    return value


class FakeNvml:
    """The subset of the pynvml module that NvmlReader calls, answering from the recorded data."""

    NVML_TEMPERATURE_GPU = pynvml.NVML_TEMPERATURE_GPU
    NVML_CLOCK_SM = pynvml.NVML_CLOCK_SM
    NVML_CLOCK_MEM = pynvml.NVML_CLOCK_MEM
    nvmlMemory_v2 = pynvml.nvmlMemory_v2

    def __init__(self, dump: dict[str, Any], samples: tuple[Sample, ...], device_count: int = 1) -> None:
        if not samples:
            raise ValueError("the time series has no samples")
        self.dump = dump
        self.samples = samples
        self.step = 0
        self.present = list(range(device_count))  # indexes of the devices still on the bus
        self.lost: set[int] = set()
        self.processes: dict[int, list[tuple[int, int | None]]] = {}  # device -> [(pid, used bytes)]
        self.init_error: str | None = None  # e.g. "NVMLError_DriverNotLoaded"

    # -- replay clock
    def sample(self) -> Sample:
        return self.samples[self.step % len(self.samples)]

    def replay_time(self) -> float:
        """Seconds since the start; the series loops, continuing its clock (one period = last t + 0.2 s)."""
        period = self.samples[-1].t_s + 0.2
        laps, position = divmod(self.step, len(self.samples))
        return REPLAY_EPOCH + laps * period + self.samples[position].t_s

    # -- system
    def nvmlInit(self) -> None:
        if self.init_error:
            raise getattr(pynvml, self.init_error)()

    def nvmlShutdown(self) -> None:
        pass

    def nvmlSystemGetDriverVersion(self) -> str:
        return str(self.dump["driver_version"])

    def nvmlDeviceGetCount(self) -> int:
        return len(self.present)

    def nvmlDeviceGetHandleByIndex(self, index: int) -> int:
        if index >= len(self.present):
            raise pynvml.NVMLError_InvalidArgument()
        return self.present[index]  # the handle is the device's original number

    # -- per device
    def _device(self, handle: int) -> dict[str, Any]:
        if handle in self.lost:
            raise pynvml.NVMLError_GpuIsLost()
        devices: list[dict[str, Any]] = self.dump["devices"]
        return devices[handle % len(devices)]

    def _static(self, handle: int, key: str) -> Any:
        return _raise_if_error(self._device(handle)[key])

    def nvmlDeviceGetName(self, handle: int) -> str:
        return str(self._static(handle, "name"))

    def nvmlDeviceGetUUID(self, handle: int) -> str:
        uuid = str(self._static(handle, "uuid"))
        return uuid if handle == 0 else f"{uuid[:-2]}{handle:02d}"  # copies of the card need their own UUID

    def nvmlDeviceGetMemoryInfo(self, handle: int, version: int | None = None) -> SimpleNamespace:
        total = int(self._static(handle, "memory_info")["total"])
        used = self.sample().mem_used_mib * MIB
        if version is None:
            return SimpleNamespace(total=total, used=used, free=total - used)
        reserved = int(self._static(handle, "memory_info_v2")["reserved"])
        return SimpleNamespace(total=total, reserved=reserved, used=max(used - reserved, 0), free=total - used)

    def nvmlDeviceGetUtilizationRates(self, handle: int) -> SimpleNamespace:
        self._device(handle)
        return SimpleNamespace(gpu=self.sample().util_gpu_pct, memory=self.sample().util_mem_pct)

    def nvmlDeviceGetTemperature(self, handle: int, sensor: int) -> int:
        self._device(handle)
        return self.sample().temp_c

    def nvmlDeviceGetFanSpeed(self, handle: int) -> int:
        return int(self._static(handle, "fan_speed_pct"))

    def nvmlDeviceGetPowerUsage(self, handle: int) -> int:
        self._device(handle)
        return round(self.sample().power_w * 1000)

    def nvmlDeviceGetEnforcedPowerLimit(self, handle: int) -> int:
        return int(self._static(handle, "power_limit_mw"))

    def nvmlDeviceGetClockInfo(self, handle: int, clock: int) -> int:
        self._device(handle)
        return self.sample().sm_clock_mhz if clock == self.NVML_CLOCK_SM else self.sample().mem_clock_mhz

    def nvmlDeviceGetCurrPcieLinkGeneration(self, handle: int) -> int:
        return int(self._static(handle, "pcie_link_gen"))

    def nvmlDeviceGetCurrPcieLinkWidth(self, handle: int) -> int:
        return int(self._static(handle, "pcie_link_width"))

    def nvmlDeviceGetComputeRunningProcesses(self, handle: int) -> list[SimpleNamespace]:
        self._static(handle, "compute_processes")
        return [SimpleNamespace(pid=pid, usedGpuMemory=used) for pid, used in self.processes.get(handle, [])]

    def nvmlDeviceGetGraphicsRunningProcesses(self, handle: int) -> list[SimpleNamespace]:
        self._device(handle)
        return []  # a headless data-centre card runs no graphics


class FakeReader(NvmlReader):
    """NvmlReader over FakeNvml: one recorded sample per read(), timestamps on the replay clock."""

    def __init__(self, device_json: Path, timeseries_csv: Path, device_count: int = 1) -> None:
        self.fake = FakeNvml(json.loads(device_json.read_text()), load_timeseries(timeseries_csv), device_count)
        super().__init__(nvml=self.fake, clock=self.fake.replay_time)

    def read(self) -> Snapshot:
        snapshot = super().read()
        self.fake.step += 1
        return snapshot

    def disappear(self, index: int, how: Literal["lost", "removed"] = "lost") -> None:
        """Make device `index` (its original number) fall off the bus from the next read on."""
        if how == "lost":
            self.fake.lost.add(index)
        elif index in self.fake.present:
            self.fake.present.remove(index)

    def set_processes(self, index: int, processes: list[tuple[int, int | None]]) -> None:
        self.fake.processes[index] = processes
