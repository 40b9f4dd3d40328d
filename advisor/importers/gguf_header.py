"""The header of a GGUF file (llama.cpp, LM Studio, Ollama): metadata and tensor descriptions, never the weights.

Parsed here with struct, not by gguf's GGUFReader, which memory-maps the whole file and builds an array per
tensor and per token before anything is checked; the value types, tensor types and block sizes are the gguf
package's (gguf/constants.py GGUFValueType, GGMLQuantizationType, GGML_QUANT_SIZES). Layout (ggml
docs/gguf.md, version 2 and 3): "GGUF", uint32 version, uint64 tensor count, uint64 key-value count; each
key a uint64-length string, a uint32 value type and the value (arrays: uint32 element type, uint64 count,
the elements); each tensor a name, uint32 dimension count, uint64 dimensions (innermost first), uint32
type, uint64 offset into the data section, which starts at the next multiple of general.alignment.

Every length and count is checked against the bytes left in the file before it is read, so a hostile
header can make us read at most the file, never allocate what it declares.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from advisor.importers.common import fail, optional_module

MAGIC, MAX_DIMS = b"GGUF", 4  # ggml.h GGML_MAX_DIMS
MAX_STRING_BYTES = 1 << 24  # a key, a tensor name or a metadata string (chat templates run to ~10 KiB)
MAX_KEPT_ARRAY = 1 << 16  # arrays of numbers up to this are kept (per-layer head counts); longer ones counted
MAX_ARRAY_DEPTH = 3
# Counts no real file reaches (a 671B model has ~1,100 tensors, ~50 keys, vocabularies under 300k tokens), so
# a hostile header cannot keep the parser looping over the file, or building objects, for minutes.
MAX_TENSORS, MAX_KEYS, MAX_ARRAY_ITEMS = 1 << 20, 1 << 16, 1 << 22
_SCALAR = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
STRING, ARRAY = 8, 9


@dataclass(frozen=True)
class ArrayInfo:
    """A long array (the token list), by its element type and length only."""

    element_type: int
    count: int


@dataclass(frozen=True)
class GGUFTensor:
    name: str
    type_name: str  # GGMLQuantizationType name: F32, F16, Q4_K, ...
    shape: tuple[int, ...]  # ggml order: innermost (row length) first
    numel: int
    nbytes: int


@dataclass(frozen=True)
class GGUFHeader:
    version: int
    metadata: dict[str, Any]
    tensors: tuple[GGUFTensor, ...]
    data_offset: int

    @property
    def weight_bytes(self) -> int:
        return sum(t.nbytes for t in self.tensors)

    @property
    def numel(self) -> int:
        return sum(t.numel for t in self.tensors)


class _Reader:
    def __init__(self, path: Path, f: BinaryIO, size: int) -> None:
        self.path, self.f, self.size = path, f, size

    @property
    def left(self) -> int:
        return self.size - self.f.tell()

    def take(self, n: int, what: str) -> bytes:
        if n > self.left:
            raise fail(
                self.path, f"damaged GGUF header: {what} needs {n:,} bytes, {self.left:,} are left (truncated file?)"
            )
        return self.f.read(n)

    def scalar(self, fmt: str, what: str) -> Any:
        return struct.unpack(fmt, self.take(struct.calcsize(fmt), what))[0]

    def string(self, what: str) -> str:
        n = self.scalar("<Q", what)
        if n > MAX_STRING_BYTES:
            raise fail(self.path, f"damaged GGUF header: {what} of {n:,} bytes (more than {MAX_STRING_BYTES:,})")
        try:
            return self.take(n, what).decode("utf-8")
        except UnicodeDecodeError:
            raise fail(self.path, f"damaged GGUF header: {what} is not UTF-8") from None

    def skip_string(self, what: str) -> None:
        n = self.scalar("<Q", what)
        if n > self.left:
            self.take(n, what)  # raises: the string runs past the end of the file
        self.f.seek(n, 1)

    def value(self, vtype: int, what: str, depth: int = 0) -> Any:
        if vtype in _SCALAR:
            return self.scalar(_SCALAR[vtype], what)
        if vtype == STRING:
            return self.string(what)
        if vtype == ARRAY and depth < MAX_ARRAY_DEPTH:
            return self.array(what, depth)
        raise fail(self.path, f"damaged GGUF header: {what} has unknown value type {vtype}")

    def array(self, what: str, depth: int) -> Any:
        etype, count = self.scalar("<I", what), self.scalar("<Q", what)
        if etype in _SCALAR:
            size = struct.calcsize(_SCALAR[etype])
            if count * size > self.left:
                self.take(count * size, what)  # raises
            if count <= MAX_KEPT_ARRAY:
                return list(struct.unpack(f"<{count}{_SCALAR[etype][1]}", self.f.read(count * size)))
            self.f.seek(count * size, 1)
            return ArrayInfo(etype, count)
        if count > MAX_ARRAY_ITEMS:
            raise fail(self.path, f"damaged GGUF header: {what} has {count:,} elements (more than {MAX_ARRAY_ITEMS:,})")
        if count * 8 > self.left:  # each string or array element takes at least its 8-byte length
            self.take(count * 8, what)
        for i in range(count):
            if etype == STRING:
                self.skip_string(f"{what}[{i}]")
            else:
                self.value(etype, f"{what}[{i}]", depth + 1)
        return ArrayInfo(etype, count)


def read_header(path: Path) -> GGUFHeader:
    gguf = optional_module("gguf", str(path))
    size = path.stat().st_size
    with path.open("rb") as f:
        r = _Reader(path, f, size)
        if size < 4 or f.read(4) != MAGIC:
            raise fail(path, "not a GGUF file (it does not start with 'GGUF')")
        version = r.scalar("<I", "version")
        if version not in (2, 3):
            raise fail(path, f"GGUF version {version} is not supported (2 and 3 are)")
        n_tensors, n_kv = r.scalar("<Q", "tensor count"), r.scalar("<Q", "metadata count")
        # a key-value pair takes at least 8 + 4 + 1 bytes, a tensor description 8 + 4 + 4 + 8
        if n_tensors > MAX_TENSORS or n_kv > MAX_KEYS:
            raise fail(
                path,
                f"damaged GGUF header: {n_tensors:,} tensors and {n_kv:,} metadata entries (at most "
                f"{MAX_TENSORS:,} and {MAX_KEYS:,})",
            )
        if n_kv * 13 > r.left or n_tensors * 24 > r.left:
            raise fail(
                path,
                f"damaged GGUF header: {n_tensors:,} tensors and {n_kv:,} metadata entries "
                f"cannot fit in a {size:,}-byte file (truncated file?)",
            )
        metadata: dict[str, Any] = {}
        for i in range(n_kv):
            key = r.string(f"metadata key {i}")
            metadata[key] = r.value(r.scalar("<I", key), key)
        infos = [_tensor_info(r, gguf, i) for i in range(n_tensors)]
        alignment = metadata.get("general.alignment", gguf.GGUF_DEFAULT_ALIGNMENT)
        if type(alignment) is not int or not 0 < alignment <= 1 << 16 or alignment & (alignment - 1):
            raise fail(path, f"damaged GGUF header: general.alignment {str(alignment)[:20]} is not a power of two")
        data_offset = -(-f.tell() // alignment) * alignment
    tensors = tuple(_check_tensor(path, t, offset, alignment, size - data_offset) for t, offset in infos)
    return GGUFHeader(version, metadata, tensors, data_offset)


def _tensor_info(r: _Reader, gguf: Any, i: int) -> tuple[GGUFTensor, int]:
    name = r.string(f"tensor {i} name")
    dims = r.scalar("<I", name)
    if not 1 <= dims <= MAX_DIMS:
        raise fail(r.path, f"damaged GGUF header: tensor {name[:80]!r} has {dims} dimensions (1 to {MAX_DIMS})")
    shape = tuple(r.scalar("<Q", name) for _ in range(dims))
    type_id, offset = r.scalar("<I", name), r.scalar("<Q", name)
    try:
        qtype = gguf.GGMLQuantizationType(type_id)
        block, type_bytes = gguf.GGML_QUANT_SIZES[qtype]
    except (ValueError, KeyError):
        raise fail(r.path, f"tensor {name[:80]!r}: unknown GGML type {type_id}") from None
    numel = 1
    for d in shape:
        numel *= d
    if shape[0] % block or numel == 0 or numel > 1 << 48:
        raise fail(
            r.path,
            f"damaged GGUF header: tensor {name[:80]!r} of shape {list(shape)} does not fit "
            f"{qtype.name} blocks of {block}",
        )
    return GGUFTensor(name, qtype.name, shape, numel, numel // block * type_bytes), offset


def _check_tensor(path: Path, t: GGUFTensor, offset: int, alignment: int, data_bytes: int) -> GGUFTensor:
    if offset % alignment or offset + t.nbytes > data_bytes:
        raise fail(
            path,
            f"tensor {t.name[:80]!r}: data [{offset:,}, {offset + t.nbytes:,}) lies outside the "
            f"file's {data_bytes:,} data bytes (truncated file?)",
        )
    return t
