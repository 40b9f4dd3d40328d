"""What the analytic step replay (core/memory.py) is told beyond the layer graph and the workload, and what it
answers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from advisor.core.tracker import CategoryBytes, Key, TimelinePoint


class ExtraTensor(Protocol):
    """A tensor the model's code builds that no layer of the graph produces (core/llm/lifetimes.py
    HeldTensor): allocated once node `after` has run, freed before node `release` starts."""

    @property
    def after(self) -> int: ...
    @property
    def release(self) -> int: ...
    @property
    def nbytes(self) -> int: ...


@dataclass(frozen=True)
class ModelFacts:
    """What the replay is told beyond the layer graph and the workload, by the layer that knows the model's
    family (core/replay.py asks core/llm for decoders); a plain graph has none of it. A node's stored
    weights come on the node itself (graph.py Node.stored).

    held_references: (node, until) references the model's Python code keeps; extra_tensors: tensors the
    model's code builds outside every layer."""

    held_references: tuple[tuple[int, int], ...] = ()
    extra_tensors: tuple[ExtraTensor, ...] = ()


@dataclass(frozen=True)
class MemoryProfile:
    peak_bytes: int
    at_peak: CategoryBytes
    peak_phase: str
    peak_layer: str
    fixed_bytes: int  # the part of the peak that does not grow with the batch
    kept_bytes: tuple[int, ...]  # per node: what autograd holds of it at the end of the forward pass
    timeline: tuple[TimelinePoint, ...]
    events: tuple[tuple[Key, int], ...]
    after_alloc: tuple[int, ...]  # total allocated right after each allocation of the step
    live_count_max: int
