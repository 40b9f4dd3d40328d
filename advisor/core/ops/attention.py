"""Scaled dot-product attention (multi-head and grouped-query) between the q/k/v projections and the
output projection.

Memory is modelled for the fused kernels PyTorch's SDPA dispatches to on CUDA (FlashAttention for half
precision, memory-efficient attention for fp32): backward keeps q, k, v, the kernel's output and a
per-row log-sum-exp in fp32, never the seq x seq score matrix. kernel="math" models the unfused path
(softmax probabilities and, with dropout, their mask and dropped copy are kept).
kernel="eager" models transformers' eager_attention_forward, the path of models without SDPA support
(Gemma 2 for its logit soft-capping, gpt-oss for its sinks): with P = heads x seq_q x seq_k, half-precision
scores are scaled (and soft-capped: divide, tanh, multiply), the fp32 mask added (an fp32 result), softmax
taken in fp32 and cast back to half for the AV matmul.
The output here is the (seq, heads*head_dim) contiguous copy the output projection reads; the kernel's
own (heads, seq, head_dim) output is a second tensor kept for backward.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import ClassVar, Literal

from advisor.core.errors import ShapeError
from advisor.core.graph import TensorSpec
from advisor.core.ops.base import AmpPolicy, Op, SavedTensor, positive, product, same_shape
from advisor.core.ops.registry import register_op


def _round_up(count: int, multiple: int) -> int:
    return -(-count // multiple) * multiple


# What CUDA's fused SDPA kernels keep and take, shared by the layer graph's Attention and the traced
# FusedSDPA. `rows` is heads (and any other leading dims) per sample; flash runs half-precision calls without
# a mask, the memory-efficient kernel the rest (sdp_utils.cpp: flash needs fp16/bf16 and refuses masks).
def fused_log_sum_exp(rows: int, seq_q: int, efficient: bool) -> SavedTensor:
    """Autograd keeps a float32 log-sum-exp per query row (derivatives.yaml, _scaled_dot_product_flash_attention
    and _efficient_attention), the memory-efficient kernel's rows padded to 32 (attention.cu)."""
    return SavedTensor("log-sum-exp", rows * (_round_up(seq_q, 32) if efficient else seq_q), "float32")


def fused_backward_float32(rows: int, seq_q: int, head_dim: int, efficient: bool) -> int:
    """Float32 elements the backward takes from the allocator: flash's softmax_d and dq_accum (flash_api.cpp
    mha_bwd: seq_q rounded up to 128, head_dim to 32); the memory-efficient kernel's delta, one per row
    (attention_backward.cu)."""
    if efficient:
        return rows * seq_q
    return rows * _round_up(seq_q, 128) * (_round_up(head_dim, 32) + 1)


@register_op
@dataclass(frozen=True)
class Attention(Op):
    kind: ClassVar[str] = "attention"
    amp: ClassVar[AmpPolicy] = "lower"
    heads: int = 1
    kv_heads: int = 0  # 0 = same as heads (multi-head); fewer = grouped-query attention
    causal: bool = False
    dropout: float = 0.0
    kernel: Literal["fused", "math", "eager"] = "fused"
    softcap: bool = False  # eager only: tanh soft-capping of the scores (Gemma 2's attn_logit_softcapping)
    scores_held: bool = False  # eager only: BloomAttention's locals keep the half scores and their fp32 sum
    sinks: bool = False  # gpt-oss: one learned logit per head joins every softmax (a parameter per head)
    v_head_dim: int = 0  # 0 = the q/k head dim; DeepSeek MLA: values narrower than queries and keys
    shared_rope_dim: int = 0  # MLA: k is heads x nope dims plus one rotary key of this width shared by all heads
    # fused only: SDPA given an explicit mask (a sliding window shorter than the sequence). CUDA converts the
    # boolean mask to an additive bias in the query's dtype (attention.cpp convert_boolean_attn_mask:
    # zeros_like, masked_fill_ of its logical_not) and flash refuses masks, so the memory-efficient kernel
    # runs and saves that (seq_q x seq_k per sample) bias for backward
    mask_bias: bool = False
    # fused only: q comes token-major from a projection's view and transpose (transformers' decoders), so the
    # kernel's output (allocated in q's layout: flash's empty_like, the efficient kernel's (B, S, H, D)) is
    # already what attn_output.transpose(1, 2).contiguous() returns: one tensor, kept for backward, and the
    # output projection reads it in place (transformers' decoders, and GPT-2's and BERT's sdpa paths).
    token_major: bool = False
    enable_gqa: bool = False  # K/V heads reach SDPA un-repeated with enable_gqa (transformers' sdpa_attention)
    full_precision: bool = False  # in fp32 (for_dtype): eager makes no half copies; fused runs memory-efficient
    # fused in a runtime's own kernel, not SDPA: vLLM's FlashAttention, FlexAttention and Triton backends take
    # grouped KV heads in fp32 too (FlexAttention or Triton where FlashAttention needs half), so no math path
    own_kernel: bool = False
    # fused only: transformers up to 4.45 (LlamaSdpaAttention.forward and its copies) rebinds `key_states =
    # repeat_kv(key_states, self.num_key_value_groups)`, and the values alike, before SDPA, which keeps those
    # heads-wide copies for backward instead of the grouped k and v (TransformersRelease.V4_45)
    repeats_kv: bool = False

    def saved_inputs(self) -> tuple[int, ...]:
        if self._repeated:
            return (0,)  # q; the repeated k and v are extra_saved
        return (0, 1, 2)  # q, k, v (or the one packed qkv tensor they are views of)

    @property
    def _repeated(self) -> bool:
        return self.repeats_kv and self.kernel == "fused" and self._kv_heads < self.heads

    def _repeated_kv(self, inputs: Sequence[TensorSpec]) -> int:
        """Elements of repeat_kv's keys and values per sample: every head's, seq_k long."""
        hd = self.head_dim(inputs)
        return inputs[-1].shape[0] * self.heads * (hd + (self.v_head_dim or hd)) if self._repeated else 0

    def saves_result(self) -> bool:
        return self.kernel == "fused" and self.token_major

    @property
    def _kv_heads(self) -> int:
        return self.kv_heads or self.heads

    def head_dim(self, inputs: Sequence[TensorSpec]) -> int:
        if len(inputs) == 1:
            return inputs[0].shape[-1] // (self.heads + 2 * self._kv_heads)
        return inputs[0].shape[-1] // self.heads

    def output_spec(self, inputs: Sequence[TensorSpec], layer: str) -> TensorSpec:
        positive(layer, heads=self.heads, kv_heads=self._kv_heads)
        if len(inputs) not in (1, 3) or any(len(s.shape) != 2 for s in inputs):
            raise ShapeError(layer, "attention takes q, k, v (or one packed qkv) shaped (seq, features)")
        if self.heads % self._kv_heads:
            raise ShapeError(layer, f"heads {self.heads} must be a multiple of kv_heads {self._kv_heads}")
        packed = self.heads + 2 * self._kv_heads
        width = inputs[0].shape[-1]
        if len(inputs) == 1 and width % packed:
            raise ShapeError(layer, f"packed qkv width {width} is not divisible by {packed} heads")
        if len(inputs) == 3:
            hd = self.head_dim(inputs)
            k_width = self._kv_heads * (hd - self.shared_rope_dim) + self.shared_rope_dim
            v_width = self._kv_heads * (self.v_head_dim or hd)
            if width % self.heads or (inputs[1].shape[-1], inputs[2].shape[-1]) != (k_width, v_width):
                raise ShapeError(
                    layer,
                    f"q width {width} and k/v widths {[s.shape[-1] for s in inputs[1:]]} "
                    f"do not match {self.heads} heads and {self._kv_heads} kv heads",
                )
        seq = inputs[0].shape[0]
        return same_shape(inputs[0], (seq, self.heads * (self.v_head_dim or self.head_dim(inputs))))

    def param_count(self, inputs: Sequence[TensorSpec]) -> int:
        return self.heads if self.sinks else 0

    def forward_macs(self, inputs: Sequence[TensorSpec], output: TensorSpec) -> int:
        # QK^T and AV: 2 x heads x seq_q x seq_k x head_dim (causal kernels skip about half; counted in full,
        # as torchvision and FlopCounterMode count them)
        seq_q, seq_k = inputs[0].shape[0], inputs[-1].shape[0]
        hd = self.head_dim(inputs)
        return self.heads * seq_q * seq_k * (hd + (self.v_head_dim or hd))

    def other_flops(self, inputs: Sequence[TensorSpec], output: TensorSpec) -> int:
        seq_q, seq_k = inputs[0].shape[0], inputs[-1].shape[0]
        return 5 * self.heads * seq_q * seq_k  # scale, mask, softmax

    def backward_flops(self, inputs: Sequence[TensorSpec], output: TensorSpec, input_grad: bool) -> int:
        # dQ, dK, dV, dP plus recomputing P in the fused kernel: 2.5x the forward's matmuls
        return 5 * self.forward_macs(inputs, output) + 2 * self.other_flops(inputs, output)

    def extra_saved(self, inputs: Sequence[TensorSpec], output: TensorSpec, training: bool) -> tuple[SavedTensor, ...]:
        seq_q, seq_k = inputs[0].shape[0], inputs[-1].shape[0]
        kernel_output = SavedTensor("kernel output", output.numel, "act")
        if self.kernel == "fused":
            bias = (SavedTensor("additive mask", seq_q * seq_k, "act"),) if self.mask_bias else ()
            own = () if self.token_major else (kernel_output,)  # token-major: the output itself (saves_result)
            repeated = [SavedTensor("repeat_kv's keys and values", self._repeated_kv(inputs), "act")] * self._repeated
            return (*own, fused_log_sum_exp(self.heads, seq_q, self._efficient), *bias, *repeated)
        probs = self.heads * seq_q * seq_k
        if self.kernel == "eager":  # softmax keeps its fp32 result, the AV matmul the half copy, tanh its result
            eager = [SavedTensor("fp32 softmax", probs, "float32")]
            eager += [] if self.full_precision else [SavedTensor("half probabilities", probs, "act")]  # .to() no-op
            return tuple(eager + [SavedTensor("soft-capped scores", probs, "act")] * self.softcap)
        saved = [kernel_output, SavedTensor("softmax probabilities", probs, "act")]
        if training and self.dropout > 0:
            saved += [SavedTensor("dropout mask", probs, "bool"), SavedTensor("dropped probabilities", probs, "act")]
        return tuple(saved)

    def forward_workspace(self, inputs: Sequence[TensorSpec], output: TensorSpec, saving: bool) -> int:
        """Eager, in half elements: the half scores beside their fp32 masked sum (3P) while the saved tensors
        are kept; without saving, the fp32 masked scores beside the fp32 softmax (4P), plus the keys and
        values repeat_kv copies out for grouped-query attention (attention sinks: see _sink_workspace)."""
        if self.kernel == "math" and not saving:
            return self._math_workspace(inputs, output)
        if self.kernel != "eager":  # inference frees repeat_kv's copies after the kernel; training saves them
            repeated = 0 if saving else self._repeated_kv(inputs)
            return self._mask_workspace(inputs[0].shape[0] * inputs[-1].shape[0], saving) + repeated
        probs = self.heads * inputs[0].shape[0] * inputs[-1].shape[0]
        if self.full_precision:
            return self._fp32_eager_workspace(inputs, output, saving)
        if saving:
            return 3 * probs
        # the worst moment comes before the output exists; repeat_kv copies k from the fp32 rotary output (2
        # half elements each) and v from the half projection
        seq, width = inputs[0].shape[0], self.heads * self.head_dim(inputs)
        repeated = 3 * seq * width if self._kv_heads < self.heads else 0
        if self.scores_held:  # scores (1P) and masked sum (2P) stay beside the fp32 softmax and its half copy;
            # BloomAttention's reshape of the head-transposed q, k, v views copies each (locals to its end)
            return 6 * probs + 3 * seq * width - output.numel
        if self.sinks:
            return self._sink_workspace(probs, inputs[-1].shape[0]) + repeated - output.numel
        return 4 * probs + repeated - output.numel

    def _fp32_eager_workspace(self, inputs: Sequence[TensorSpec], output: TensorSpec, saving: bool) -> int:
        """The same moments in fp32, one element per tensor: the casts to half are no-ops. Training: the
        scores beside their masked sum (2P). Inference: masked sum and softmax (2P; BLOOM's held scores 3P,
        gpt-oss's P + 2P' with the sink column) and repeat_kv's K and V copies, before the output exists."""
        seq_q, seq_k = inputs[0].shape[0], inputs[-1].shape[0]
        probs, width = self.heads * seq_q * seq_k, self.heads * self.head_dim(inputs)
        if saving:
            return 2 * probs
        if self.scores_held:
            return 3 * probs + 3 * seq_q * width - output.numel
        repeated = 2 * seq_q * width if self._kv_heads < self.heads else 0
        scores = probs + 2 * (probs // seq_k * (seq_k + 1)) if self.sinks else 2 * probs
        return scores + repeated - output.numel

    def _math_workspace(self, inputs: Sequence[TensorSpec], output: TensorSpec) -> int:
        """attention.cpp _scaled_dot_product_attention_math, at its softmax, in the op's elements: the scores
        and their softmax (2P), K and V repeated to every head and the scaled q (3 x seq x heads x head_dim),
        the causal mask it builds (a byte a cell: a quarter element); its output does not exist yet."""
        seq_q, seq_k = inputs[0].shape[0], inputs[-1].shape[0]
        width = self.heads * self.head_dim(inputs)
        return 2 * self.heads * seq_q * seq_k + 3 * seq_q * width + seq_q * seq_k // 4 - output.numel

    def _mask_workspace(self, cells: int, saving: bool) -> int:
        """A masked fused call: the boolean logical_not (a byte a cell, half a half element) beside the
        additive bias, which training saves and inference frees after the kernel."""
        if not self.mask_bias:
            return 0
        return cells // 2 + (0 if saving else cells)

    def for_dtype(self, dtype_bytes: int, autocast: bool) -> Attention:
        """sdp_utils.cpp: flash needs half precision and the memory-efficient kernel refuses enable_gqa, so
        fp32 grouped-query attention falls to the math path (which repeat_interleaves K and V)."""
        if dtype_bytes != 4:
            return self
        if self.own_kernel:
            return replace(self, full_precision=True)
        if self.kernel == "fused" and self.enable_gqa and self._kv_heads < self.heads and not self.mask_bias:
            return replace(self, kernel="math", token_major=False)
        return replace(self, full_precision=True)

    @property
    def _efficient(self) -> bool:
        """The fused call runs the memory-efficient kernel: given a mask, or in fp32 (flash needs half)."""
        return self.mask_bias or self.full_precision

    def casts_freed_before_workspace(self) -> bool:
        """Eager attention's first matmul consumes autocast's half copies of q and k; by the softmax, its
        worst moment, they are gone (unless saved for backward)."""
        return self.kernel == "eager"

    def _sink_workspace(self, probs: int, seq_k: int) -> int:
        """gpt-oss's eager_attention_forward (modeling_gpt_oss.py) appends the sink column to the fp32 masked
        scores (P' = P x (seq_k + 1) / seq_k), subtracts the row max and takes the fp32 softmax; when the
        probabilities are cast to half, the masked scores (2P), the shifted logits and the softmax (2P' each)
        and the half copy (P) are all still referenced."""
        widened = probs // seq_k * (seq_k + 1)
        return 2 * probs + 4 * widened + probs

    def backward_workspace(self, inputs: Sequence[TensorSpec], output: TensorSpec) -> int:
        if self.kernel == "eager":  # the fp32 gradients of the softmax's input and output
            return 4 * self.heads * inputs[0].shape[0] * inputs[-1].shape[0]
        if self.kernel == "math":
            return 2 * self.heads * inputs[0].shape[0] * inputs[-1].shape[0]  # grad of scores and probs
        # fused: float32, so two elements of the half-precision op each (one in fp32, where it is efficient)
        elements = fused_backward_float32(self.heads, inputs[0].shape[0], self.head_dim(inputs), self._efficient)
        return elements * (1 if self.full_precision else 2)


@register_op
@dataclass(frozen=True)
class FusedSDPA(Op):
    """F.scaled_dot_product_attention as a traced model calls it: q (heads, seq_q, head_dim), k and v
    (kv_heads, seq_k, ...) per sample, an optional additive or boolean mask, run by CUDA's fused kernels
    (flash, or memory-efficient where a mask is given: sdp_utils.cpp). Autograd keeps q, k, v, the mask, the
    output and the kernel's log-sum-exp (fused_log_sum_exp), never the seq_q x seq_k scores; its backward
    takes the float32 workspaces of fused_backward_float32.
    """

    kind: ClassVar[str] = "sdpa"
    amp: ClassVar[AmpPolicy] = "lower"
    saves_output: ClassVar[bool] = True
    float32_workspace: ClassVar[bool] = True
    casts_weight: ClassVar[bool] = False
    input_count: int = 3

    def saved_inputs(self) -> tuple[int, ...]:
        return tuple(range(self.input_count))

    @staticmethod
    def _dims(inputs: Sequence[TensorSpec]) -> tuple[int, int, int, int]:
        """(rows: heads and any other leading dims, seq_q, seq_k, head_dim) of the query."""
        q, k = inputs[0].shape, inputs[1].shape
        return product(q[:-2]), q[-2], k[-2], q[-1]

    def output_spec(self, inputs: Sequence[TensorSpec], layer: str) -> TensorSpec:
        if len(inputs) != self.input_count or len(inputs) not in (3, 4) or any(len(s.shape) < 3 for s in inputs[:3]):
            raise ShapeError(layer, "scaled_dot_product_attention takes q, k, v (and a mask) of rank 3 or more")
        q, k, v = (s.shape for s in inputs[:3])
        if q[-1] != k[-1] or k[-2] != v[-2]:
            raise ShapeError(layer, f"q {q}, k {k} and v {v} do not fit together")
        return same_shape(inputs[0], (*q[:-1], v[-1]))

    def forward_macs(self, inputs: Sequence[TensorSpec], output: TensorSpec) -> int:
        rows, seq_q, seq_k, head_dim = self._dims(inputs)
        return rows * seq_q * seq_k * (head_dim + output.shape[-1])  # QK^T and PV

    def other_flops(self, inputs: Sequence[TensorSpec], output: TensorSpec) -> int:
        rows, seq_q, seq_k, _ = self._dims(inputs)
        return 5 * rows * seq_q * seq_k  # scale, mask, softmax

    def backward_flops(self, inputs: Sequence[TensorSpec], output: TensorSpec, input_grad: bool) -> int:
        return 5 * self.forward_macs(inputs, output) + 2 * self.other_flops(inputs, output)  # as Attention

    def extra_saved(self, inputs: Sequence[TensorSpec], output: TensorSpec, training: bool) -> tuple[SavedTensor, ...]:
        rows, seq_q, _, _ = self._dims(inputs)
        return (fused_log_sum_exp(rows, seq_q, efficient=self.input_count == 4),)

    def backward_workspace(self, inputs: Sequence[TensorSpec], output: TensorSpec) -> int:
        rows, seq_q, _, head_dim = self._dims(inputs)
        return fused_backward_float32(rows, seq_q, head_dim, efficient=self.input_count == 4)


@register_op
@dataclass(frozen=True)
class Rotary(Op):
    """Rotary position embedding (q * cos + rotate_half(q) * sin): a new tensor; backward needs only the
    cos/sin tables, which every sample shares. The tables are in the hidden states' dtype (LlamaRotaryEmbedding
    returns cos.to(x.dtype), x the fp32 embeddings under autocast), so the half q and k promote to fp32: the
    output is fp32 under autocast, and the attention casts it back (the promotion's intermediates, q * cos
    and rotate_half(q) * sin, stand in for the replay's input cast)."""

    kind: ClassVar[str] = "rotary"
    amp: ClassVar[AmpPolicy] = "fp32"

    def output_spec(self, inputs: Sequence[TensorSpec], layer: str) -> TensorSpec:
        if len(inputs) != 1 or len(inputs[0].shape) != 2:
            raise ShapeError(layer, "rotary embedding takes one (seq, features) input")
        return inputs[0]

    def other_flops(self, inputs: Sequence[TensorSpec], output: TensorSpec) -> int:
        return 3 * output.numel
