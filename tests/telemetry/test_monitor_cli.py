"""`advisor monitor`: the real no-GPU answer, and the lines and JSON of the recorded H200."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from advisor.cli import main
from advisor.telemetry.fake import FakeReader
from advisor.telemetry.readings import NO_GPU, Snapshot

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def with_fake(monkeypatch: pytest.MonkeyPatch, fake: FakeReader) -> FakeReader:
    monkeypatch.setattr("advisor.commands.monitor.open_reader", lambda: fake)
    return fake


def test_no_gpu_json_from_a_real_process_exits_0() -> None:
    """End to end through the real pynvml on this machine; where NVML exists the devices list is just not empty."""
    done = subprocess.run(
        [sys.executable, "-m", "advisor", "monitor", "--json"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert set(answer) >= {"devices", "message"}
    if not answer["devices"]:
        assert answer["message"].startswith(f"{NO_GPU} (")


def test_no_gpu_text(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], fake: FakeReader) -> None:
    fake.fake.init_error = "NVMLError_DriverNotLoaded"
    monkeypatch.setattr("advisor.commands.monitor.open_reader", lambda: fake)
    assert main(["monitor"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == f"{NO_GPU} (Driver Not Loaded)"


def test_one_line_per_card(with_fake: FakeReader, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["monitor"]) == 0
    header, line = capsys.readouterr().out.splitlines()
    assert header.endswith("driver 580.159.04")
    assert line == "[0] NVIDIA H200          |  33°C,   0 % |    618 / 143771 MiB |   79 W / 700 W"


def test_json(with_fake: FakeReader, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["monitor", "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["message"] is None
    (device,) = answer["devices"]
    assert device["name"] == "NVIDIA H200"
    assert device["memory_reserved_bytes"] == 644_939_776
    assert device["fan_speed_pct"] is None  # JSON null where the text says n/a
    assert device["processes"] == []


def test_watch_repeats_count_times_as_json_lines(with_fake: FakeReader, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["monitor", "--json", "--watch", "0.01", "--count", "3"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3
    stamps = [json.loads(line)["timestamp"] for line in lines]
    assert stamps == sorted(stamps) and len(set(stamps)) == 3


def test_watch_text_off_a_terminal_does_not_clear(with_fake: FakeReader, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["monitor", "--watch", "0.01", "--count", "2"]) == 0
    out = capsys.readouterr().out
    assert out.count("[0] NVIDIA H200") == 2 and "\x1b" not in out


class Interrupted:
    def __init__(self) -> None:
        self.closed = False
        self.reads = 0

    def read(self) -> Snapshot:
        self.reads += 1
        if self.reads > 1:
            raise KeyboardInterrupt
        return Snapshot(devices=(), message=f"{NO_GPU} (test)")

    def close(self) -> None:
        self.closed = True


def test_ctrl_c_ends_watch_with_0(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    reader = Interrupted()
    monkeypatch.setattr("advisor.commands.monitor.open_reader", lambda: reader)
    assert main(["monitor", "--watch", "0.01"]) == 0
    assert reader.closed and reader.reads == 2
    assert capsys.readouterr().out.count(NO_GPU) == 1


@pytest.mark.parametrize("argv", [["--watch", "0"], ["--watch", "soon"], ["--watch", "1", "--count", "0"]])
def test_bad_options_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["monitor", *argv])
    assert exit_info.value.code == 2
    assert "advisor monitor: error: argument" in capsys.readouterr().err
