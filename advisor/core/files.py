"""Writing a file all or nothing (write_atomic: the PDF report and `catalog export`), and reading a user's
text file with a size cap (read_text_capped: `catalog import` and `import-prices`).

The bytes go to a temporary file in the target's folder, are fsync'ed, and the temporary file is renamed over
the target with os.replace, which is atomic on one file system (POSIX rename(2)). A failure anywhere
(unwritable folder, full disk) removes the temporary file and leaves an existing target exactly as it was.
- A symbolic link is written through: the file it points at is replaced, the link stays a link, and the
  path returned (which the commands print) is that file, so the write is never silent about where it went.
- An existing file keeps its permission bits (0600 stays 0600; it used to end up 0644); a new one is 0644.
- Anything that is not a regular file (a device, a pipe, a folder) is refused: renaming over /dev/null would
  replace the device node itself.
- The temporary name is short (".advisor-" plus 8 random characters), so a target whose name is at the
  file-system limit (255 bytes) still works.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path
from typing import BinaryIO

from advisor.core.errors import AdvisorError

CHUNK_BYTES = 1 << 16


def write_chunks(stream: BinaryIO, data: bytes) -> None:
    """Writes in chunks so that a disk filling up fails part-way, as it would on a real disk."""
    for start in range(0, len(data), CHUNK_BYTES):
        stream.write(data[start : start + CHUNK_BYTES])


def _reason(error: OSError) -> str:
    return error.strerror or str(error)


def _destination(path: str | os.PathLike[str], error: type[AdvisorError]) -> Path:
    """The regular file to replace (a link's target), or `error` saying in one line why there is none."""
    given = Path(path).expanduser().absolute()
    target = Path(os.path.realpath(given))
    try:
        mode: int | None = target.stat().st_mode
    except FileNotFoundError:
        mode = None
    except OSError as failure:  # a name over 255 bytes, a path under a file, a loop of links
        raise error(f"cannot write {given}: {_reason(failure)}") from None
    if mode is not None and stat.S_ISDIR(mode):
        raise error(f"{given}: is a folder; give a file name")
    if mode is not None and not stat.S_ISREG(mode):
        raise error(f"{given}: is not a regular file (a device or pipe); give a file name")
    if not target.parent.is_dir():
        raise error(f"cannot write {given}: the folder {target.parent} does not exist")
    return target


def _mode_for(target: Path) -> int:
    """The permission bits the written file gets: the replaced file's own, or 0644 for a new file (a report
    or export is meant to be shared)."""
    try:
        return stat.S_IMODE(target.stat().st_mode)
    except FileNotFoundError:
        return 0o644


def write_atomic(path: str | os.PathLike[str], data: bytes, error: type[AdvisorError]) -> Path:
    """Writes `data` to `path` completely or not at all; returns the absolute path written."""
    target = _destination(path, error)
    try:
        handle, temporary = tempfile.mkstemp(prefix=".advisor-", dir=target.parent)
    except OSError as failure:
        raise error(f"cannot write {target}: {_reason(failure)}") from None
    try:
        with os.fdopen(handle, "wb") as stream:
            write_chunks(stream, data)
            stream.flush()
            os.fsync(stream.fileno())  # the bytes are on disk before the name points at them
        os.chmod(temporary, _mode_for(target))  # mkstemp makes 0600
        os.replace(temporary, target)
    except OSError as failure:
        Path(temporary).unlink(missing_ok=True)
        raise error(f"cannot write {target}: {_reason(failure)}") from None
    return target


def read_text_capped(path: str | os.PathLike[str], limit_bytes: int, error: type[AdvisorError]) -> str:
    """The UTF-8 text of a regular file of at most `limit_bytes`, or `error` in one line.

    The file is opened non-blocking and checked with fstat before a byte is read: a named pipe with no
    writer used to wait forever, and /dev/zero grew to 17 GB in 20 s. Reading stops one byte past the cap,
    so a file that grows while it is read cannot take more memory either."""
    shown = Path(path)
    try:
        # getattr: Windows has neither flag (nor named pipes at file-system paths).
        handle = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except OSError as failure:
        raise error(f"cannot read {shown}: {_reason(failure)}") from None
    if not stat.S_ISREG(os.fstat(handle).st_mode):  # before fdopen, which raises IsADirectoryError on a folder
        os.close(handle)
        raise error(f"cannot read {shown}: not a regular file (a device, pipe or folder); give a file")
    with os.fdopen(handle, "rb") as stream:
        try:
            data = stream.read(limit_bytes + 1)
        except OSError as failure:
            raise error(f"cannot read {shown}: {_reason(failure)}") from None
    if len(data) > limit_bytes:
        raise error(f"cannot read {shown}: larger than the {limit_bytes / 2**20:g} MiB this input may have")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as failure:
        raise error(f"cannot read {shown}: not UTF-8 text ({failure.reason} at byte {failure.start})") from None
