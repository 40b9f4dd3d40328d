"""Writing the finished PDF: all or nothing.

The PDF is made in memory first (Qt's PDF writer does not report write errors, a short write would go
unnoticed), then written by advisor.core.files.write_atomic (temporary file, fsync, rename; links written
through, devices refused). A failure raises ReportError with one line naming the path: the CLI prints it and
exits with code 2, the app shows it in a dialog. An existing file at the target is left untouched on failure.
"""

from __future__ import annotations

import os
from pathlib import Path

from advisor.core import files
from advisor.core.errors import AdvisorError


class ReportError(AdvisorError):
    """The report could not be written (the path, and why, in one line)."""


def write_atomic(path: str | os.PathLike[str], data: bytes) -> Path:
    """Writes `data` to `path` completely or not at all; returns the absolute path written."""
    return files.write_atomic(path, data, ReportError)
