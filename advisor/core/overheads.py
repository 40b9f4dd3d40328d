"""What a process costs on a card beyond PyTorch's allocator: the driver's reservation, the CUDA context,
and cuBLAS/cuDNN workspaces. Measured on the H200 (../shared/calibration/h200/environment.json,
context_probe): NVML used 644,939,776 B before torch (driver reservation), 1,295,908,864 after CUDA init,
1,449,000,960 after cuBLAS and cuDNN, of which 77,594,624 was the allocator's own reservation."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DeviceOverhead:
    family: str
    driver_reserved_bytes: int  # NVML "used" on an idle card (nvmlMemory_v2 reports it as reserved)
    context_bytes: int  # CUDA context plus cuBLAS/cuDNN code, outside the caching allocator
    workspace_bytes: int  # cuBLAS/cuDNN workspaces held in the caching allocator
    source: str


HOPPER_MEASURED = DeviceOverhead(
    family="hopper",
    driver_reserved_bytes=644_939_776,
    context_bytes=1_449_000_960 - 644_939_776 - 77_594_624,  # = 726,466,560
    workspace_bytes=77_594_624,
    source="measured on an NVIDIA H200, driver 580.159, CUDA 13.0, PyTorch 2.11 (shared/calibration/h200)",
)

DEFAULT_OVERHEAD = HOPPER_MEASURED


def device_total_bytes(reserved_bytes: int, overhead: DeviceOverhead = DEFAULT_OVERHEAD) -> int:
    """What nvidia-smi would show for the whole card while the step runs in one process."""
    return reserved_bytes + overhead.workspace_bytes + overhead.context_bytes + overhead.driver_reserved_bytes
