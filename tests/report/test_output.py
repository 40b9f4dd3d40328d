"""All or nothing: an unwritable folder or a full disk gives one clear line and leaves no file behind."""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import BinaryIO

import pytest

from advisor.core import files
from advisor.report.output import ReportError, write_atomic

DATA = b"%PDF-1.4\n" + bytes(range(256)) * 1024  # 256 KiB: several chunks


def test_writes_the_whole_file_and_no_temporary(tmp_path: Path) -> None:
    path = write_atomic(tmp_path / "report.pdf", DATA)
    assert path.read_bytes() == DATA
    assert os.listdir(tmp_path) == ["report.pdf"]
    assert path.stat().st_mode & 0o644 == 0o644  # readable by whoever it is sent to


def test_a_full_disk_leaves_no_file_and_keeps_the_old_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    old = tmp_path / "report.pdf"
    old.write_bytes(b"the report from yesterday")
    real = files.write_chunks

    def half_then_full(stream: BinaryIO, data: bytes) -> None:
        real(stream, data[: len(data) // 2])  # some bytes reach the disk before it fills up
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(files, "write_chunks", half_then_full)
    with pytest.raises(ReportError, match=r"cannot write .*report\.pdf: No space left on device"):
        write_atomic(old, DATA)
    assert os.listdir(tmp_path) == ["report.pdf"]  # the temporary file is gone
    assert old.read_bytes() == b"the report from yesterday"


def test_a_full_disk_on_a_new_file_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def full(_stream: BinaryIO, _data: bytes) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(files, "write_chunks", full)
    with pytest.raises(ReportError):
        write_atomic(tmp_path / "new.pdf", DATA)
    assert os.listdir(tmp_path) == []


def test_a_folder_nobody_may_write(tmp_path: Path) -> None:
    # /proc takes no new files, even from root (tests here may run as root, which ignores chmod).
    with pytest.raises(ReportError, match=r"cannot write /proc/report\.pdf"):
        write_atomic("/proc/report.pdf", DATA)


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_a_read_only_folder(tmp_path: Path) -> None:
    folder = tmp_path / "locked"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        with pytest.raises(ReportError, match="Permission denied"):
            write_atomic(folder / "report.pdf", DATA)
        assert os.listdir(folder) == []
    finally:
        folder.chmod(0o700)


def test_a_missing_folder_and_a_folder_as_the_target(tmp_path: Path) -> None:
    with pytest.raises(ReportError, match="does not exist"):
        write_atomic(tmp_path / "nowhere" / "report.pdf", DATA)
    with pytest.raises(ReportError, match="is a folder"):
        write_atomic(tmp_path, DATA)


def test_a_249_character_name_works(tmp_path: Path) -> None:
    name = "r" * 245 + ".pdf"  # 245 + 4 = 249 characters, near the 255-byte limit
    assert write_atomic(tmp_path / name, DATA).read_bytes() == DATA
    assert os.listdir(tmp_path) == [name]


def test_a_name_over_255_characters_is_one_error(tmp_path: Path) -> None:
    with pytest.raises(ReportError, match="File name too long"):
        write_atomic(tmp_path / ("r" * 256), DATA)


def test_a_symlink_is_written_through_and_stays_a_link(tmp_path: Path) -> None:
    real = tmp_path / "real.pdf"
    real.write_bytes(b"old")
    link = tmp_path / "link.pdf"
    link.symlink_to(real)
    write_atomic(link, DATA)
    assert link.is_symlink() and real.read_bytes() == DATA


def test_a_device_is_refused_and_left_alone() -> None:
    before = os.stat("/dev/null")
    with pytest.raises(ReportError, match="not a regular file"):
        write_atomic("/dev/null", DATA)
    after = os.stat("/dev/null")
    assert (after.st_ino, after.st_rdev) == (before.st_ino, before.st_rdev)
