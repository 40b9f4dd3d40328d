"""Live readings of the local NVIDIA GPUs through NVML (nvidia-ml-py, import name `pynvml`). No UI here.

`NvmlReader().read()` returns a `Snapshot`; `Poller` reads on a background thread and keeps 10 minutes of
history; `FakeReader` replays recorded readings of a real H200 for tests and demos.
"""

from __future__ import annotations

from advisor.telemetry.readings import DeviceReading, ProcessReading, Reader, Snapshot

__all__ = ["DeviceReading", "ProcessReading", "Reader", "Snapshot"]
