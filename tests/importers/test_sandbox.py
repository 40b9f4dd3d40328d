"""sandbox.run_capped: untrusted reads run in a forked child with memory, CPU and wall caps, elsewhere than the
working folder; whatever goes wrong there is one SpecError line naming the file (issue 29, item 2)."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from advisor.core.errors import SpecError
from advisor.importers import sandbox
from advisor.importers.sandbox import run_capped

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the child process needs fork")


@pytest.fixture
def model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "model.bin"
    path.write_bytes(b"x" * 1000)
    return path


def test_the_child_runs_elsewhere_without_the_working_folder_on_the_path(model: Path) -> None:
    here = os.getcwd()
    sys.path.insert(0, here)
    try:
        folder, path, name = run_capped(Path("model.bin"), lambda file: (os.getcwd(), list(sys.path), str(file)))
    finally:
        sys.path.remove(here)
    assert folder != here and os.path.basename(folder).startswith("advisor-load-")
    assert here not in path and "" not in path
    assert name == str(model)  # the work gets the absolute path, since it runs in another folder


def test_a_spec_error_comes_back_naming_the_file_as_given(model: Path) -> None:
    def refuse(file: Path) -> None:
        raise SpecError(f"{file}: refused")

    with pytest.raises(SpecError, match=r"^model\.bin: refused$"):
        run_capped(Path("model.bin"), refuse)


def test_running_out_of_memory_is_one_line(model: Path) -> None:
    with pytest.raises(SpecError, match=r"model\.bin: reading it needed more than the 0\.1 GiB of memory allowed"):
        run_capped(model, lambda _file: bytearray(2 << 30), memory_bytes=100 << 20)  # 2 GiB > 0.1 GiB + 2 x 1000 B


def test_a_crash_is_one_line(model: Path) -> None:
    with pytest.raises(SpecError, match=r"model\.bin: reading it crashed the reader \(SIGABRT"):
        run_capped(model, lambda _file: os.abort())


def test_the_cpu_cap_stops_a_busy_child(model: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox, "CPU_S", 1)

    def spin(_file: Path) -> None:
        while True:
            pass

    with pytest.raises(SpecError, match=r"more than 1 s of CPU time"):
        run_capped(model, spin)


def test_the_wall_cap_stops_a_sleeping_child(model: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox, "WALL_S", 0.5)
    with pytest.raises(SpecError, match=r"model\.bin: reading it did not finish within 0\.5 s"):
        run_capped(model, lambda _file: time.sleep(30))
