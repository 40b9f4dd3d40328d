"""Graph inputs: the batch the training loop feeds in (images, token ids)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from advisor.core.errors import ShapeError
from advisor.core.graph import DtypeKind, TensorSpec
from advisor.core.ops.base import Op
from advisor.core.ops.registry import register_op


@register_op
@dataclass(frozen=True)
class Input(Op):
    kind: ClassVar[str] = "input"
    shape: tuple[int, ...] = ()
    dtype: DtypeKind = "float"

    def output_spec(self, inputs: Sequence[TensorSpec], layer: str) -> TensorSpec:
        if inputs:
            raise ShapeError(layer, "an input layer takes no inputs")
        if not self.shape or any(d <= 0 for d in self.shape):
            raise ShapeError(layer, f"input shape must be positive sizes, got {self.shape}")
        return TensorSpec(tuple(self.shape), self.dtype)
