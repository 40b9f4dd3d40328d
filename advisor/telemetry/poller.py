"""Poller: reads the GPUs on a background thread and keeps the last 10 minutes of readings per device.

The UI never waits on NVML (a call can take tens of milliseconds, and a lost GPU longer): it asks `state()`,
which copies the history under a lock and returns frozen records. Time in the history is the readings' own
timestamps, so a reader on a replay clock (FakeReader) ages its history the same way a real one does.
"""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass

from advisor.telemetry.readings import DeviceReading, Reader, Snapshot

HISTORY_S = 600.0
INTERVAL_S = 1.0


@dataclass(frozen=True)
class DeviceHistory:
    key: str
    readings: tuple[DeviceReading, ...]  # oldest first; never empty
    present: bool  # False once the device has left the device list (its history stays until it ages out)

    @property
    def latest(self) -> DeviceReading:
        return self.readings[-1]


@dataclass(frozen=True)
class PollerState:
    snapshot: Snapshot | None  # the latest snapshot; None before the first poll
    devices: tuple[DeviceHistory, ...]  # in device-index order, devices that went away last
    polls: int  # how many polls so far: the UI redraws only when this changes
    history_s: float


class Poller:
    def __init__(self, reader: Reader, interval_s: float = INTERVAL_S, history_s: float = HISTORY_S) -> None:
        if interval_s <= 0 or history_s <= 0:
            raise ValueError("interval_s and history_s must be positive")
        self.reader = reader
        self.interval_s = interval_s
        self.history_s = history_s
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._history: dict[str, deque[DeviceReading]] = {}
        self._present: list[str] = []
        self._snapshot: Snapshot | None = None
        self._polls = 0

    # -- thread
    def start(self) -> None:
        if self._thread is not None and self._thread.is_alive():
            return
        self._stop.clear()
        # A daemon thread: a reader stuck in the driver must not keep the program from exiting.
        self._thread = threading.Thread(target=self._run, name="gpu-poller", daemon=True)
        self._thread.start()

    def stop(self, timeout_s: float = 5.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout_s)
            self._thread = None

    def close(self) -> None:
        self.stop()
        self.reader.close()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def _run(self) -> None:
        while not self._stop.is_set():
            self.poll_once()
            self._stop.wait(self.interval_s)

    # -- one poll
    def poll_once(self) -> Snapshot:
        try:
            snapshot = self.reader.read()
        except Exception as error:  # read() promises not to raise; a broken reader must not kill the thread
            snapshot = Snapshot(devices=(), message=f"Reading the GPUs failed: {type(error).__name__}: {error}")
        with self._lock:
            self._record(snapshot)
        return snapshot

    def _record(self, snapshot: Snapshot) -> None:
        self._snapshot = snapshot
        self._polls += 1
        self._present = [device.key for device in snapshot.devices]
        for device in snapshot.devices:
            self._history.setdefault(device.key, deque()).append(device)
        newest = max((d.timestamp for d in snapshot.devices), default=snapshot.timestamp)
        self._forget_before(newest - self.history_s)

    def _forget_before(self, cutoff: float) -> None:
        for key, readings in list(self._history.items()):
            while readings and readings[0].timestamp < cutoff:
                readings.popleft()
            if not readings:
                del self._history[key]

    # -- what the UI asks
    def state(self) -> PollerState:
        with self._lock:
            present = [key for key in self._present if key in self._history]
            gone = [key for key in self._history if key not in self._present]
            devices = tuple(
                DeviceHistory(key, tuple(self._history[key]), key in self._present) for key in present + gone
            )
            return PollerState(self._snapshot, devices, self._polls, self.history_s)
