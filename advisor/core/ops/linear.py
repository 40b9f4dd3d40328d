"""Linear (nn.Linear, HF Conv1D): y = x W^T + b over the last dimension."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from advisor.core.errors import ShapeError
from advisor.core.graph import TensorSpec
from advisor.core.ops.base import AmpPolicy, Op, positive, same_shape, single_input
from advisor.core.ops.registry import register_op


@register_op
@dataclass(frozen=True)
class Linear(Op):
    kind: ClassVar[str] = "linear"
    amp: ClassVar[AmpPolicy] = "lower"
    saves_inputs: ClassVar[tuple[int, ...]] = (0,)  # addmm keeps its input (and the weight) for backward
    out_features: int = 1
    bias: bool = True
    tied_to: str = ""  # the layer whose weight this one shares (GPT-2's LM head reuses the token embedding)

    def output_spec(self, inputs: Sequence[TensorSpec], layer: str) -> TensorSpec:
        x = single_input(inputs, layer)
        positive(layer, out_features=self.out_features)
        if not x.shape:
            raise ShapeError(layer, "linear needs an input with a feature dimension")
        return same_shape(x, (*x.shape[:-1], self.out_features))

    def param_count(self, inputs: Sequence[TensorSpec]) -> int:
        weights = 0 if self.tied_to else inputs[0].shape[-1] * self.out_features
        return weights + (self.out_features if self.bias else 0)

    def forward_macs(self, inputs: Sequence[TensorSpec], output: TensorSpec) -> int:
        return output.numel * inputs[0].shape[-1]  # one multiply-add per input feature per output element
