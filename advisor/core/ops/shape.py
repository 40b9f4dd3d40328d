"""Ops that move or combine tensors: views (flatten, reshape, permute, slice), add, multiply, concat,
channel shuffle, and the learned tokens and positions that vision transformers add."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from advisor.core.errors import ShapeError
from advisor.core.graph import TensorSpec
from advisor.core.ops.base import Op, positive, product, same_shape, single_input
from advisor.core.ops.registry import register_op


@register_op
@dataclass(frozen=True)
class Flatten(Op):
    """Flattens per-sample dims from start_dim on (0 = everything but the batch, like nn.Flatten())."""

    kind: ClassVar[str] = "flatten"
    is_view: ClassVar[bool] = True
    grad_passthrough: ClassVar[bool] = True
    start_dim: int = 0

    def output_spec(self, inputs: Sequence[TensorSpec], layer: str) -> TensorSpec:
        x = single_input(inputs, layer)
        if not 0 <= self.start_dim < max(len(x.shape), 1):
            raise ShapeError(layer, f"start_dim {self.start_dim} outside input shape {x.shape}")
        return same_shape(x, (*x.shape[: self.start_dim], product(x.shape[self.start_dim :])))


@register_op
@dataclass(frozen=True)
class Reshape(Op):
    kind: ClassVar[str] = "reshape"
    is_view: ClassVar[bool] = True
    grad_passthrough: ClassVar[bool] = True
    shape: tuple[int, ...] = ()

    def output_spec(self, inputs: Sequence[TensorSpec], layer: str) -> TensorSpec:
        x = single_input(inputs, layer)
        if product(self.shape) != x.numel:
            raise ShapeError(layer, f"cannot reshape {x.shape} ({x.numel} elements) to {self.shape}")
        return same_shape(x, tuple(self.shape))


@register_op
@dataclass(frozen=True)
class Permute(Op):
    """A strided view; an op that needs contiguous memory afterwards copies (modelled where it does)."""

    kind: ClassVar[str] = "permute"
    is_view: ClassVar[bool] = True
    grad_passthrough: ClassVar[bool] = True
    dims: tuple[int, ...] = ()

    def output_spec(self, inputs: Sequence[TensorSpec], layer: str) -> TensorSpec:
        x = single_input(inputs, layer)
        if sorted(self.dims) != list(range(len(x.shape))):
            raise ShapeError(layer, f"permutation {self.dims} does not match input rank {len(x.shape)}")
        return same_shape(x, tuple(x.shape[d] for d in self.dims))


@register_op
@dataclass(frozen=True)
class Slice(Op):
    """x[start:stop] along a per-sample dim (a view). Backward scatters into a zeroed input-sized grad."""

    kind: ClassVar[str] = "slice"
    is_view: ClassVar[bool] = True
    dim: int = 0
    start: int = 0
    stop: int = 1
    keep_dim: bool = True

    def output_spec(self, inputs: Sequence[TensorSpec], layer: str) -> TensorSpec:
        x = single_input(inputs, layer)
        if not 0 <= self.dim < len(x.shape) or not 0 <= self.start < self.stop <= x.shape[self.dim]:
            raise ShapeError(layer, f"slice {self.start}:{self.stop} of dim {self.dim} outside {x.shape}")
        size = self.stop - self.start
        if not self.keep_dim and size == 1:
            return same_shape(x, x.shape[: self.dim] + x.shape[self.dim + 1 :])
        return same_shape(x, (*x.shape[: self.dim], size, *x.shape[self.dim + 1 :]))


def broadcast(a: tuple[int, ...], b: tuple[int, ...], layer: str) -> tuple[int, ...]:
    """NumPy/PyTorch broadcasting of two per-sample shapes."""
    rank = max(len(a), len(b))
    a = (1,) * (rank - len(a)) + a
    b = (1,) * (rank - len(b)) + b
    out = []
    for x, y in zip(a, b, strict=True):
        if x != y and 1 not in (x, y):
            raise ShapeError(layer, f"shapes {a} and {b} do not broadcast")
        out.append(max(x, y))
    return tuple(out)


@register_op
@dataclass(frozen=True)
class Add(Op):
    """Residual add. Backward hands the same gradient to both inputs; the in-place form (out += identity in
    torchvision's ResNet) writes into the first input's storage."""

    kind: ClassVar[str] = "add"
    grad_passthrough: ClassVar[bool] = True
    inplace_: bool = False

    @property
    def inplace(self) -> bool:
        return self.inplace_

    def output_spec(self, inputs: Sequence[TensorSpec], layer: str) -> TensorSpec:
        if len(inputs) != 2:
            raise ShapeError(layer, f"add takes two inputs, got {len(inputs)}")
        shape = broadcast(inputs[0].shape, inputs[1].shape, layer)
        return TensorSpec(shape, inputs[0].dtype, inputs[0].batched or inputs[1].batched)

    def other_flops(self, inputs: Sequence[TensorSpec], output: TensorSpec) -> int:
        return output.numel


@register_op
@dataclass(frozen=True)
class Mul(Op):
    """Elementwise product (squeeze-and-excitation's x * scale): the gradient of each factor reads the other,
    so a factor is kept only when the other needs a gradient (a constant mask's product keeps the mask)."""

    kind: ClassVar[str] = "mul"
    saves_inputs: ClassVar[tuple[int, ...]] = (0, 1)

    def inputs_saved(self, needs_grad: Sequence[bool]) -> tuple[int, ...]:
        return tuple(j for j in (0, 1) if needs_grad[1 - j])

    def output_spec(self, inputs: Sequence[TensorSpec], layer: str) -> TensorSpec:
        if len(inputs) != 2:
            raise ShapeError(layer, f"mul takes two inputs, got {len(inputs)}")
        return TensorSpec(broadcast(inputs[0].shape, inputs[1].shape, layer), inputs[0].dtype)

    def other_flops(self, inputs: Sequence[TensorSpec], output: TensorSpec) -> int:
        return output.numel


@register_op
@dataclass(frozen=True)
class Concat(Op):
    """torch.cat along a per-sample dim: a new tensor; backward hands out slices of the gradient."""

    kind: ClassVar[str] = "concat"
    grad_passthrough: ClassVar[bool] = True
    dim: int = 0

    def output_spec(self, inputs: Sequence[TensorSpec], layer: str) -> TensorSpec:
        if not inputs:
            raise ShapeError(layer, "concat needs at least one input")
        first = inputs[0].shape
        if not 0 <= self.dim < len(first):
            raise ShapeError(layer, f"concat dim {self.dim} outside input shape {first}")
        for spec in inputs[1:]:
            rest = spec.shape[: self.dim] + spec.shape[self.dim + 1 :]
            if len(spec.shape) != len(first) or rest != first[: self.dim] + first[self.dim + 1 :]:
                raise ShapeError(layer, f"cannot concatenate {spec.shape} with {first} along dim {self.dim}")
        total = sum(s.shape[self.dim] for s in inputs)
        return same_shape(inputs[0], (*first[: self.dim], total, *first[self.dim + 1 :]))


@register_op
@dataclass(frozen=True)
class ChannelShuffle(Op):
    """ShuffleNet's view-transpose-contiguous: one copy, nothing kept."""

    kind: ClassVar[str] = "channel_shuffle"
    groups: int = 2

    def output_spec(self, inputs: Sequence[TensorSpec], layer: str) -> TensorSpec:
        x = single_input(inputs, layer)
        positive(layer, groups=self.groups)
        if not x.shape or x.shape[0] % self.groups:
            raise ShapeError(layer, f"groups {self.groups} must divide the channels of {x.shape}")
        return x


@register_op
@dataclass(frozen=True)
class ClassToken(Op):
    """Prepends a learned token to a (tokens, hidden) sequence (ViT's class token): a new tensor."""

    kind: ClassVar[str] = "class_token"
    grad_passthrough: ClassVar[bool] = True

    def output_spec(self, inputs: Sequence[TensorSpec], layer: str) -> TensorSpec:
        x = single_input(inputs, layer)
        if len(x.shape) != 2:
            raise ShapeError(layer, f"class token expects (tokens, hidden), got {x.shape}")
        return same_shape(x, (x.shape[0] + 1, x.shape[1]))

    def param_count(self, inputs: Sequence[TensorSpec]) -> int:
        return inputs[0].shape[1]


@register_op
@dataclass(frozen=True)
class AddParameter(Op):
    """x + a learned tensor of x's shape (ViT's position embedding); the gradient passes straight through."""

    kind: ClassVar[str] = "add_parameter"
    grad_passthrough: ClassVar[bool] = True

    def output_spec(self, inputs: Sequence[TensorSpec], layer: str) -> TensorSpec:
        return single_input(inputs, layer)

    def param_count(self, inputs: Sequence[TensorSpec]) -> int:
        return inputs[0].numel

    def other_flops(self, inputs: Sequence[TensorSpec], output: TensorSpec) -> int:
        return output.numel
