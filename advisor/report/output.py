"""Writing the finished PDF: all or nothing.

The PDF is made in memory first (Qt's PDF writer does not report write errors, a short write would go
unnoticed), then written to a temporary file in the target directory and renamed over the target with
os.replace, which is atomic on one file system. A failure anywhere (unwritable directory, full disk) removes
the temporary file and raises ReportError with one line naming the path: the CLI prints it and exits with
code 2, the app shows it in a dialog. An existing file at the target is left untouched on failure.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import BinaryIO

from advisor.core.errors import AdvisorError

CHUNK_BYTES = 1 << 16


class ReportError(AdvisorError):
    """The report could not be written (the path, and why, in one line)."""


def write_chunks(stream: BinaryIO, data: bytes) -> None:
    """Writes in chunks so that a disk filling up fails part-way, as it would on a real disk."""
    for start in range(0, len(data), CHUNK_BYTES):
        stream.write(data[start:start + CHUNK_BYTES])


def _reason(error: OSError) -> str:
    return error.strerror or str(error)


def write_atomic(path: str | os.PathLike[str], data: bytes) -> Path:
    """Writes `data` to `path` completely or not at all; returns the absolute path written."""
    target = Path(path).expanduser().absolute()
    if target.is_dir():
        raise ReportError(f"{target}: is a folder; give a file name such as report.pdf")
    if not target.parent.is_dir():
        raise ReportError(f"cannot write {target}: the folder {target.parent} does not exist")
    try:
        handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
    except OSError as error:
        raise ReportError(f"cannot write {target}: {_reason(error)}") from None
    try:
        with os.fdopen(handle, "wb") as stream:
            write_chunks(stream, data)
            stream.flush()
            os.fsync(stream.fileno())  # the bytes are on disk before the name points at them
        os.chmod(temporary, 0o644)  # mkstemp makes 0600; a report is meant to be shared
        os.replace(temporary, target)
    except OSError as error:
        Path(temporary).unlink(missing_ok=True)
        raise ReportError(f"cannot write {target}: {_reason(error)}") from None
    return target
