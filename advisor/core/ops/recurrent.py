"""LSTM and GRU over a (seq, features) input, as cuDNN runs them.

Parameters per layer and direction (PyTorch's nn.LSTM): gates x (input + hidden) weights plus two bias
vectors (b_ih, b_hh). Training keeps cuDNN's reserve space: per step and layer, the gate activations and
the cell/hidden states (approximated as (gates + 2) x hidden values), plus the layer outputs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from advisor.core.errors import ShapeError
from advisor.core.graph import TensorSpec
from advisor.core.ops.base import AmpPolicy, Op, SavedTensor, positive, same_shape, single_input
from advisor.core.ops.registry import register_op


@dataclass(frozen=True)
class _Recurrent(Op):
    amp: ClassVar[AmpPolicy] = "lower"
    saves_inputs: ClassVar[tuple[int, ...]] = (0,)
    saves_output: ClassVar[bool] = True
    gates: ClassVar[int] = 4
    hidden_size: int = 1
    num_layers: int = 1
    bidirectional: bool = False
    bias: bool = True

    @property
    def directions(self) -> int:
        return 2 if self.bidirectional else 1

    def output_spec(self, inputs: Sequence[TensorSpec], layer: str) -> TensorSpec:
        x = single_input(inputs, layer)
        positive(layer, hidden_size=self.hidden_size, num_layers=self.num_layers)
        if len(x.shape) != 2:
            raise ShapeError(layer, f"{self.kind} expects (seq, features) per sample, got {x.shape}")
        return same_shape(x, (x.shape[0], self.hidden_size * self.directions))

    def _layer_inputs(self, features: int) -> list[int]:
        return [features] + [self.hidden_size * self.directions] * (self.num_layers - 1)

    def param_count(self, inputs: Sequence[TensorSpec]) -> int:
        g, h = self.gates * self.hidden_size, self.hidden_size
        per_direction = [g * (n + h) + (2 * g if self.bias else 0) for n in self._layer_inputs(inputs[0].shape[-1])]
        return self.directions * sum(per_direction)

    def forward_macs(self, inputs: Sequence[TensorSpec], output: TensorSpec) -> int:
        seq = inputs[0].shape[0]
        g, h = self.gates * self.hidden_size, self.hidden_size
        return self.directions * seq * sum(g * (n + h) for n in self._layer_inputs(inputs[0].shape[-1]))

    def other_flops(self, inputs: Sequence[TensorSpec], output: TensorSpec) -> int:
        seq = inputs[0].shape[0]
        return 6 * self.gates * self.hidden_size * seq * self.num_layers * self.directions

    def extra_saved(self, inputs: Sequence[TensorSpec], output: TensorSpec, training: bool) -> tuple[SavedTensor, ...]:
        if not training:
            return ()
        seq = inputs[0].shape[0]
        per_step = (self.gates + 2) * self.hidden_size * self.directions
        inner_outputs = (self.num_layers - 1) * self.hidden_size * self.directions
        return (SavedTensor("cuDNN reserve space", seq * (per_step * self.num_layers + inner_outputs), "act"),)


@register_op
@dataclass(frozen=True)
class LSTM(_Recurrent):
    kind: ClassVar[str] = "lstm"
    gates: ClassVar[int] = 4


@register_op
@dataclass(frozen=True)
class GRU(_Recurrent):
    kind: ClassVar[str] = "gru"
    gates: ClassVar[int] = 3
