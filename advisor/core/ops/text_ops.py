"""Ops that transformer language models need beyond the shared registry.

GELUTanhComposite is HuggingFace's NewGELUActivation (ACT2FN["gelu_new"], GPT-2's activation_function):
transformers/activations.py writes it as the Python formula

    0.5 * input * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (input + 0.044715 * torch.pow(input, 3.0))))

and not as the fused F.gelu(approximate="tanh") (that one is GELUTanh, ACT2FN["gelu_pytorch_tanh"]). Eight
eager ops run, and autograd keeps what each backward formula reads (tools/autograd/derivatives.yaml):
- `0.5 * input`: mul by a wrapped scalar keeps only the scalar; its result a = 0.5*x is a new tensor;
- `torch.pow(input, 3.0)`: pow.Tensor_Scalar keeps `self`, the input x;
- `0.044715 * p`, `input + ...`, `sqrt(2/pi) * ...`, `1.0 + ...`: scalar mul/add keep nothing;
- `torch.tanh(...)`: keeps its result t;
- `a * (1.0 + t)`: mul.Tensor keeps both factors, a and b = 1 + t.
So besides the input, backward holds three tensors of the input's size: t, a and b.

Under CUDA autocast pow is on the fp32 list (aten/src/ATen/autocast_mode.cpp: KERNEL_CUDA2(pow,
Tensor_Scalar, fp32)): it runs on an fp32 copy of x and keeps that copy; the fp32 result then promotes
everything after it (x + fp32 -> fp32, tanh, 1 + t), and the final a (half) * b (fp32) is fp32 too. Hence
amp = "fp32": the simulator makes and saves the fp32 copy of the input, and the output is fp32, which the next
Linear casts back. a = 0.5 * x stays in x's dtype (half under autocast).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import ClassVar

from advisor.core.graph import TensorSpec
from advisor.core.ops.base import AmpPolicy, Op, SavedTensor, single_input
from advisor.core.ops.registry import register_op


@register_op
@dataclass(frozen=True)
class GELUTanhComposite(Op):
    kind: ClassVar[str] = "gelu_tanh_composite"
    amp: ClassVar[AmpPolicy] = "fp32"  # pow is on autocast's fp32 list; the rest follows by type promotion
    saves_inputs: ClassVar[tuple[int, ...]] = (0,)  # pow keeps x
    full_precision: bool = False  # no autocast: no fp32 copy of x, a and b are one element each

    def for_dtype(self, dtype_bytes: int, autocast: bool) -> GELUTanhComposite:
        return replace(self, full_precision=not autocast)  # under autocast pow alone upcasts (fp32 either way)

    def output_spec(self, inputs: Sequence[TensorSpec], layer: str) -> TensorSpec:
        return single_input(inputs, layer)

    def other_flops(self, inputs: Sequence[TensorSpec], output: TensorSpec) -> int:
        # pow (2 multiplies), 3 scalar multiplies, 2 adds, tanh (counted 1), the final multiply
        return 9 * output.numel

    def extra_saved(self, inputs: Sequence[TensorSpec], output: TensorSpec, training: bool) -> tuple[SavedTensor, ...]:
        n = output.numel
        return (
            SavedTensor("tanh result t", n, "act"),
            SavedTensor("0.5 * x", n, "input"),
            SavedTensor("1 + t", n, "act"),
        )

    input_dtype_workspace: ClassVar[bool] = True

    def forward_workspace(self, inputs: Sequence[TensorSpec], output: TensorSpec, saving: bool) -> int:
        """Inference, at the final multiply: a = 0.5*x (in x's dtype, half under autocast) and b = 1 + t are live
        beside x and the output. Under autocast b (float32) stands where pow's float32 copy of x was (the replay
        counts that copy as this op's input cast until the op ends), so a alone: one element of x's dtype per
        output element. Without autocast there is no copy: a and b, two elements. Training counts t, a and b
        as saved tensors instead."""
        if saving:
            return 0
        return 2 * output.numel if self.full_precision else output.numel

    def backward_workspace(self, inputs: Sequence[TensorSpec], output: TensorSpec) -> int:
        # Autograd runs the eight backward nodes in reverse creation order, so d(0.5*x) (made first by the
        # final mul's backward) waits until the tanh/pow branch is done. At the worst point, inside
        # pow_backward (grad * (3 * x.pow(2))): d(0.5*x), d(pow output), x.pow(2)*3 and the product are
        # live next to the input's gradient buffer: four buffers of the input's size. The output gradient is
        # already freed by then, but the simulator keeps it for the whole node, so three are added here.
        return 3 * output.numel


@register_op
@dataclass(frozen=True)
class ScaleBy(Op):
    """`x * constant` or `x / constant` with a Python number (Granite's `logits / logits_scaling`, Cohere's
    `logits * logit_scale`): a new tensor in x's dtype. mul/div by a wrapped scalar keep only the scalar for
    backward (tools/autograd/derivatives.yaml), so nothing of the size of x is saved."""

    kind: ClassVar[str] = "scale_by"

    def output_spec(self, inputs: Sequence[TensorSpec], layer: str) -> TensorSpec:
        return single_input(inputs, layer)

    def other_flops(self, inputs: Sequence[TensorSpec], output: TensorSpec) -> int:
        return output.numel


@register_op
@dataclass(frozen=True)
class QuickGELU(Op):
    """transformers' QuickGELUActivation (CLIP's quick_gelu): `input * torch.sigmoid(1.702 * input)`. The
    scalar product keeps nothing, sigmoid keeps its result s and the final mul both factors, x and s
    (derivatives.yaml), so backward holds one tensor of the input's size besides the input. None of the three
    ops is on an autocast list: all run in the input's dtype."""

    kind: ClassVar[str] = "quick_gelu"
    saves_inputs: ClassVar[tuple[int, ...]] = (0,)

    def output_spec(self, inputs: Sequence[TensorSpec], layer: str) -> TensorSpec:
        return single_input(inputs, layer)

    def other_flops(self, inputs: Sequence[TensorSpec], output: TensorSpec) -> int:
        return 6 * output.numel  # scale, sigmoid (counted 4), product

    def extra_saved(self, inputs: Sequence[TensorSpec], output: TensorSpec, training: bool) -> tuple[SavedTensor, ...]:
        return (SavedTensor("sigmoid(1.702 x)", output.numel, "act"),)

    def forward_workspace(self, inputs: Sequence[TensorSpec], output: TensorSpec, saving: bool) -> int:
        return 0 if saving else output.numel  # without autograd s is still live when the product is made
