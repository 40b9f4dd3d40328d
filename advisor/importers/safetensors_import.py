"""`.safetensors` + `config.json`: parameter counts from the header, the architecture from the config.

The tensors are never read. The header is parsed here, not by the safetensors package, so a hostile file
cannot make us allocate what it declares: format per https://github.com/huggingface/safetensors (README,
"Format"): 8 bytes little-endian header length N, N bytes of UTF-8 JSON mapping tensor names to
{"dtype", "shape", "data_offsets": [begin, end]} relative to the byte after the header, plus an optional
"__metadata__" of strings. We check what the reference implementation checks: header size (100 MB cap),
known dtypes, offsets inside the file, each tensor's byte size = elements x dtype size, no overlaps.
"""

from __future__ import annotations

import itertools
import json
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from advisor.core import zoo
from advisor.core.graph import Graph
from advisor.importers.common import fail, read_capped
from advisor.importers.hf_config import graph_from_config
from advisor.importers.state_dict import weights_only_graph

MAX_HEADER_BYTES = 100_000_000  # safetensors' own limit (MAX_HEADER_SIZE)
MAX_RANK = 16
DTYPE_BYTES = {
    "BOOL": 1,
    "U8": 1,
    "I8": 1,
    "F8_E5M2": 1,
    "F8_E4M3": 1,
    "F8_E8M0": 1,
    "I16": 2,
    "U16": 2,
    "F16": 2,
    "BF16": 2,
    "I32": 4,
    "U32": 4,
    "F32": 4,
    "I64": 8,
    "U64": 8,
    "F64": 8,
    "C64": 8,
    "F4": 1,
    "F6_E2M3": 1,
    "F6_E3M2": 1,
}
FLOAT_DTYPES = {"F16", "BF16", "F32", "F64", "F8_E5M2", "F8_E4M3", "F8_E8M0", "F4", "F6_E2M3", "F6_E3M2"}


@dataclass(frozen=True)
class TensorEntry:
    name: str
    dtype: str
    shape: tuple[int, ...]
    numel: int


@dataclass(frozen=True)
class Header:
    tensors: tuple[TensorEntry, ...]
    metadata: dict[str, str]

    @property
    def param_count(self) -> int:
        return sum(t.numel for t in self.tensors if t.dtype in FLOAT_DTYPES)


def read_header(path: Path) -> Header:
    size = path.stat().st_size
    prefix = read_capped(path, 8, "the header length", whole=False)
    if len(prefix) < 8:
        raise fail(path, "not a safetensors file: shorter than its 8-byte header length")
    (length,) = struct.unpack("<Q", prefix)
    if length > MAX_HEADER_BYTES or length > size - 8:
        raise fail(
            path,
            f"not a safetensors file: header length {length} exceeds "
            f"{'the 100 MB limit' if length > MAX_HEADER_BYTES else 'the file'}",
        )
    raw = read_capped(path, length, "the header", start=8, whole=False)
    try:
        header = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise fail(path, "damaged safetensors header: not valid UTF-8 JSON") from None
    if not isinstance(header, dict):
        raise fail(path, "damaged safetensors header: not a JSON object")
    return _validate(path, header, size - 8 - length)


def _validate(path: Path, header: dict[str, Any], data_bytes: int) -> Header:
    metadata = header.pop("__metadata__", {}) or {}
    if not isinstance(metadata, dict) or not all(isinstance(v, str) for v in metadata.values()):
        raise fail(path, "safetensors __metadata__ must map names to strings")
    entries, spans = [], []
    for name, info in header.items():
        entry, span = _entry(path, name, info, data_bytes)
        entries.append(entry)
        spans.append(span)
    spans.sort()
    for (_, end), (begin, _) in itertools.pairwise(spans):
        if begin < end:
            raise fail(path, "damaged safetensors header: tensors overlap")
    return Header(tuple(entries), metadata)


def _entry(path: Path, name: str, info: Any, data_bytes: int) -> tuple[TensorEntry, tuple[int, int]]:
    where = f"tensor {name[:80]!r}"
    if not isinstance(info, dict) or set(info) - {"dtype", "shape", "data_offsets"}:
        raise fail(path, f"{where}: entry must hold dtype, shape and data_offsets")
    dtype, shape, offsets = info.get("dtype"), info.get("shape"), info.get("data_offsets")
    if not isinstance(dtype, str) or dtype not in DTYPE_BYTES:
        raise fail(path, f"{where}: unknown dtype {str(dtype)[:20]!r}")
    if not isinstance(shape, list) or len(shape) > MAX_RANK or not all(type(d) is int and d >= 0 for d in shape):
        raise fail(path, f"{where}: shape must be a list of at most {MAX_RANK} non-negative whole numbers")
    if not isinstance(offsets, list) or len(offsets) != 2 or not all(type(o) is int for o in offsets):
        raise fail(path, f"{where}: data_offsets must be [begin, end]")
    begin, end = offsets
    if not 0 <= begin <= end <= data_bytes:
        raise fail(
            path, f"{where}: data [{begin}, {end}) lies outside the file's {data_bytes} data bytes (truncated file?)"
        )
    numel = 1
    for d in shape:
        numel *= d
        if numel * DTYPE_BYTES[dtype] > data_bytes:  # stop early: a declared shape may be astronomically large
            raise fail(path, f"{where}: declared shape {shape[:MAX_RANK]} needs more bytes than the file holds")
    if numel * DTYPE_BYTES[dtype] != end - begin:
        raise fail(
            path,
            f"{where}: shape {shape} of {dtype} needs {numel * DTYPE_BYTES[dtype]} bytes, "
            f"data_offsets give {end - begin}",
        )
    return TensorEntry(name, dtype, tuple(shape), numel), (begin, end)


def load_graph(path: Path, seq_len: int | None = None) -> Graph:
    """The graph of the architecture config.json names; parameters only when it is not a built-in one."""
    header = read_header(path)
    config_path = path.with_name("config.json")
    if not config_path.is_file():
        raise fail(
            path,
            f"no config.json beside it, so the architecture is unknown ({header.param_count:,} parameters in the file)",
        )
    graph = graph_from_config(config_path, path.name, seq_len or zoo.DEFAULT_SEQ_LEN, seq_len is None)
    if graph is None:
        return weights_only_graph(path.name, header.param_count, "architecture not built in")
    return graph
