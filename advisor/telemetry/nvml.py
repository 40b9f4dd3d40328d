"""NvmlReader: the real readings, through nvidia-ml-py (import name `pynvml`).

Like nvitop's api/, every NVML call is wrapped: a call the card does not support becomes None ("n/a"), a lost
GPU or another NVML error becomes a reading with an `error`, and a machine without the NVML library or driver
(no GPU, macOS) becomes a Snapshot without devices that says why. read() never raises.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from typing import Any

import psutil
import pynvml

from advisor.telemetry.readings import DeviceReading, ProcessReading, Snapshot, no_gpu

# Errors that mean "this figure does not exist here": show n/a, say nothing more.
# FunctionNotFound: an older driver without the call (e.g. nvmlDeviceGetMemoryInfo_v2).
_ABSENT = (pynvml.NVMLError_NotSupported, pynvml.NVMLError_FunctionNotFound)
# Errors that mean the whole device is gone: stop asking it anything this round.
_DEVICE_GONE = (pynvml.NVMLError_GpuIsLost, pynvml.NVMLError_GpuNotFound)


class DeviceGone(Exception):
    """A call said the GPU has fallen off the bus; the rest of the device's calls would fail the same way."""


def process_name(pid: int) -> str:
    try:
        name: str = psutil.Process(pid).name()
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
        return "n/a"
    return name


def _text(value: Any) -> str:
    # Old pynvml releases returned bytes for strings.
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)


class _DeviceCalls:
    """The calls for one device in one round, collecting the errors that are worth showing."""

    def __init__(self, nvml: Any, handle: Any) -> None:
        self.nvml = nvml
        self.handle = handle
        self.errors: list[str] = []

    def get(self, function_name: str, *args: Any) -> Any:
        try:
            return getattr(self.nvml, function_name)(self.handle, *args)
        except _ABSENT:
            return None
        except _DEVICE_GONE as error:
            raise DeviceGone(f"{error} ({type(error).__name__})") from error
        except pynvml.NVMLError as error:
            self.errors.append(f"{function_name}: {error}")
            return None


class NvmlReader:
    """Reads all NVIDIA devices. `nvml` is the pynvml module, or a stand-in with the same functions (tests)."""

    def __init__(self, nvml: Any = None, clock: Callable[[], float] = time.time) -> None:
        self._nvml = nvml if nvml is not None else pynvml
        self._clock = clock
        self._initialised = False
        # Name and UUID never change: remembered so that a GPU that is lost later is still named.
        self._identity: dict[int, tuple[str, str | None]] = {}
        self._count = 0

    def read(self) -> Snapshot:
        now = self._clock()
        try:
            return self._read(now)
        except pynvml.NVMLError as error:
            # nvmlInit or nvmlDeviceGetCount failed: no library (macOS, no driver), driver not loaded...
            self._initialised = False
            return no_gpu(str(error) or type(error).__name__, now)
        except Exception as error:  # a broken driver binding must not take the program down
            self._initialised = False
            return no_gpu(f"NVML failed: {type(error).__name__}: {error}", now)

    def close(self) -> None:
        if self._initialised:
            self._initialised = False
            # Shutting down a library that is already gone is not worth reporting.
            with contextlib.suppress(pynvml.NVMLError):
                self._nvml.nvmlShutdown()

    def _read(self, now: float) -> Snapshot:
        if not self._initialised:
            self._nvml.nvmlInit()
            self._initialised = True
        count = int(self._nvml.nvmlDeviceGetCount())
        if count == 0:
            return no_gpu("the NVIDIA driver reports no devices", now)
        if count != self._count:
            self._identity.clear()  # the devices were enumerated again: an index may now be another card
            self._count = count
        try:
            driver: str | None = _text(self._nvml.nvmlSystemGetDriverVersion())
        except pynvml.NVMLError:
            driver = None
        devices = tuple(self._read_device(index, now) for index in range(count))
        return Snapshot(devices=devices, driver_version=driver, timestamp=now)

    def _read_device(self, index: int, now: float) -> DeviceReading:
        try:
            handle = self._nvml.nvmlDeviceGetHandleByIndex(index)
            calls = _DeviceCalls(self._nvml, handle)
            if index not in self._identity:
                name, uuid = calls.get("nvmlDeviceGetName"), calls.get("nvmlDeviceGetUUID")
                self._identity[index] = (_text(name) if name else f"GPU {index}", _text(uuid) if uuid else None)
            reading = self._figures(calls, index, now)
        except DeviceGone as error:
            return self._failed(index, now, str(error))
        except pynvml.NVMLError as error:
            return self._failed(index, now, f"{error} ({type(error).__name__})")
        return reading

    def _failed(self, index: int, now: float, error: str) -> DeviceReading:
        name, uuid = self._identity.get(index, (f"GPU {index}", None))
        return DeviceReading(index=index, name=name, uuid=uuid, timestamp=now, error=error)

    def _figures(self, calls: _DeviceCalls, index: int, now: float) -> DeviceReading:
        nvml = self._nvml
        memory = calls.get("nvmlDeviceGetMemoryInfo")
        # pynvml has had nvmlMemory_v2 since 11.510; older bindings simply have no reserved figure.
        memory_v2 = calls.get("nvmlDeviceGetMemoryInfo", nvml.nvmlMemory_v2) if hasattr(nvml, "nvmlMemory_v2") else None
        rates = calls.get("nvmlDeviceGetUtilizationRates")
        power_mw, limit_mw = calls.get("nvmlDeviceGetPowerUsage"), calls.get("nvmlDeviceGetEnforcedPowerLimit")
        name, uuid = self._identity[index]
        return DeviceReading(
            index=index,
            name=name,
            uuid=uuid,
            memory_total_bytes=memory.total if memory is not None else None,
            memory_used_bytes=memory.used if memory is not None else None,
            memory_free_bytes=memory.free if memory is not None else None,
            memory_reserved_bytes=memory_v2.reserved if memory_v2 is not None else None,
            gpu_util_pct=rates.gpu if rates is not None else None,
            mem_util_pct=rates.memory if rates is not None else None,
            temperature_c=calls.get("nvmlDeviceGetTemperature", nvml.NVML_TEMPERATURE_GPU),
            fan_speed_pct=calls.get("nvmlDeviceGetFanSpeed"),
            power_draw_w=power_mw / 1000 if power_mw is not None else None,
            power_limit_w=limit_mw / 1000 if limit_mw is not None else None,
            sm_clock_mhz=calls.get("nvmlDeviceGetClockInfo", nvml.NVML_CLOCK_SM),
            mem_clock_mhz=calls.get("nvmlDeviceGetClockInfo", nvml.NVML_CLOCK_MEM),
            pcie_gen=calls.get("nvmlDeviceGetCurrPcieLinkGeneration"),
            pcie_width=calls.get("nvmlDeviceGetCurrPcieLinkWidth"),
            processes=_processes(calls),
            timestamp=now,
            error="; ".join(calls.errors) or None,
        )


def _processes(calls: _DeviceCalls) -> tuple[ProcessReading, ...]:
    """Compute and graphics processes, once each: a process doing both is listed by both calls."""
    seen: dict[int, ProcessReading] = {}
    for function_name in ("nvmlDeviceGetComputeRunningProcesses", "nvmlDeviceGetGraphicsRunningProcesses"):
        for info in calls.get(function_name) or ():
            if info.pid not in seen:
                seen[info.pid] = ProcessReading(info.pid, process_name(info.pid), info.usedGpuMemory)
    return tuple(seen.values())
