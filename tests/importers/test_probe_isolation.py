"""A damaged TorchScript archive's code runs first in a forked child: a crash or a hang there becomes one
error line, and the process (the app, the command) lives on. A fuzzed archive did segfault PyTorch."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from advisor.core.errors import SpecError  # noqa: E402
from advisor.importers import probe  # noqa: E402

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="isolation needs fork()")


def scripted() -> object:
    return torch.jit.script(torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(784, 2)))


def test_the_child_finds_the_same_input_as_in_process(tmp_path: Path) -> None:
    module = scripted()
    make = probe.probe_inputs(tmp_path / "m.pt", module, isolate=True)
    (batch,), _ = make(5)
    assert tuple(batch.shape) == (5, 1, 28, 28)  # 784 = 1*28*28, the MNIST candidate


def test_a_crash_while_running_the_model_is_one_error_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def segfault(torch_module: object, module: object) -> int:
        os.kill(os.getpid(), signal.SIGSEGV)
        return 0

    monkeypatch.setattr(probe, "_first_accepted", segfault)
    with pytest.raises(SpecError, match=r"m\.pt: running the saved model crashed PyTorch \(SIGSEGV\)"):
        probe.probe_inputs(tmp_path / "m.pt", scripted(), isolate=True)


def test_a_hang_is_cut_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(probe, "_first_accepted", lambda torch_module, module: time.sleep(60) or 0)
    monkeypatch.setattr(probe, "PROBE_TIMEOUT_S", 0.5)
    start = time.monotonic()
    with pytest.raises(SpecError, match="did not finish within 0 s"):
        probe.probe_inputs(tmp_path / "m.pt", scripted(), isolate=True)
    assert time.monotonic() - start < 10
