"""Dropout: in training a new tensor plus a one-byte-per-element mask kept for backward
(native_dropout returns a bool mask); in eval mode the input itself."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from advisor.core.errors import ShapeError
from advisor.core.graph import TensorSpec
from advisor.core.ops.base import Op, SavedTensor, single_input
from advisor.core.ops.registry import register_op


@register_op
@dataclass(frozen=True)
class Dropout(Op):
    kind: ClassVar[str] = "dropout"
    p: float = 0.5

    def output_spec(self, inputs: Sequence[TensorSpec], layer: str) -> TensorSpec:
        if not 0.0 <= self.p < 1.0:
            raise ShapeError(layer, f"dropout probability must be in [0, 1), got {self.p}")
        return single_input(inputs, layer)

    def is_identity(self, training: bool) -> bool:
        return not training or self.p == 0.0

    def other_flops(self, inputs: Sequence[TensorSpec], output: TensorSpec) -> int:
        return 2 * output.numel  # draw, scale

    def extra_saved(self, inputs: Sequence[TensorSpec], output: TensorSpec, training: bool) -> tuple[SavedTensor, ...]:
        return (SavedTensor("mask", output.numel, "bool"),) if training and self.p > 0 else ()
