"""The bundled LLM library: beside each advisor/data/llm_configs/NAME/config.json, a source.json saying where
the values come from (Hub repository, the copy they were read from, the date) and the published parameter
count they must reproduce; and the search `advisor estimate --list QUERY` and the app's chooser use, by name,
family, Hub repository or size ("8b", "<10b", ">=100b", "moe")."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

from advisor.core.errors import SpecError
from advisor.core.llm.decoder import DecoderSpec
from advisor.core.llm.tensors import active_param_count
from advisor.core.zoo.llm import CONFIG_DIR

ActiveExcludes = Literal["none", "embeddings", "input_embedding"]
UNITS = {"k": 10**3, "m": 10**6, "b": 10**9, "t": 10**12}
SIZE_TOKEN = re.compile(r"^(<=|>=|<|>)?(\d+(?:\.\d+)?)([kmbt])$")
SIZE_MATCH = 0.04  # "8b" finds 7.68B-8.32B models: published counts are rounded, names are rounder still


@dataclass(frozen=True)
class LibraryEntry:
    """One source.json. published_params is the card's or Hub page's figure; not_built_params is the part
    of it the decoder does not build (a vision encoder), so the check compares the built count with
    published_params - not_built_params within `tolerance` (a fraction; 0 = exact)."""

    name: str
    family: str
    hf_repo: str
    url: str
    read: str  # the date the values were read
    values_from: str  # the copy of config.json the values were taken from
    published_params: int
    published_as: str  # where the count is published, in its own words
    tolerance: float
    published_active_params: int | None = None
    published_active_excludes: ActiveExcludes = "none"  # which embedding tables the active figure leaves out
    not_built_params: int = 0
    not_built: str = ""
    note: str = ""

    @property
    def compared_params(self) -> int:
        return self.published_params - self.not_built_params

    @property
    def size(self) -> str:
        return size_label(self.published_params)

    @property
    def is_moe(self) -> bool:
        return self.published_active_params is not None


def active_as_published(entry: LibraryEntry, spec: DecoderSpec) -> int:
    """The decoder's active parameters counted as the card counts them: with the embedding tables (Qwen3,
    DeepSeek, Llama 4), without the input table (gpt-oss: 5.1B) or without both (GLM-4.5: 32B, 12B)."""
    table = spec.vocab * spec.hidden
    left_out = {"none": 0, "input_embedding": table, "embeddings": table * (1 if spec.tied_embeddings else 2)}
    return active_param_count(spec) - left_out[entry.published_active_excludes]


def size_label(params: int) -> str:
    """8_190_000_000 -> '8.2B', 135_000_000 -> '135M', 1_026_000_000_000 -> '1.0T'."""
    for unit, scale in (("T", 10**12), ("B", 10**9), ("M", 10**6)):
        if params >= scale:
            value = params / scale
            return f"{value:.0f}{unit}" if value >= 100 else f"{value:.1f}{unit}".replace(".0" + unit, unit)
    return f"{params / 1e3:.0f}K"


def _entry(path_name: str, raw: Any) -> LibraryEntry:
    where = f"llm_configs/{path_name}/source.json"
    if not isinstance(raw, dict):
        raise SpecError(f"{where}: expected a JSON object")
    fields = set(LibraryEntry.__dataclass_fields__)
    unknown = sorted(set(raw) - fields)
    if unknown:
        raise SpecError(f"{where}: unknown field(s) {', '.join(unknown)}")
    try:
        entry = LibraryEntry(**raw)
    except TypeError as error:
        raise SpecError(f"{where}: {error}") from None
    if entry.name != path_name:
        raise SpecError(f"{where}: name {entry.name!r} is not its folder's")
    return entry


@cache
def library() -> tuple[LibraryEntry, ...]:
    """Every bundled source.json, by name."""
    return tuple(
        _entry(path.parent.name, json.loads(path.read_text(encoding="utf-8")))
        for path in sorted(CONFIG_DIR.glob("*/source.json"))
    )


def entry(name: str) -> LibraryEntry | None:
    return next((e for e in library() if e.name == name), None)


def _size_matches(token: str, params: int) -> bool | None:
    """None when the token is not a size; else whether params fits it ("8b": within 5%, "<10b": below)."""
    match = SIZE_TOKEN.match(token)
    if match is None:
        return None
    op, number, unit = match.groups()
    target = float(number) * UNITS[unit]
    if not op:
        return abs(params - target) <= SIZE_MATCH * target
    return {"<": params < target, "<=": params <= target, ">": params > target, ">=": params >= target}[op]


def _token_matches(token: str, name: str, found: LibraryEntry | None) -> bool:
    text = (
        name.lower()
        if found is None
        else " ".join((found.name, found.family, found.hf_repo, "moe" if found.is_moe else "dense")).lower()
    )
    if token in text:
        return True
    sized = None if found is None else _size_matches(token, found.published_params)
    return bool(sized)


def search(query: str, names: Iterable[str]) -> list[str]:
    """The names (zoo names, in their order) matching every word of the query: a part of the name, the
    family or the Hub repository, 'moe'/'dense', or a size; models outside the library match by name."""
    tokens = query.lower().split()
    known = {e.name: e for e in library()}
    return [name for name in names if all(_token_matches(t, name, known.get(name)) for t in tokens)]
