"""What one look at the GPUs returns: frozen records whose field names carry their unit.

Every optional figure is None when the card does not support it (NVMLError_NotSupported) or it could not be
read; the presentation layer renders None as "n/a".
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Protocol

NO_GPU = "No NVIDIA GPU found"


@dataclass(frozen=True)
class ProcessReading:
    pid: int
    name: str  # "n/a" when psutil may not look at the process (another user's, or it has exited)
    used_memory_bytes: int | None  # None where the driver does not say (Windows WDDM, some containers)


@dataclass(frozen=True)
class DeviceReading:
    index: int
    name: str
    uuid: str | None
    # NVML's v1 "used" (total - free): it includes the driver's own reservation, as nvidia-smi printed it
    # before driver 510 and as the recorded H200 time series shows it (618 MiB on an idle card).
    memory_total_bytes: int | None = None
    memory_used_bytes: int | None = None
    memory_free_bytes: int | None = None
    memory_reserved_bytes: int | None = None  # nvmlMemory_v2 only: memory no process can ever get
    gpu_util_pct: int | None = None
    mem_util_pct: int | None = None
    temperature_c: int | None = None
    fan_speed_pct: int | None = None  # passively cooled data-centre cards do not support it
    power_draw_w: float | None = None
    power_limit_w: float | None = None
    sm_clock_mhz: int | None = None
    mem_clock_mhz: int | None = None
    pcie_gen: int | None = None
    pcie_width: int | None = None
    processes: tuple[ProcessReading, ...] = ()
    timestamp: float = 0.0  # seconds since the epoch (or the fake reader's replay clock)
    error: str | None = None  # set when the GPU was lost or NVML failed; figures are then None

    @property
    def key(self) -> str:
        """Identity across polls: the UUID survives re-enumeration, the index does not."""
        return self.uuid or f"index:{self.index}"

    @property
    def process_memory_bytes(self) -> int | None:
        """What processes can have in all: the total less the driver's reservation where NVML reports it."""
        if self.memory_total_bytes is None:
            return None
        return self.memory_total_bytes - (self.memory_reserved_bytes or 0)


@dataclass(frozen=True)
class Snapshot:
    devices: tuple[DeviceReading, ...]
    message: str | None = None  # why there are no devices ("No NVIDIA GPU found (...)"), else None
    driver_version: str | None = None
    timestamp: float = 0.0

    def to_json(self) -> dict[str, Any]:
        """Stable keys for `advisor monitor --json`: devices (a list, empty without a GPU) and message."""
        return {
            "devices": [asdict(device) for device in self.devices],
            "message": self.message,
            "driver_version": self.driver_version,
            "timestamp": self.timestamp,
        }


def no_gpu(reason: str, timestamp: float = 0.0) -> Snapshot:
    return Snapshot(devices=(), message=f"{NO_GPU} ({reason})", timestamp=timestamp)


class Reader(Protocol):
    """Anything that can look at the GPUs: NvmlReader, FakeReader. read() never raises."""

    def read(self) -> Snapshot: ...

    def close(self) -> None: ...


__all__ = ["NO_GPU", "DeviceReading", "ProcessReading", "Reader", "Snapshot", "no_gpu"]
