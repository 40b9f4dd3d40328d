"""Elementwise activations and softmax.

What autograd keeps decides memory (torch/csrc/autograd/FunctionsManual.cpp, derivatives.yaml): relu,
sigmoid, tanh and softmax differentiate through their result; gelu, silu and hardswish through their input.
An in-place variant writes into its input's storage; one whose backward needs the original input makes
autograd keep a copy of it (so silu_ saves nothing).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from advisor.core.graph import TensorSpec
from advisor.core.ops.base import AmpPolicy, Op, SavedTensor, single_input
from advisor.core.ops.registry import register_op


@dataclass(frozen=True)
class Activation(Op):
    kind: ClassVar[str] = "activation"
    flops_per_element: ClassVar[int] = 1

    def output_spec(self, inputs: Sequence[TensorSpec], layer: str) -> TensorSpec:
        return single_input(inputs, layer)

    def other_flops(self, inputs: Sequence[TensorSpec], output: TensorSpec) -> int:
        return self.flops_per_element * output.numel


@dataclass(frozen=True)
class _OutputSaving(Activation):
    saves_output: ClassVar[bool] = True
    inplace_: bool = False

    @property
    def inplace(self) -> bool:
        return self.inplace_


@dataclass(frozen=True)
class _InputSaving(Activation):
    saves_inputs: ClassVar[tuple[int, ...]] = (0,)
    inplace_: bool = False

    @property
    def inplace(self) -> bool:
        return self.inplace_

    def extra_saved(self, inputs: Sequence[TensorSpec], output: TensorSpec, training: bool) -> tuple[SavedTensor, ...]:
        # the in-place variant overwrites the input its backward needs, so autograd keeps a copy
        return (SavedTensor("original input", output.numel, "act"),) if self.inplace_ else ()


@register_op
@dataclass(frozen=True)
class ReLU(_OutputSaving):
    kind: ClassVar[str] = "relu"


@register_op
@dataclass(frozen=True)
class ReLU6(_InputSaving):
    """hardtanh(0, 6): its backward reads the input, so the in-place form (MobileNetV2's ReLU6(inplace=True))
    keeps a copy of it. Measured on the H200: mobilenet_v2 training peaks ~1.45x what saving only the result
    would give, across batch sizes, optimizers and precisions (shared/calibration/h200)."""

    kind: ClassVar[str] = "relu6"


@register_op
@dataclass(frozen=True)
class Sigmoid(_OutputSaving):
    kind: ClassVar[str] = "sigmoid"
    flops_per_element: ClassVar[int] = 4


@register_op
@dataclass(frozen=True)
class Tanh(_OutputSaving):
    kind: ClassVar[str] = "tanh"
    flops_per_element: ClassVar[int] = 4


@register_op
@dataclass(frozen=True)
class GELU(_InputSaving):
    kind: ClassVar[str] = "gelu"
    flops_per_element: ClassVar[int] = 8
    approximate: str = "none"


@register_op
@dataclass(frozen=True)
class SiLU(_InputSaving):
    kind: ClassVar[str] = "silu"
    flops_per_element: ClassVar[int] = 5


@register_op
@dataclass(frozen=True)
class Hardswish(_InputSaving):
    kind: ClassVar[str] = "hardswish"
    flops_per_element: ClassVar[int] = 4


@register_op
@dataclass(frozen=True)
class Hardsigmoid(_InputSaving):
    kind: ClassVar[str] = "hardsigmoid"
    flops_per_element: ClassVar[int] = 3


@register_op
@dataclass(frozen=True)
class Softmax(_OutputSaving):
    """Over the last dimension. Autocast gives it dtype=float32 (fp32_set_opt_dtype); aten's softmax then
    runs the float16 kernel that writes float32 (half_to_float) on a float16 input, but converts a bfloat16
    input to float32 first (aten/src/ATen/native/SoftMax.cpp, softmax with a dtype)."""

    kind: ClassVar[str] = "softmax"
    amp: ClassVar[AmpPolicy] = "fp32_output"
    flops_per_element: ClassVar[int] = 5
