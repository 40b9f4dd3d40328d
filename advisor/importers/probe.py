"""Input shapes for saved models that do not record them (TorchScript, a trusted pickled module).

A few common inputs are tried under FakeTensorMode (no memory, no arithmetic): an ImageNet image, a CIFAR
image, an MNIST digit, a sequence of token ids. The first the model accepts is used; if none fits, the user is
told to wrap the model in a FILE.py whose example_inputs gives the real shape.
"""

from __future__ import annotations

import functools
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from advisor.importers.common import fail

Inputs = tuple[tuple[Any, ...], dict[str, Any]]
PROBE_TIMEOUT_S = 60.0
CANDIDATES: tuple[tuple[tuple[int, ...], str], ...] = (
    ((3, 224, 224), "float"),
    ((3, 32, 32), "float"),
    ((1, 28, 28), "float"),
    ((128,), "int64"),
)


def _make(torch: Any, shape: tuple[int, ...], kind: str) -> Callable[[int], Inputs]:
    def example_inputs(batch_size: int) -> Inputs:
        if kind == "int64":
            return (torch.zeros((batch_size, *shape), dtype=torch.int64),), {}
        return (torch.randn((batch_size, *shape)),), {}

    return example_inputs


def _accepts(torch: Any, module: Any, make: Callable[[int], Inputs]) -> bool:
    from torch._subclasses.fake_tensor import FakeTensorMode

    mode = FakeTensorMode(allow_non_fake_inputs=True)
    args, _ = make(2)
    try:
        with torch.no_grad(), mode:
            module(*[mode.from_tensor(a) for a in args])
    except Exception:  # the model refused this shape: try the next one
        return False
    return True


def _first_accepted(torch: Any, module: Any) -> int:
    """Index of the first candidate input the module runs on, or -1."""
    from advisor.importers.torch_graph import quiet_fake_tensor_log

    training = module.training
    module.eval()  # eval: probing must not touch BatchNorm statistics
    try:
        with quiet_fake_tensor_log():
            for index, (shape, kind) in enumerate(CANDIDATES):
                if _accepts(torch, module, _make(torch, shape, kind)):
                    return index
    finally:
        module.train(training)
    return -1


@functools.cache
def _warm_fake_tensors(torch: Any) -> None:
    """Import and first-use FakeTensorMode here, before fork: a child's imports die with it, so without this
    every probe of every file re-imported sympy and the fake-tensor machinery (10-18 s on a loaded 2-core
    machine, seen as "hangs" by benchmarks/fuzz_importers.py; 0.5 s once warm)."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    from advisor.importers.torch_graph import quiet_fake_tensor_log

    mode = FakeTensorMode(allow_non_fake_inputs=True)
    with quiet_fake_tensor_log(), torch.no_grad(), mode:
        torch.nn.functional.linear(mode.from_tensor(torch.zeros(2, 3)), mode.from_tensor(torch.zeros(4, 3)))


def _first_accepted_in_child(path: Path, torch: Any, module: Any) -> int:
    """The same, in a forked child: a damaged archive's code can crash PyTorch's C++ (a fuzzed TorchScript file
    segfaulted the interpreter) or hang it, and a crash must cost the user one error line, not the app.
    fork() shares the loaded module, so nothing is loaded twice; probing runs on fake tensors (no threads)."""
    _warm_fake_tensors(torch)
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: answer through the pipe and leave without running any of the parent's cleanup
        code = 1
        try:
            os.close(read_end)
            os.write(write_end, str(_first_accepted(torch, module)).encode())
            code = 0
        finally:
            os._exit(code)
    os.close(write_end)
    status = _wait(pid, PROBE_TIMEOUT_S)
    with os.fdopen(read_end, "rb") as pipe:
        answer = pipe.read().decode() if status == 0 else ""
    if status is None:
        raise fail(
            path, f"running the saved model did not finish within {PROBE_TIMEOUT_S:.0f} s; the file may be damaged"
        )
    if not answer:
        raise fail(path, f"running the saved model crashed PyTorch ({_exit_reason(status)}); the file is damaged")
    return int(answer)


def _wait(pid: int, timeout_s: float) -> int | None:
    """The child's wait status, or None (and the child killed) when it outlives the timeout."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
        time.sleep(0.005)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    return None


def _exit_reason(status: int) -> str:
    if os.WIFSIGNALED(status):
        return signal.Signals(os.WTERMSIG(status)).name
    return f"exit status {os.waitstatus_to_exitcode(status)}"


def probe_inputs(path: Path, module: Any, isolate: bool = False) -> Callable[[int], Inputs]:
    """The first candidate input the module accepts. `isolate` runs the probe in a forked child (where fork
    exists): for archives whose code is untrusted data rather than code the user chose to run."""
    import torch

    from advisor.importers.sandbox import in_child

    # inside sandbox.py's capped child the file is isolated already: a crash there is one line too
    index = (
        _first_accepted_in_child(path, torch, module)
        if isolate and hasattr(os, "fork") and not in_child()
        else _first_accepted(torch, module)
    )
    if index >= 0:
        return _make(torch, *CANDIDATES[index])
    tried = ", ".join("x".join(map(str, s)) for s, _ in CANDIDATES)
    raise fail(
        path,
        f"the saved model does not record its input shape and accepts none of {tried}; "
        "write a FILE.py whose build_model() loads it and whose example_inputs() makes its input",
    )
