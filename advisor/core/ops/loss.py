"""Cross-entropy loss head over class logits (classes,), token logits (seq, vocab), or per-pixel logits
(classes, H, W) as segmentation nets produce them.

F.cross_entropy = log_softmax + nll_loss (aten/src/ATen/native/LossNLL.cpp cross_entropy_loss). log_softmax is
called with the logits' own dtype, so under autocast (which only sets a dtype where none is given) it runs
in the logits' precision and keeps its output; nll_loss is on autocast's float32 list, so half-precision
log-probabilities are copied to float32 and nll_loss keeps that copy too. Backward first materialises the
float32 gradient of the log-probabilities (nll_loss_backward), drops the copy, and then computes the
gradient of the logits. Targets are int64, one per row.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from advisor.core.errors import ShapeError
from advisor.core.graph import TensorSpec
from advisor.core.ops.base import AmpPolicy, Op, SavedTensor, single_input
from advisor.core.ops.registry import register_op


@register_op
@dataclass(frozen=True)
class CrossEntropy(Op):
    kind: ClassVar[str] = "cross_entropy"
    amp: ClassVar[AmpPolicy] = "promote"  # log_softmax computes in the logits' dtype
    float32_workspace: ClassVar[bool] = True  # nll_loss's gradient: it runs in float32 under autocast
    # Language-model losses upcast the logits to fp32 first in every precision (HF's ForCausalLMLoss:
    # `logits = logits.float()`), so half-precision training keeps fp32 log-probabilities.
    upcast: bool = False
    # transformers up to 4.45 (TransformersRelease.V4_45): LlamaForCausalLM.forward rebinds `logits =
    # logits.float()` and returns them in its output, so the caller keeps the fp32 copy (not the 16-bit
    # logits, which nothing references once cast), and the loss reads `shift_logits = logits[..., :-1,
    # :].contiguous()`, an fp32 copy of all but the last position, alive through log_softmax. Backward
    # makes one more fp32 tensor of the logits' size (slice_backward's zeros) after log_softmax's backward has
    # freed two: it raises neither the peak nor the cache.
    output_keeps_upcast: bool = False

    def output_spec(self, inputs: Sequence[TensorSpec], layer: str) -> TensorSpec:
        x = single_input(inputs, layer)
        if not x.shape or x.dtype != "float":
            raise ShapeError(layer, f"cross-entropy expects float logits, got {x.dtype} of shape {x.shape}")
        return TensorSpec((), "float", batched=False)

    def target_count(self, inputs: Sequence[TensorSpec]) -> int:
        shape = inputs[0].shape
        classes = shape[0] if len(shape) >= 3 else shape[-1]
        return inputs[0].numel // classes

    def other_flops(self, inputs: Sequence[TensorSpec], output: TensorSpec) -> int:
        return 4 * inputs[0].numel  # max, exp, sum, log

    def extra_saved(self, inputs: Sequence[TensorSpec], output: TensorSpec, training: bool) -> tuple[SavedTensor, ...]:
        return (
            SavedTensor("log-probabilities", inputs[0].numel, "act"),
            SavedTensor("nll_loss's float32 copy of them", inputs[0].numel, "autocast_float32"),
        )

    def forward_transients(
        self, inputs: Sequence[TensorSpec], output: TensorSpec, saving: bool
    ) -> tuple[SavedTensor, ...]:
        if not self.output_keeps_upcast:
            return ()
        shifted = inputs[0].numel - inputs[0].shape[-1]  # (seq - 1) x vocab of the (seq, vocab) logits
        return (SavedTensor("contiguous shifted copy of the fp32 logits", shifted, "float32"),)

    def backward_workspace(self, inputs: Sequence[TensorSpec], output: TensorSpec) -> int:
        return inputs[0].numel  # gradient of the log-probabilities
