"""Untrusted model files are read in a forked child process with caps (issue 29, item 2).

The allowlists (code_scan.py, pt2_graph.py, zip_limits.py) decide what a file may call; this bounds what
reading it may cost and keeps a crash from taking the caller with it. The child:
- gets RLIMIT_AS = what the process already maps + MEMORY_BYTES + twice the file's size (weights a loader
  keeps in memory), and RLIMIT_CPU = CPU_S seconds; the parent also stops waiting after WALL_S;
- runs in a new empty temporary folder, with the caller's working folder and '' taken off sys.path, so a
  module shipped beside a model (or in the folder the command runs from) cannot be imported by a name the
  file gives;
- sends back the result (a Graph) or the one-line SpecError through a pipe, then leaves with os._exit.
A child that runs out of memory, CPU time or wall time, or dies of a signal, is one SpecError line.
Where fork does not exist (Windows) the work runs in this process, as before. A file the user trusts
(--trust-pickle) is not read here: its pickle may import modules from beside it, which is what trust means.
The result is unpickled from the child, which ran only this program's own code on the file's bytes.
"""

from __future__ import annotations

import os
import pickle
import select
import signal
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from advisor.core.errors import SpecError
from advisor.importers.common import fail, one_line

T = TypeVar("T")
MEMORY_BYTES = 3 << 30
CPU_S = 120
WALL_S = 180.0
MAX_ANSWER_BYTES = 1 << 30
_in_child = False


def in_child() -> bool:
    """True inside a capped child: work that would isolate itself again runs directly."""
    return _in_child


def _mapped_bytes() -> int:
    """Virtual memory this process maps now (Linux /proc); 0 where that is unknown."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def run_capped(path: Path, work: Callable[[Path], T], memory_bytes: int | None = None) -> T:
    """`work(absolute path)` in a capped child (which runs in another folder); its result, its SpecError
    (naming `path` as the caller gave it), or a SpecError saying which cap it hit."""
    if _in_child or not hasattr(os, "fork"):
        return work(path)
    absolute = path.absolute()
    size = path.stat().st_size
    allowance = (memory_bytes or MEMORY_BYTES) + 2 * size
    limit = _mapped_bytes() + allowance
    with tempfile.TemporaryDirectory(prefix="advisor-load-") as folder:
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:
            _child(read_end, write_end, folder, limit, lambda: work(absolute))
        os.close(write_end)
        answer, status = _collect(read_end, pid)
    try:
        value: T = _result(path, answer, status, allowance)  # type: ignore[assignment]  # what work() returned
        return value
    except SpecError as error:
        raise SpecError(str(error).replace(str(absolute), str(path))) from None


def _child(read_end: int, write_end: int, folder: str, limit: int, work: Callable[[], object]) -> None:
    global _in_child
    code = 70
    try:
        os.close(read_end)
        _in_child = True
        here = os.getcwd()
        sys.path[:] = [p for p in sys.path if p not in ("", ".", here)]
        os.chdir(folder)
        _limit_resources(limit)
        try:
            answer = b"ok" + pickle.dumps(work())
        except SpecError as error:
            answer = b"er" + str(error).encode()
        except MemoryError:
            answer = b"mm"
        except BaseException as error:  # anything else is this program's bug: one line, not a traceback
            answer = b"ex" + one_line(f"{type(error).__name__}: {error}", 200).encode()
        view = memoryview(answer)
        while view:
            view = view[os.write(write_end, view) :]
        code = 0
    finally:
        os._exit(code)


def _limit_resources(limit: int) -> None:
    import resource

    for which, value in ((resource.RLIMIT_AS, limit), (resource.RLIMIT_CPU, CPU_S)):
        try:
            _soft, hard = resource.getrlimit(which)
            cap = value if hard == resource.RLIM_INFINITY else min(value, hard)
            resource.setrlimit(which, (cap, hard))
        except (ValueError, OSError):  # a platform without this limit (macOS ignores RLIMIT_AS)
            continue
    torch = sys.modules.get("torch")
    if torch is not None:  # the parent's OpenMP pool does not survive fork; one thread needs none
        torch.set_num_threads(1)


def _collect(read_end: int, pid: int) -> tuple[bytes, int | None]:
    """What the child wrote and its wait status; (b"", None) when it outlived WALL_S (it is killed)."""
    deadline = time.monotonic() + WALL_S
    chunks: list[bytes] = []
    total = 0
    with os.fdopen(read_end, "rb", buffering=0) as pipe:
        while (left := deadline - time.monotonic()) > 0:
            ready, _, _ = select.select([pipe], [], [], min(left, 1.0))
            if not ready:
                continue
            chunk = pipe.read(1 << 20)
            if not chunk:
                break
            total += len(chunk)
            chunks.append(chunk)
            if total > MAX_ANSWER_BYTES:
                break
        else:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return b"", None
    if total > MAX_ANSWER_BYTES:
        os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    return b"".join(chunks), status


def _result(path: Path, answer: bytes, status: int | None, allowance: int) -> object:
    gib = f"{allowance / (1 << 30):.1f} GiB"
    if status is None:
        raise fail(path, f"reading it did not finish within {WALL_S:g} s; the file may be damaged or hostile")
    kind, body = answer[:2], answer[2:]
    if kind == b"ok":
        return pickle.loads(body)
    if kind == b"er":
        raise SpecError(body.decode("utf-8", "replace"))
    if kind == b"mm" or (kind == b"ex" and b"alloc" in body.lower()):
        raise fail(path, f"reading it needed more than the {gib} of memory allowed; the file may be damaged or hostile")
    if kind == b"ex":
        raise fail(path, f"reading it failed: {body.decode('utf-8', 'replace')}")
    if os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGXCPU:
        raise fail(path, f"reading it used more than {CPU_S} s of CPU time; the file may be damaged or hostile")
    reason = (
        signal.Signals(os.WTERMSIG(status)).name
        if os.WIFSIGNALED(status)
        else f"exit status {os.waitstatus_to_exitcode(status)}"
    )
    raise fail(path, f"reading it crashed the reader ({reason}, within a {gib} memory cap); the file is damaged")
