"""Reads the fields of a transformers config.json with the defaults of its configuration class, and says in
one line which field is wrong (the caller adds the file name)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeVar

from advisor.core.errors import SpecError

T = TypeVar("T")

MAX_DIMENSION = 1 << 24  # no real model has a hidden size, vocabulary or layer count this large


@dataclass(frozen=True)
class ConfigReader:
    cfg: dict[str, Any]

    def integer(self, key: str, default: int | None = None, *, minimum: int = 1) -> int:
        value = self.cfg.get(key)
        if value is None:
            value = default
        if type(value) is not int or not minimum <= value <= MAX_DIMENSION:
            shown = "missing" if value is None else str(value)[:40]
            raise SpecError(f"{key} must be a whole number from {minimum} to {MAX_DIMENSION}, got {shown}")
        return value

    def first_integer(self, keys: tuple[str, ...], default: int | None = None) -> int:
        """The first of several spellings present (configuration classes map attribute names both ways)."""
        key = next((k for k in keys if self.cfg.get(k) is not None), keys[0])
        return self.integer(key, default)

    def optional_int(self, key: str, default: int | None = None) -> int | None:
        """A positive int, or None where the config says null (a feature switched off)."""
        value = self.cfg.get(key, default)
        return None if value is None else self.integer(key, default)

    def flag(self, key: str, default: bool) -> bool:
        return self._typed(key, default, bool, "true or false")

    def text(self, key: str, default: str) -> str:
        return self._typed(key, default, str, "a string")

    def _typed(self, key: str, default: T, kind: type[T], what: str) -> T:
        """The value of `key` when it has the type `kind`; the default where the config omits it or says null."""
        value = self.cfg.get(key, default)
        if value is None:
            return default
        if not isinstance(value, kind):
            raise SpecError(f"{key} must be {what}, got {str(value)[:40]}")
        return value

    def int_list(self, key: str) -> tuple[int, ...]:
        value = self.cfg.get(key) or []
        if not isinstance(value, list) or not all(type(v) is int and v >= 0 for v in value):
            raise SpecError(f"{key} must be a list of layer numbers, got {str(value)[:40]}")
        return tuple(value)

    def layer_types(self, layers: int, default: list[bool], kind: str = "sliding_attention") -> tuple[bool, ...]:
        """Per layer, True for windowed attention of this kind (config layer_types, else the family's pattern)."""
        value = self.cfg.get("layer_types")
        if value is None:
            return tuple(default)
        if not isinstance(value, list) or len(value) != layers or not all(isinstance(v, str) for v in value):
            raise SpecError(f"layer_types must list one attention type per layer ({layers}), got {str(value)[:40]}")
        return tuple(v == kind for v in value)
