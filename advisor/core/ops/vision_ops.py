"""Ops the vision zoo needs beyond the common set: ConvNeXt's layer scale, stochastic depth, and Swin's
window machinery (zero padding, cyclic roll, window partition/merge, windowed attention with a relative
position bias table, patch merging).

What autograd keeps follows the PyTorch code torchvision calls: torchvision/ops/stochastic_depth.py,
torchvision/models/convnext.py (CNBlock), torchvision/models/swin_transformer.py
(shifted_window_attention, PatchMerging) and derivatives.yaml for mul, matmul, softmax, roll and cat.
Per-sample shapes: Swin keeps its activations channels-last, (H, W, C); windows are (windows, tokens, C).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from advisor.core.errors import ShapeError
from advisor.core.graph import TensorSpec
from advisor.core.ops.base import AmpPolicy, Op, SavedTensor, positive, require_rank, same_shape, single_input
from advisor.core.ops.registry import register_op


@register_op
@dataclass(frozen=True)
class LayerScale(Op):
    """x * gamma with a learned per-channel gamma (ConvNeXt: `self.layer_scale * self.block(input)`, gamma
    shaped (dim, 1, 1)). A new tensor. MulBackward keeps the factor the other one's gradient needs: gamma
    (a parameter) for the input's gradient and the input for gamma's gradient, so the input is saved; gamma's
    gradient is (grad * input) summed over the batch and space, an input-sized temporary in backward."""

    kind: ClassVar[str] = "layer_scale"
    saves_inputs: ClassVar[tuple[int, ...]] = (0,)
    dim: int = 0  # the per-sample dimension gamma runs along (0: channels of (C, H, W))

    def output_spec(self, inputs: Sequence[TensorSpec], layer: str) -> TensorSpec:
        x = single_input(inputs, layer)
        if not 0 <= self.dim < len(x.shape):
            raise ShapeError(layer, f"layer scale dim {self.dim} outside input shape {x.shape}")
        return x

    def param_count(self, inputs: Sequence[TensorSpec]) -> int:
        return inputs[0].shape[self.dim]

    def other_flops(self, inputs: Sequence[TensorSpec], output: TensorSpec) -> int:
        return output.numel

    def backward_workspace(self, inputs: Sequence[TensorSpec], output: TensorSpec) -> int:
        return output.numel


@register_op
@dataclass(frozen=True)
class StochasticDepth(Op):
    """torchvision.ops.stochastic_depth, mode "row": returns the input itself in eval or when p == 0;
    in training `input * noise` with one Bernoulli draw per sample (noise shaped (N, 1, 1, 1)). The product
    is a new tensor; MulBackward keeps only the noise (the input's factor), as the noise needs no gradient."""

    kind: ClassVar[str] = "stochastic_depth"
    p: float = 0.0

    def output_spec(self, inputs: Sequence[TensorSpec], layer: str) -> TensorSpec:
        if not 0.0 <= self.p <= 1.0:
            raise ShapeError(layer, f"stochastic depth probability must be in [0, 1], got {self.p}")
        return single_input(inputs, layer)

    def is_identity(self, training: bool) -> bool:
        return not training or self.p == 0.0

    def other_flops(self, inputs: Sequence[TensorSpec], output: TensorSpec) -> int:
        return output.numel

    def extra_saved(self, inputs: Sequence[TensorSpec], output: TensorSpec, training: bool) -> tuple[SavedTensor, ...]:
        return (SavedTensor("row noise", 1, "act"),) if training and self.p > 0 else ()


def _hwc(inputs: Sequence[TensorSpec], layer: str, what: str) -> TensorSpec:
    x = single_input(inputs, layer)
    require_rank(x, (3,), layer, f"{what} (channels-last H, W, C)")
    return x


@register_op
@dataclass(frozen=True)
class Pad(Op):
    """F.pad(x, (0, 0, 0, pad_w, 0, pad_h)) on (H, W, C). constant_pad_nd returns a new tensor even when
    every pad is zero (it clones), and its backward slices the gradient into a new tensor; nothing is
    saved."""

    kind: ClassVar[str] = "pad"
    pad_h: int = 0
    pad_w: int = 0

    def output_spec(self, inputs: Sequence[TensorSpec], layer: str) -> TensorSpec:
        x = _hwc(inputs, layer, "pad")
        if self.pad_h < 0 or self.pad_w < 0:
            raise ShapeError(layer, f"pads must not be negative, got {self.pad_h}, {self.pad_w}")
        h, w, c = x.shape
        return same_shape(x, (h + self.pad_h, w + self.pad_w, c))


@register_op
@dataclass(frozen=True)
class Roll(Op):
    """torch.roll over H and W (Swin's cyclic shift): a copy; backward rolls the gradient back into a new
    tensor; nothing is saved."""

    kind: ClassVar[str] = "roll"
    shift_h: int = 0
    shift_w: int = 0

    def output_spec(self, inputs: Sequence[TensorSpec], layer: str) -> TensorSpec:
        return _hwc(inputs, layer, "roll")


@register_op
@dataclass(frozen=True)
class WindowPartition(Op):
    """(H, W, C) -> (windows, window*window, C): view, permute(0, 1, 3, 2, 4, 5), reshape. The permuted
    view is not viewable as the target shape, so reshape copies; its backward reshapes and permutes the
    gradient back (views), so the gradient passes through without a new buffer."""

    kind: ClassVar[str] = "window_partition"
    grad_passthrough: ClassVar[bool] = True
    window: int = 7

    def output_spec(self, inputs: Sequence[TensorSpec], layer: str) -> TensorSpec:
        x = _hwc(inputs, layer, "window partition")
        positive(layer, window=self.window)
        h, w, c = x.shape
        if h % self.window or w % self.window:
            raise ShapeError(layer, f"window {self.window} must divide the padded size {h}x{w}")
        return same_shape(x, ((h // self.window) * (w // self.window), self.window * self.window, c))


@register_op
@dataclass(frozen=True)
class WindowMerge(Op):
    """(windows, window*window, C) -> (H, W, C), the reverse of WindowPartition: view, permute, reshape
    (a copy); the gradient passes back through views."""

    kind: ClassVar[str] = "window_merge"
    grad_passthrough: ClassVar[bool] = True
    height: int = 1
    width: int = 1

    def output_spec(self, inputs: Sequence[TensorSpec], layer: str) -> TensorSpec:
        x = single_input(inputs, layer)
        require_rank(x, (3,), layer, "window merge (windows, tokens, C)")
        if x.shape[0] * x.shape[1] != self.height * self.width:
            raise ShapeError(
                layer, f"{x.shape[0]} windows of {x.shape[1]} tokens do not tile {self.height}x{self.width}"
            )
        return same_shape(x, (self.height, self.width, x.shape[2]))


@register_op
@dataclass(frozen=True)
class WindowAttention(Op):
    """Swin's attention inside each window, from the packed qkv projection (windows, N, 3C) to the
    (windows, N, C) tensor `attn.matmul(v).transpose(1, 2).reshape(...)` that the output projection reads.

    torchvision computes it explicitly (no SDPA): q = q * scale (a new tensor), attn = q.matmul(k^T),
    attn + relative_position_bias, (+ the shift mask), softmax, F.dropout(p=0.0) (returns its input),
    attn.matmul(v). Autograd keeps the scaled q, k and v (views of the saved qkv), and the softmax result
    (kept by softmax and by the second matmul: one tensor). Under autocast softmax runs in fp32 and matmul
    keeps a half copy; modelled here as one tensor in the compute dtype.
    The relative position bias table ((2*window-1)^2 x heads) is this op's parameter; its gather into a
    (heads, N, N) bias is shared by the batch and ignored."""

    kind: ClassVar[str] = "window_attention"
    amp: ClassVar[AmpPolicy] = "lower"
    saves_inputs: ClassVar[tuple[int, ...]] = (0,)
    heads: int = 1
    window: int = 7
    shifted: bool = False

    def output_spec(self, inputs: Sequence[TensorSpec], layer: str) -> TensorSpec:
        x = single_input(inputs, layer)
        require_rank(x, (3,), layer, "window attention (windows, tokens, 3C)")
        positive(layer, heads=self.heads, window=self.window)
        if x.shape[1] != self.window * self.window:
            raise ShapeError(layer, f"windows of {x.shape[1]} tokens, expected {self.window}x{self.window}")
        if x.shape[2] % (3 * self.heads):
            raise ShapeError(layer, f"packed qkv width {x.shape[2]} is not divisible by 3 x {self.heads} heads")
        return same_shape(x, (x.shape[0], x.shape[1], x.shape[2] // 3))

    def _scores(self, inputs: Sequence[TensorSpec]) -> int:
        windows, tokens, _ = inputs[0].shape
        return windows * self.heads * tokens * tokens

    def param_count(self, inputs: Sequence[TensorSpec]) -> int:
        return (2 * self.window - 1) ** 2 * self.heads

    def forward_macs(self, inputs: Sequence[TensorSpec], output: TensorSpec) -> int:
        # q @ k^T and attn @ v: each windows x heads x N x N x head_dim = windows x N x N x C
        windows, tokens, channels = output.shape
        return 2 * windows * tokens * tokens * channels

    def other_flops(self, inputs: Sequence[TensorSpec], output: TensorSpec) -> int:
        # scale q; add the bias (and the mask when shifted); softmax
        return output.numel + self._scores(inputs) * (7 if self.shifted else 6)

    def backward_flops(self, inputs: Sequence[TensorSpec], output: TensorSpec, input_grad: bool) -> int:
        # dV, dP, dQ, dK: four matmuls, twice the forward's two
        return 4 * self.forward_macs(inputs, output) + 2 * self.other_flops(inputs, output)

    def extra_saved(self, inputs: Sequence[TensorSpec], output: TensorSpec, training: bool) -> tuple[SavedTensor, ...]:
        return (
            SavedTensor("scaled q", output.numel, "act"),
            SavedTensor("softmax probabilities", self._scores(inputs), "act"),
        )

    def backward_workspace(self, inputs: Sequence[TensorSpec], output: TensorSpec) -> int:
        return 2 * self._scores(inputs)  # gradients of the probabilities and of the scores


@register_op
@dataclass(frozen=True)
class PatchMerge(Op):
    """Swin's PatchMerging gather: x[0::2, 0::2], x[1::2, 0::2], x[0::2, 1::2], x[1::2, 1::2] concatenated
    on channels, (H, W, C) -> (H/2, W/2, 4C). The strided slices are views; torch.cat copies; nothing is
    saved. Backward scatters each gradient slice into an input-sized zero tensor."""

    kind: ClassVar[str] = "patch_merge"

    def output_spec(self, inputs: Sequence[TensorSpec], layer: str) -> TensorSpec:
        x = _hwc(inputs, layer, "patch merging")
        h, w, c = x.shape
        if h % 2 or w % 2:
            raise ShapeError(layer, f"patch merging needs an even size (pad first), got {h}x{w}")
        return same_shape(x, (h // 2, w // 2, 4 * c))
