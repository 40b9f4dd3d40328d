"""A layer the registry has no formulas for, described by what was observed when the model was imported.

Importers (a traced nn.Module, an ONNX node) meet ops the core does not model: a custom module, an
einsum, a scatter. Rather than fail, they record the op's output shape, its parameter and buffer counts
and, where they can count them, its multiply-adds. Memory is accounted conservatively: autograd is
assumed to keep the op's inputs for backward (the common case: mul, matmul, norms, most activations),
so an unknown op never makes an estimate smaller than the truth by forgetting a saved tensor.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from advisor.core.errors import ShapeError
from advisor.core.graph import DtypeKind, TensorSpec
from advisor.core.ops.base import AmpPolicy, Op
from advisor.core.ops.registry import register_op


@register_op
@dataclass(frozen=True)
class Opaque(Op):
    """An op known only by its observed output. `op_name` says what it was (aten/ONNX/module name)."""

    kind: ClassVar[str] = "opaque"
    op_name: str = "unknown"
    shape: tuple[int, ...] = (1,)  # per sample (or whole, when batched is False)
    dtype: DtypeKind = "float"
    batched: bool = True
    params: int = 0
    buffers: int = 0
    macs: int = 0  # per sample
    flops_per_element: int = 1
    keeps_inputs: bool = True
    input_count: int = 0  # saved_inputs() is asked without the inputs, so the importer records how many
    # an operand the graph does not show (a float32 parameter or buffer, as BART's final_logits_bias) takes
    # part: type promotion makes the result float32 under autocast, whatever the shown inputs' dtype
    fp32_operand: bool = False
    kept_inputs: tuple[int, ...] = ()  # the inputs autograd keeps when keeps_inputs is False (where's condition)
    keeps_result: bool = False  # backward reads the output, not the inputs (exp, tanh, sigmoid, sqrt...)

    def output_spec(self, inputs: Sequence[TensorSpec], layer: str) -> TensorSpec:
        if not self.shape or any(d <= 0 for d in self.shape):
            raise ShapeError(layer, f"{self.op_name}: output shape must be positive sizes, got {self.shape}")
        if self.input_count != len(inputs):
            raise ShapeError(layer, f"{self.op_name}: made for {self.input_count} inputs, got {len(inputs)}")
        if self.params < 0 or self.buffers < 0 or self.macs < 0:
            raise ShapeError(layer, f"{self.op_name}: counts must not be negative")
        return TensorSpec(self.shape, self.dtype, self.batched)

    def saved_inputs(self) -> tuple[int, ...]:
        return tuple(range(self.input_count)) if self.keeps_inputs else self.kept_inputs

    def saves_result(self) -> bool:
        return self.keeps_result

    def param_count(self, inputs: Sequence[TensorSpec]) -> int:
        return self.params

    def buffer_count(self, inputs: Sequence[TensorSpec]) -> int:
        return self.buffers

    def forward_macs(self, inputs: Sequence[TensorSpec], output: TensorSpec) -> int:
        return self.macs

    def other_flops(self, inputs: Sequence[TensorSpec], output: TensorSpec) -> int:
        return self.flops_per_element * output.numel


@register_op
@dataclass(frozen=True)
class OpaqueView(Opaque):
    """An op that returns a view of its input (a transpose, a chunk, an expand): no new storage, nothing kept,
    and backward hands the gradient on."""

    kind: ClassVar[str] = "opaque_view"
    is_view: ClassVar[bool] = True
    grad_passthrough: ClassVar[bool] = True
    keeps_inputs: bool = False
    flops_per_element: int = 0


@register_op
@dataclass(frozen=True)
class OpaqueMatmul(Opaque):
    """An unmapped call on autocast's lower-precision list (matmul, bmm, einsum, baddbmm: autocast_mode.cpp):
    under autocast its float inputs are cast to the half dtype and its result is half."""

    kind: ClassVar[str] = "opaque_matmul"
    amp: ClassVar[AmpPolicy] = "lower"
