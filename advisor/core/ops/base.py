"""The contract every layer kind fulfils: shape inference, counts, and how autograd treats its tensors.

All counts are per sample (shapes leave out the batch); the memory model multiplies by the batch.
MACs count multiply-adds of conv/linear/matmul only, as torchvision's published "GFLOPS" do;
FLOPs = 2 x MACs + the op's other arithmetic (elementwise, reductions), labelled as such everywhere.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar, Literal

from advisor.core.errors import ShapeError
from advisor.core.graph import TensorSpec

# Under autocast (torch.autocast on CUDA): "lower" ops run in the half dtype (matmul, conv), "fp32" ops are
# upcast (layer_norm, losses: a float32 copy of the input), "fp32_output" ops get a float32 result (softmax,
# log_softmax: autocast only sets their dtype argument; SoftMax.cpp reads float16 input as is but converts a
# bfloat16 one to float32 first), "promote" ops keep their input's dtype (aten/src/ATen/autocast_mode.cpp).
AmpPolicy = Literal["lower", "fp32", "fp32_output", "promote"]
# "act" is the dtype the op computes in; the others are fixed. "autocast_float32" is a float32 copy autocast
# makes of a half-precision tensor (none when the op computes in float32 already or autocast is off); the
# backward frees it as soon as the op's float32 gradient exists.
# "input" is the dtype of the op's first input as it arrives (a scalar multiple of it keeps that dtype).
SavedDtype = Literal["act", "float32", "int64", "bool", "autocast_float32", "input"]


@dataclass(frozen=True)
class SavedTensor:
    """Something an op keeps for backward besides its inputs and output (a mask, indices, a log-sum-exp)."""

    what: str
    numel: int  # per sample
    dtype: SavedDtype


@dataclass(frozen=True)
class Op:
    kind: ClassVar[str] = "op"
    amp: ClassVar[AmpPolicy] = "promote"
    saves_inputs: ClassVar[tuple[int, ...]] = ()  # inputs autograd keeps for backward
    saves_output: ClassVar[bool] = False  # e.g. relu, sigmoid and softmax differentiate through their result
    is_view: ClassVar[bool] = False  # output shares the input's storage (flatten, reshape, slicing)
    casts_weight: ClassVar[bool] = True  # under autocast a "lower" op computes with a half copy of its weights
    grad_passthrough: ClassVar[bool] = False  # backward hands the output's gradient on, no new buffer (add)
    float32_workspace: ClassVar[bool] = False  # the backward workspace is float32 whatever the op computes in
    input_dtype_workspace: ClassVar[bool] = False  # the forward workspace is in the input's dtype, not the op's

    def output_spec(self, inputs: Sequence[TensorSpec], layer: str) -> TensorSpec:
        raise NotImplementedError

    @property
    def inplace(self) -> bool:
        return False

    def saved_inputs(self) -> tuple[int, ...]:
        return self.saves_inputs

    def inputs_saved(self, needs_grad: Sequence[bool]) -> tuple[int, ...]:
        """The inputs autograd keeps, given which inputs need a gradient (autograd saves what the derivatives
        of the inputs that need one read: tools/autograd/derivatives.yaml)."""
        return self.saved_inputs()

    def saves_result(self) -> bool:
        return self.saves_output

    def is_identity(self, training: bool) -> bool:
        """True where the op returns its input unchanged (dropout in eval mode): no new tensor."""
        return False

    def for_dtype(self, dtype_bytes: int, autocast: bool) -> Op:
        """The op as CUDA runs it when it computes in dtype_bytes-wide floats, with or without autocast (the
        kernel choice, and which intermediate copies exist)."""
        return self

    def casts_freed_before_workspace(self) -> bool:
        """True where the op's input casts are consumed before its worst moment (an eager composite)."""
        return False

    def backward_workspace(self, inputs: Sequence[TensorSpec], output: TensorSpec) -> int:
        """Elements (per sample, in the op's dtype) of a gradient buffer that lives only inside backward."""
        return 0

    def forward_workspace(self, inputs: Sequence[TensorSpec], output: TensorSpec, saving: bool) -> int:
        """Elements (per sample, in the op's dtype) live for a moment inside the forward of a composite op
        beyond its output and what it saves (saving: autograd keeps its tensors; else they are transient)."""
        return 0

    def forward_transients(
        self, inputs: Sequence[TensorSpec], output: TensorSpec, saving: bool
    ) -> tuple[SavedTensor, ...]:
        """Tensors the kernel returns beside the output that the caller drops at once (not saved, dtype fixed)."""
        return ()

    def param_count(self, inputs: Sequence[TensorSpec]) -> int:
        return 0

    def buffer_count(self, inputs: Sequence[TensorSpec]) -> int:
        """Non-trainable float state stored with the model (BatchNorm running statistics)."""
        return 0

    def adapter_count(self, inputs: Sequence[TensorSpec]) -> int:
        """Parameters of the adapters that train on a frozen base (LoRA: core/llm/lora.py); none here."""
        return 0

    def adapter_tensors(self, inputs: Sequence[TensorSpec]) -> list[tuple[int, int]]:
        """(rows, cols) of each adapter tensor, for optimizers whose state depends on a tensor's shape."""
        return []

    def forward_macs(self, inputs: Sequence[TensorSpec], output: TensorSpec) -> int:
        return 0

    def other_flops(self, inputs: Sequence[TensorSpec], output: TensorSpec) -> int:
        """Forward arithmetic that is not a multiply-add of conv/linear/matmul (elementwise, reductions)."""
        return 0

    def forward_flops(self, inputs: Sequence[TensorSpec], output: TensorSpec) -> int:
        return 2 * self.forward_macs(inputs, output) + self.other_flops(inputs, output)

    def backward_flops(self, inputs: Sequence[TensorSpec], output: TensorSpec, input_grad: bool) -> int:
        """Gradient w.r.t. the weights costs one forward's MACs, w.r.t. the input another (skipped for the
        first layer, whose input needs no gradient); elementwise backward costs about twice the forward."""
        macs = self.forward_macs(inputs, output)
        weight_macs = macs if self.param_count(inputs) else 0
        input_macs = macs if input_grad else 0
        return 2 * (weight_macs + input_macs) + 2 * self.other_flops(inputs, output)

    def extra_saved(self, inputs: Sequence[TensorSpec], output: TensorSpec, training: bool) -> tuple[SavedTensor, ...]:
        return ()


def product(values: Sequence[int]) -> int:
    result = 1
    for v in values:
        result *= v
    return result


def single_input(inputs: Sequence[TensorSpec], layer: str) -> TensorSpec:
    if len(inputs) != 1:
        raise ShapeError(layer, f"takes one input, got {len(inputs)}")
    return inputs[0]


def require_rank(spec: TensorSpec, ranks: Sequence[int], layer: str, what: str) -> None:
    if len(spec.shape) not in ranks:
        want = " or ".join(str(r) for r in ranks)
        raise ShapeError(layer, f"{what} expects an input of rank {want} per sample, got shape {spec.shape}")


def positive(layer: str, **fields: int) -> None:
    for name, value in fields.items():
        if value <= 0:
            raise ShapeError(layer, f"{name} must be positive, got {value}")


def same_shape(spec: TensorSpec, shape: tuple[int, ...]) -> TensorSpec:
    return TensorSpec(shape, spec.dtype, spec.batched)
