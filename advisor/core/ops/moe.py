"""The routed experts of a mixture-of-experts MLP (Mixtral, Qwen-MoE, DeepSeek, OLMoE, gpt-oss): every
expert's weights are stored, each token computes with experts_per_token of them. The router is a separate
Linear; this op takes the hidden states and returns the weighted sum of the chosen experts' outputs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from advisor.core.errors import ShapeError
from advisor.core.graph import TensorSpec
from advisor.core.ops.base import AmpPolicy, Op, SavedTensor, positive, single_input


@dataclass(frozen=True)
class MoEExperts(Op):
    kind: ClassVar[str] = "moe_experts"
    amp: ClassVar[AmpPolicy] = "lower"
    saves_inputs: ClassVar[tuple[int, ...]] = (0,)
    experts: int = 8
    experts_per_token: int = 2
    intermediate: int = 1
    gated: bool = True  # gate and up projections (SwiGLU), else one up projection
    bias: bool = False  # gpt-oss keeps biases on every expert projection

    def output_spec(self, inputs: Sequence[TensorSpec], layer: str) -> TensorSpec:
        x = single_input(inputs, layer)
        positive(layer, experts=self.experts, experts_per_token=self.experts_per_token,
                 intermediate=self.intermediate)
        if self.experts_per_token > self.experts:
            raise ShapeError(layer, f"{self.experts_per_token} experts per token of only {self.experts}")
        return x

    @property
    def _projections(self) -> int:
        return 3 if self.gated else 2

    def param_count(self, inputs: Sequence[TensorSpec]) -> int:
        hidden = inputs[0].shape[-1]
        per_expert = self._projections * hidden * self.intermediate
        if self.bias:
            per_expert += (self._projections - 1) * self.intermediate + hidden
        return self.experts * per_expert

    def forward_macs(self, inputs: Sequence[TensorSpec], output: TensorSpec) -> int:
        tokens = output.numel // output.shape[-1]
        return tokens * self.experts_per_token * self._projections * output.shape[-1] * self.intermediate

    def other_flops(self, inputs: Sequence[TensorSpec], output: TensorSpec) -> int:
        tokens = output.numel // output.shape[-1]
        return tokens * self.experts_per_token * (6 * self.intermediate + 2 * output.shape[-1])

    def extra_saved(self, inputs: Sequence[TensorSpec], output: TensorSpec, training: bool) -> tuple[
            SavedTensor, ...]:
        """Per chosen expert: the gathered input rows, the gate/up outputs and their product, as the eager
        loop over experts (MixtralSparseMoeBlock) keeps them for backward."""
        tokens = output.numel // output.shape[-1]
        routed = tokens * self.experts_per_token
        return (SavedTensor("routed inputs", routed * output.shape[-1], "act"),
                SavedTensor("expert activations", routed * self.intermediate * self._projections, "act"),
                SavedTensor("routing indices", routed, "int64"))
