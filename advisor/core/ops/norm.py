"""Normalisation layers: BatchNorm (1d/2d/3d by input rank), LayerNorm, RMSNorm, GroupNorm."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from advisor.core.errors import ShapeError
from advisor.core.graph import TensorSpec
from advisor.core.ops.base import AmpPolicy, Op, SavedTensor, positive, single_input
from advisor.core.ops.registry import register_op


@register_op
@dataclass(frozen=True)
class BatchNorm(Op):
    """Channels are dim 0 of the per-sample shape. Runs in its input's dtype under autocast (cuDNN)."""

    kind: ClassVar[str] = "batchnorm"
    saves_inputs: ClassVar[tuple[int, ...]] = (0,)  # plus per-channel mean and inverse std (negligible)
    affine: bool = True

    def output_spec(self, inputs: Sequence[TensorSpec], layer: str) -> TensorSpec:
        x = single_input(inputs, layer)
        if not x.shape:
            raise ShapeError(layer, "batchnorm needs a channel dimension")
        return x

    def param_count(self, inputs: Sequence[TensorSpec]) -> int:
        return 2 * inputs[0].shape[0] if self.affine else 0

    def buffer_count(self, inputs: Sequence[TensorSpec]) -> int:
        return 2 * inputs[0].shape[0]  # running_mean and running_var

    def other_flops(self, inputs: Sequence[TensorSpec], output: TensorSpec) -> int:
        return 4 * output.numel  # subtract mean, scale by inverse std, multiply by gamma, add beta


@register_op
@dataclass(frozen=True)
class LayerNorm(Op):
    """Normalises the last dimension. On autocast's fp32 list, so it computes (and outputs) fp32."""

    kind: ClassVar[str] = "layernorm"
    amp: ClassVar[AmpPolicy] = "fp32"
    saves_inputs: ClassVar[tuple[int, ...]] = (0,)
    affine: bool = True
    bias: bool = True
    # CohereLayerNorm (modeling_cohere.py) writes it out in fp32 Python: x - mean is computed twice (once
    # for pow, once for the product with rsqrt) and each copy is saved, with the rsqrt and the normalised
    # product the weight multiplies; the input itself is not saved
    composite: bool = False

    def output_spec(self, inputs: Sequence[TensorSpec], layer: str) -> TensorSpec:
        x = single_input(inputs, layer)
        if not x.shape:
            raise ShapeError(layer, "layernorm needs a feature dimension")
        return x

    def saved_inputs(self) -> tuple[int, ...]:
        return () if self.composite else self.saves_inputs

    def param_count(self, inputs: Sequence[TensorSpec]) -> int:
        if not self.affine:
            return 0
        return inputs[0].shape[-1] * (2 if self.bias else 1)

    def other_flops(self, inputs: Sequence[TensorSpec], output: TensorSpec) -> int:
        return 5 * output.numel  # mean, variance, normalise, scale, shift

    def extra_saved(self, inputs: Sequence[TensorSpec], output: TensorSpec, training: bool) -> tuple[SavedTensor, ...]:
        rows = output.numel // output.shape[-1]
        if self.composite:
            return (
                SavedTensor("x - mean, for pow", output.numel, "float32"),
                SavedTensor("x - mean, for the product", output.numel, "float32"),
                SavedTensor("rsqrt", rows, "float32"),
                SavedTensor("normalised", output.numel, "float32"),
            )
        return (SavedTensor("mean", rows, "float32"), SavedTensor("rstd", rows, "float32"))


@register_op
@dataclass(frozen=True)
class RMSNorm(Op):
    """x * rsqrt(mean(x^2) + eps) * weight, written out in fp32 as Llama-style models do (HF LlamaRMSNorm):
    autograd keeps the input, the normalised copy and the per-row rsqrt. LlamaRMSNorm multiplies the weight
    by the normalised copy cast back to the input's dtype (`self.weight * hidden_states.to(input_dtype)`), so
    that cast is what is kept, half for a half input such as an attention output (llama_cast); Gemma, OLMo 2
    and gpt-oss multiply in fp32 and cast afterwards, keeping the fp32 copy, as torch's rms_norm does."""

    kind: ClassVar[str] = "rmsnorm"
    amp: ClassVar[AmpPolicy] = "fp32"
    saves_inputs: ClassVar[tuple[int, ...]] = (0,)
    llama_cast: bool = False

    def output_spec(self, inputs: Sequence[TensorSpec], layer: str) -> TensorSpec:
        x = single_input(inputs, layer)
        if not x.shape:
            raise ShapeError(layer, "rmsnorm needs a feature dimension")
        return x

    def param_count(self, inputs: Sequence[TensorSpec]) -> int:
        return inputs[0].shape[-1]

    def other_flops(self, inputs: Sequence[TensorSpec], output: TensorSpec) -> int:
        return 4 * output.numel  # square, mean, scale, weight

    def extra_saved(self, inputs: Sequence[TensorSpec], output: TensorSpec, training: bool) -> tuple[SavedTensor, ...]:
        rows = output.numel // output.shape[-1]
        normalised = SavedTensor("normalised", output.numel, "input" if self.llama_cast else "act")
        return (normalised, SavedTensor("rstd", rows, "float32"))


@register_op
@dataclass(frozen=True)
class GroupNorm(Op):
    kind: ClassVar[str] = "groupnorm"
    amp: ClassVar[AmpPolicy] = "fp32"
    saves_inputs: ClassVar[tuple[int, ...]] = (0,)
    groups: int = 32
    affine: bool = True

    def output_spec(self, inputs: Sequence[TensorSpec], layer: str) -> TensorSpec:
        x = single_input(inputs, layer)
        positive(layer, groups=self.groups)
        if not x.shape or x.shape[0] % self.groups:
            raise ShapeError(layer, f"groups {self.groups} must divide the channels of input {x.shape}")
        return x

    def param_count(self, inputs: Sequence[TensorSpec]) -> int:
        return 2 * inputs[0].shape[0] if self.affine else 0

    def other_flops(self, inputs: Sequence[TensorSpec], output: TensorSpec) -> int:
        return 5 * output.numel

    def extra_saved(self, inputs: Sequence[TensorSpec], output: TensorSpec, training: bool) -> tuple[SavedTensor, ...]:
        return (SavedTensor("mean", self.groups, "float32"), SavedTensor("rstd", self.groups, "float32"))
