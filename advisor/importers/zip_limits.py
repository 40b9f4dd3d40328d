"""Size caps on a zip archive's members, read from its central directory before anything is decompressed.

TorchScript (.pt), torch.save (.pt/.pth/.bin) and torch.export (.pt2) files are zip archives. A 1 MB file can
declare a 1 GiB deflated member: issue 29 saw a 1 GiB `debug_pkl` keep the debug-info check busy for over
420 s, a 1 GiB code member take 49 s and 2.7 GB, a 1 GiB `data.pkl` 8 s and 2.7 GB. Nothing these importers
read needs to be large except tensor records, which torch writes uncompressed (stored: the file itself bounds
them), so every other member gets a cap and a compressed member over MAX_PACKED_BYTES is refused as a bomb.
Python's zipfile stops decompressing at the declared size (ZipExtFile reads `file_size` bytes and checks the
CRC), so a member read through `read_member` never exceeds the cap it was checked against.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

from advisor.importers.common import fail

MAX_MEMBERS = 200_000  # a checkpoint of a 1000-layer model has a few thousand records
MAX_CODE_BYTES = 4 << 20  # one TorchScript code member (nn/functional.py of a scripted Transformer is 29 KB)
MAX_DEBUG_BYTES = 8 << 20  # its debug_pkl (source ranges: about 2.5 x the code)
MAX_PICKLE_BYTES = 64 << 20  # data.pkl / constants.pkl / a .pt2's sample inputs: about 100 bytes per tensor
MAX_JSON_BYTES = 128 << 20  # a .pt2's program: about 2 KB per graph node with its stack traces
MAX_PACKED_BYTES = 64 << 20  # any other member stored compressed (torch stores tensors uncompressed)
GIB = 1 << 30


def member_kind(name: str) -> str:
    """'debug', 'code', 'json', 'pickle' or 'data' for a member name; case-insensitive, whatever its extension."""
    lowered = name.lower()
    if lowered.endswith(".debug_pkl"):
        return "debug"
    if "/code/" in lowered or lowered.startswith("code/"):
        return "code"
    if lowered.endswith(".json"):
        return "json"
    if lowered.endswith((".pkl", ".pt")):
        return "pickle"
    return "data"


CAPS = {"debug": MAX_DEBUG_BYTES, "code": MAX_CODE_BYTES, "json": MAX_JSON_BYTES, "pickle": MAX_PICKLE_BYTES}


def checked_members(path: Path) -> list[zipfile.ZipInfo]:
    """The archive's members after the size checks; SpecError (one line) for the first that fails."""
    try:
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
    except Exception as error:  # BadZipFile, NotImplementedError, OSError, ValueError on damaged archives
        raise fail(path, f"not a readable zip archive ({type(error).__name__}: {error})") from None
    if len(members) > MAX_MEMBERS:
        raise fail(path, f"zip archive lists {len(members):,} members, more than the {MAX_MEMBERS:,} allowed")
    for info in members:
        _check(path, info)
    return members


def _check(path: Path, info: zipfile.ZipInfo) -> None:
    kind = member_kind(info.filename)
    cap = CAPS.get(kind)
    where = f"zip member {info.filename[:120]!r}"
    if cap is not None and info.file_size > cap:
        raise fail(
            path,
            f"{where} unpacks to {_size(info.file_size)}, over the {_size(cap)} allowed for "
            f"{kind} members (a zip bomb or not a model file)",
        )
    if info.compress_type == zipfile.ZIP_STORED:
        if info.file_size != info.compress_size:
            raise fail(path, f"{where} declares {info.file_size:,} bytes but stores {info.compress_size:,}")
    elif info.file_size > MAX_PACKED_BYTES:
        raise fail(
            path,
            f"{where} is compressed and unpacks to {_size(info.file_size)}, over the "
            f"{_size(MAX_PACKED_BYTES)} allowed (torch stores tensors uncompressed; a zip bomb?)",
        )


def _size(count: int) -> str:
    return f"{count / GIB:.1f} GiB" if count >= GIB else f"{count / (1 << 20):.0f} MiB"


def read_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    """A member already passed by checked_members: at most its (capped) declared size is decompressed."""
    with archive.open(info) as member:
        return member.read(info.file_size + 1)[: info.file_size]
