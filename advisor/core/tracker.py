"""Bookkeeping of live allocations during one simulated step: totals per category, the peak and where it
happened, and the event list an allocator model can replay.

Sizes are rounded as PyTorch's CUDA caching allocator rounds every request (c10/cuda/
CUDACachingAllocator.cpp: kMinBlockSize = 512 bytes), because torch.cuda.max_memory_allocated() counts
the rounded blocks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import NamedTuple

CATEGORIES = ("weights", "gradients", "optimizer_state", "activations", "temporaries", "inputs", "kv_cache")
BLOCK_BYTES = 512


class Store(StrEnum):
    """What an allocation of the analytic replay (core/memory.py) holds: the first field of its Key."""

    INPUT = "input"
    WEIGHTS = "weights"
    OPTIMIZER_STATE = "optimizer_state"
    CAST = "cast"
    WEIGHT_CAST = "weight_cast"
    OUT = "out"
    RECOMPUTED = "recomputed"
    EXTRA = "extra"
    RE_EXTRA = "re_extra"
    AUTOCAST_COPY = "autocast_copy"
    FWD_WORKSPACE = "fwd_workspace"
    BASE_MODEL = "base_model"
    GRAD = "grad"
    GRAD_CAST = "grad_cast"
    WORKSPACE = "workspace"
    PARAM_GRAD = "param_grad"
    PARAM_GRAD_HALF = "param_grad_half"
    PARAM_GRAD_EXTRA = "param_grad_extra"
    OPTIMIZER_TEMPORARY = "optimizer_temporary"


class Key(NamedTuple):
    """One allocation: what it holds (a Store; the simulated step's own tags, importers/simulate/tracking.py),
    the node that made it (-1: none, as the gradient bucket) and which of that node's allocations it is."""

    store: str
    node: int
    slot: int


# Allocations whose size does not depend on the batch; everything else scales with it.
FIXED_KINDS = frozenset(
    {
        Store.WEIGHTS,
        Store.OPTIMIZER_STATE,
        Store.PARAM_GRAD,
        Store.PARAM_GRAD_HALF,
        Store.PARAM_GRAD_EXTRA,
        Store.WEIGHT_CAST,
        Store.OPTIMIZER_TEMPORARY,
    }
)


def rounded(nbytes: int) -> int:
    return 0 if nbytes <= 0 else -(-nbytes // BLOCK_BYTES) * BLOCK_BYTES


@dataclass(frozen=True)
class CategoryBytes:
    weights: int = 0
    gradients: int = 0
    optimizer_state: int = 0
    activations: int = 0
    temporaries: int = 0
    inputs: int = 0
    kv_cache: int = 0  # generation: keys and values of every token so far (core/generation.py)

    @property
    def total(self) -> int:
        return sum(getattr(self, name) for name in CATEGORIES)

    def as_dict(self) -> dict[str, int]:
        return {name: getattr(self, name) for name in CATEGORIES}


@dataclass(frozen=True)
class TimelinePoint:
    """Allocated bytes right after one layer's forward or backward (or the optimizer step)."""

    phase: str
    layer: str
    total_bytes: int


@dataclass
class Tracker:
    live: dict[Key, tuple[int, str]] = field(default_factory=dict)
    totals: dict[str, int] = field(default_factory=lambda: dict.fromkeys(CATEGORIES, 0))
    events: list[tuple[Key, int]] = field(default_factory=list)  # +size on alloc, -size on free
    timeline: list[TimelinePoint] = field(default_factory=list)
    peak_bytes: int = 0
    peak_totals: dict[str, int] = field(default_factory=lambda: dict.fromkeys(CATEGORIES, 0))
    peak_where: tuple[str, str] = ("setup", "")
    where: tuple[str, str] = ("setup", "")
    current: int = 0
    current_fixed: int = 0
    peak_fixed: int = 0
    after_alloc: list[int] = field(default_factory=list)  # total right after each allocation
    live_count_max: int = 0

    def alloc(self, key: Key, nbytes: int, category: str) -> None:
        size = rounded(nbytes)
        if size == 0 or key in self.live:
            return
        self.live[key] = (size, category)
        self.totals[category] += size
        self.current += size
        if key.store in FIXED_KINDS:
            self.current_fixed += size
        self.events.append((key, size))
        self.after_alloc.append(self.current)
        self.live_count_max = max(self.live_count_max, len(self.live))
        if self.current > self.peak_bytes:
            self.peak_bytes = self.current
            self.peak_fixed = self.current_fixed
            self.peak_totals = dict(self.totals)
            self.peak_where = self.where

    def free(self, key: Key) -> None:
        entry = self.live.pop(key, None)
        if entry is None:
            return
        size, category = entry
        self.totals[category] -= size
        self.current -= size
        if key.store in FIXED_KINDS:
            self.current_fixed -= size
        self.events.append((key, -size))

    def mark(self, phase: str, layer: str) -> None:
        """Sets where the next allocations happen and records the total after the previous step."""
        if self.where[0] != "setup":
            self.timeline.append(TimelinePoint(*self.where, self.current))
        self.where = (phase, layer)

    def peak_breakdown(self) -> CategoryBytes:
        return CategoryBytes(**self.peak_totals)
