"""A signal without Qt, so the state model's logic runs and is tested without PySide6 (as psygnal serves
napari's models: a model emits, views connect).

A slot connected twice is refused: a window that (re)builds its widgets cannot pile up receivers
(issue 27: each language switch added two more receivers to result_changed, 13 after four switches).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Slot = Callable[..., object]


class Signal:
    def __init__(self) -> None:
        self._slots: list[Slot] = []

    def connect(self, slot: Slot) -> None:
        if slot in self._slots:
            raise ValueError(f"{getattr(slot, '__qualname__', slot)!s} is already connected")
        self._slots.append(slot)

    def disconnect(self, slot: Slot) -> None:
        self._slots.remove(slot)

    @property
    def receivers(self) -> int:
        return len(self._slots)

    def emit(self, *args: Any) -> None:
        for slot in list(self._slots):  # a slot may disconnect itself
            slot(*args)
