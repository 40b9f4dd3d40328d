"""NvmlReader: the real pynvml path on a machine without NVML, and the mapping of every NVML answer (through
FakeNvml, which raises the real pynvml error classes)."""

from __future__ import annotations

import os
from pathlib import Path

import psutil
import pynvml
import pytest

from advisor.telemetry.fake import FakeNvml, FakeReader
from advisor.telemetry.nvml import NvmlReader, process_name
from advisor.telemetry.readings import NO_GPU


def _machine_has_nvml() -> bool:
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError:
        return False
    pynvml.nvmlShutdown()
    return True


@pytest.mark.skipif(_machine_has_nvml(), reason="this machine has NVML; the no-GPU path is tested where it has not")
def test_the_real_reader_says_no_gpu_cleanly_without_nvml() -> None:
    reader = NvmlReader()  # the real pynvml module, no stand-in
    first, second = reader.read(), reader.read()  # a second read retries nvmlInit and fails the same way
    reader.close()
    for snapshot in (first, second):
        assert snapshot.devices == ()
        assert snapshot.message is not None
        assert snapshot.message.startswith(f"{NO_GPU} (")
        assert snapshot.timestamp > 0
    # The reason is pynvml's own words (library not found / driver not loaded), not an empty pair of brackets.
    assert first.message is not None and len(first.message) > len(NO_GPU) + 4


@pytest.mark.parametrize(
    ("error", "reason"),
    [
        ("NVMLError_DriverNotLoaded", "Driver Not Loaded"),
        ("NVMLError_LibraryNotFound", "NVML Shared Library Not Found"),
    ],
)
def test_init_failures_become_no_gpu(fake: FakeReader, error: str, reason: str) -> None:
    fake.fake.init_error = error  # LibraryNotFound is also what pynvml raises on macOS, which has no NVML
    assert fake.read().message == f"{NO_GPU} ({reason})"
    fake.fake.init_error = None
    assert fake.read().devices[0].name == "NVIDIA H200"  # the driver came back: the next read initialises


def test_a_broken_binding_is_reported_not_raised(fake: FakeReader, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken() -> None:
        raise OSError("cannot map libnvidia-ml.so.1")

    monkeypatch.setattr(fake.fake, "nvmlInit", broken)
    snapshot = fake.read()
    assert snapshot.devices == ()
    assert snapshot.message == f"{NO_GPU} (NVML failed: OSError: cannot map libnvidia-ml.so.1)"


def test_zero_devices_is_no_gpu(fake: FakeReader) -> None:
    fake.fake.present.clear()
    assert fake.read().message == f"{NO_GPU} (the NVIDIA driver reports no devices)"


def test_h200_reading_matches_the_recording(fake: FakeReader) -> None:
    snapshot = fake.read()
    assert snapshot.driver_version == "580.159.04"
    (h200,) = snapshot.devices
    assert (h200.index, h200.name, h200.uuid) == (0, "NVIDIA H200", "GPU-f03e7d9d-5817-5240-f091-febfa23ae234")
    assert h200.memory_total_bytes == 150_754_820_096 == 143_771 * 1024**2
    assert h200.memory_used_bytes == 618 * 1024**2  # the first sample of the time series: an idle card
    assert h200.memory_free_bytes == h200.memory_total_bytes - h200.memory_used_bytes
    assert h200.memory_reserved_bytes == 644_939_776  # nvmlMemory_v2's reservation
    assert (h200.gpu_util_pct, h200.mem_util_pct, h200.temperature_c) == (0, 0, 33)
    assert (h200.power_draw_w, h200.power_limit_w) == (78.6, 700.0)
    assert (h200.sm_clock_mhz, h200.mem_clock_mhz, h200.pcie_gen, h200.pcie_width) == (1980, 3201, 5, 16)
    assert h200.fan_speed_pct is None  # NVMLError_NotSupported on the real card: n/a, not an error
    assert h200.error is None
    assert h200.processes == ()


def test_replay_advances_one_sample_per_read_and_loops(fake: FakeReader) -> None:
    samples = fake.fake.samples
    readings = [fake.read().devices[0] for _ in range(len(samples) + 2)]
    assert [r.power_draw_w for r in readings[:4]] == [s.power_w for s in samples[:4]]
    assert readings[1].timestamp - readings[0].timestamp == pytest.approx(0.2)
    assert readings[len(samples)].power_draw_w == samples[0].power_w  # looped...
    assert readings[len(samples)].timestamp > readings[len(samples) - 1].timestamp  # ...on a clock that goes on


@pytest.mark.parametrize("call", ["nvmlDeviceGetPowerUsage", "nvmlDeviceGetMemoryInfo", "nvmlDeviceGetTemperature"])
def test_not_supported_becomes_none_without_error(fake: FakeReader, monkeypatch: pytest.MonkeyPatch, call: str) -> None:
    def unsupported(*args: object) -> None:
        raise pynvml.NVMLError_NotSupported()

    monkeypatch.setattr(fake.fake, call, unsupported)
    device = fake.read().devices[0]
    assert device.error is None
    field = {
        "nvmlDeviceGetPowerUsage": "power_draw_w",
        "nvmlDeviceGetMemoryInfo": "memory_total_bytes",
        "nvmlDeviceGetTemperature": "temperature_c",
    }[call]
    assert getattr(device, field) is None
    assert device.power_limit_w == 700.0  # the other figures are still read


def test_other_nvml_errors_keep_the_rest_and_say_what_failed(fake: FakeReader, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_permission(*args: object) -> None:
        raise pynvml.NVMLError_NoPermission()

    monkeypatch.setattr(fake.fake, "nvmlDeviceGetTemperature", no_permission)
    device = fake.read().devices[0]
    assert device.temperature_c is None
    assert device.error == "nvmlDeviceGetTemperature: Insufficient Permissions"
    assert device.memory_total_bytes == 150_754_820_096


def test_a_lost_gpu_is_a_reading_with_an_error(two_fakes: FakeReader) -> None:
    two_fakes.read()
    two_fakes.disappear(1, "lost")
    first, lost = two_fakes.read().devices
    assert first.error is None and first.memory_total_bytes is not None
    assert lost.error == "GPU is lost (NVMLError_GpuIsLost)"
    assert lost.name == "NVIDIA H200" and lost.uuid == "GPU-f03e7d9d-5817-5240-f091-febfa23ae201"  # remembered
    assert lost.memory_total_bytes is None and lost.power_draw_w is None


def test_a_gpu_lost_before_it_was_ever_named_is_still_listed(two_fakes: FakeReader) -> None:
    two_fakes.disappear(1, "lost")
    lost = two_fakes.read().devices[1]
    assert (lost.name, lost.uuid, lost.key) == ("GPU 1", None, "index:1")


def test_a_removed_gpu_leaves_the_list(two_fakes: FakeReader) -> None:
    assert len(two_fakes.read().devices) == 2
    two_fakes.disappear(0, "removed")
    (left,) = two_fakes.read().devices
    assert left.uuid == "GPU-f03e7d9d-5817-5240-f091-febfa23ae201"  # index 0 is now the other card


def test_processes_are_named_by_psutil(fake: FakeReader) -> None:
    gone_pid = max(psutil.pids()) + 100_000  # no process has this pid
    fake.set_processes(0, [(os.getpid(), 2 * 1024**3), (gone_pid, None)])
    mine, gone = fake.read().devices[0].processes
    assert (mine.pid, mine.name, mine.used_memory_bytes) == (os.getpid(), psutil.Process().name(), 2 * 1024**3)
    assert (gone.name, gone.used_memory_bytes) == ("n/a", None)


def test_process_name_of_a_process_we_may_not_inspect(monkeypatch: pytest.MonkeyPatch) -> None:
    def denied(pid: int) -> None:
        raise psutil.AccessDenied(pid)

    monkeypatch.setattr(psutil, "Process", denied)
    assert process_name(1) == "n/a"


def test_the_full_shared_recording_replays(shared_h200: Path) -> None:
    reader = FakeReader(shared_h200 / "nvml_device.json", shared_h200 / "nvml_timeseries.csv")
    assert len(reader.fake.samples) == 400
    peak = max((reader.read().devices[0] for _ in range(400)), key=lambda d: d.memory_used_bytes or 0)
    assert peak.memory_used_bytes is not None and peak.memory_used_bytes > 5 * 1024**3  # it trained models


def test_fake_nvml_needs_samples() -> None:
    with pytest.raises(ValueError, match="no samples"):
        FakeNvml({"devices": []}, ())
