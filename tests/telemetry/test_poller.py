"""Poller: history per device, its 10-minute window, the background thread, and devices coming and going."""

from __future__ import annotations

import threading
import time

import pytest

from advisor.telemetry.fake import FakeReader
from advisor.telemetry.poller import HISTORY_S, Poller
from advisor.telemetry.readings import Snapshot


def wait_for(condition: object, timeout_s: float = 5.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.005)


def test_each_poll_adds_one_reading_per_device(two_fakes: FakeReader) -> None:
    poller = Poller(two_fakes)
    assert poller.state().snapshot is None and poller.state().devices == ()
    for _ in range(5):
        poller.poll_once()
    state = poller.state()
    assert state.polls == 5
    assert [len(d.readings) for d in state.devices] == [5, 5]
    assert all(d.present for d in state.devices)
    powers = [r.power_draw_w for r in state.devices[0].readings]
    assert powers == [s.power_w for s in two_fakes.fake.samples[:5]]


def test_history_keeps_ten_minutes_by_default(fake: FakeReader) -> None:
    poller = Poller(fake)
    for _ in range(3200):  # 640 s of the 5 Hz recording
        poller.poll_once()
    readings = poller.state().devices[0].readings
    span = readings[-1].timestamp - readings[0].timestamp
    assert HISTORY_S - 0.5 < span <= HISTORY_S
    assert len(readings) < 3200


def test_history_window_is_configurable(fake: FakeReader) -> None:
    poller = Poller(fake, history_s=2.0)
    for _ in range(30):
        poller.poll_once()
    readings = poller.state().devices[0].readings
    # About 2 s at 0.2 s a sample; the recording's own clock jitters by a few ms.
    assert 1.6 < readings[-1].timestamp - readings[0].timestamp <= 2.0
    assert 9 <= len(readings) <= 11
    assert poller.state().history_s == 2.0


def test_background_thread_polls_and_stops(fake: FakeReader) -> None:
    poller = Poller(fake, interval_s=0.01)
    poller.start()
    poller.start()  # a second start does not start a second thread
    assert [t.name for t in threading.enumerate()].count("gpu-poller") == 1
    wait_for(lambda: poller.state().polls >= 5)
    poller.stop()
    assert not poller.running
    polls = poller.state().polls
    time.sleep(0.05)
    assert poller.state().polls == polls  # stopped means stopped


def test_state_is_consistent_while_the_thread_writes(fake: FakeReader) -> None:
    poller = Poller(fake, interval_s=0.0005, history_s=3.0)
    poller.start()
    try:
        for _ in range(300):
            for device in poller.state().devices:
                stamps = [r.timestamp for r in device.readings]
                assert stamps == sorted(stamps) and stamps[-1] - stamps[0] <= 3.0
    finally:
        poller.stop()


def test_interval_must_be_positive(fake: FakeReader) -> None:
    with pytest.raises(ValueError, match="positive"):
        Poller(fake, interval_s=0)


class Exploding:
    def __init__(self) -> None:
        self.calls = 0
        self.closed = False

    def read(self) -> Snapshot:
        self.calls += 1
        raise RuntimeError("driver wedged")

    def close(self) -> None:
        self.closed = True


def test_a_reader_that_raises_does_not_kill_the_thread() -> None:
    reader = Exploding()
    poller = Poller(reader, interval_s=0.01)
    poller.start()
    wait_for(lambda: reader.calls >= 3)
    poller.close()
    assert reader.closed
    snapshot = poller.state().snapshot
    assert snapshot is not None and snapshot.devices == ()
    assert snapshot.message == "Reading the GPUs failed: RuntimeError: driver wedged"


def test_a_removed_gpu_keeps_its_history_until_it_ages_out(two_fakes: FakeReader) -> None:
    poller = Poller(two_fakes, history_s=1.0)
    for _ in range(3):
        poller.poll_once()
    two_fakes.disappear(1, "removed")
    poller.poll_once()
    first, gone = poller.state().devices
    assert first.present and not gone.present
    assert len(gone.readings) == 3 and gone.latest.error is None  # the last thing it said before it went
    for _ in range(10):  # 2 s later the gone card's readings are older than the 1 s window
        poller.poll_once()
    assert [d.key for d in poller.state().devices] == [first.key]


def test_a_lost_gpu_stays_in_the_list_with_its_error(two_fakes: FakeReader) -> None:
    poller = Poller(two_fakes)
    poller.poll_once()
    two_fakes.disappear(1, "lost")
    poller.poll_once()
    lost = poller.state().devices[1]
    assert lost.present and lost.latest.error == "GPU is lost (NVMLError_GpuIsLost)"
    assert len(lost.readings) == 2  # the gap is part of the history, drawn as a break in the charts


def test_a_gpu_that_appears_gets_its_own_history(fake: FakeReader) -> None:
    poller = Poller(fake)
    poller.poll_once()
    fake.fake.present.append(1)
    poller.poll_once()
    devices = poller.state().devices
    assert [len(d.readings) for d in devices] == [2, 1]
    assert devices[0].key != devices[1].key
