"""Pooling: max (keeps int64 indices for backward), average, adaptive average."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from advisor.core.errors import ShapeError
from advisor.core.graph import TensorSpec
from advisor.core.ops.base import Op, SavedTensor, positive, require_rank, same_shape, single_input
from advisor.core.ops.registry import register_op


def pooled_size(n: int, kernel: int, stride: int, padding: int, dilation: int, ceil_mode: bool) -> int:
    """PyTorch's pooling_output_shape (aten/src/ATen/native/Pool.h), ceil mode included."""
    span = n + 2 * padding - dilation * (kernel - 1) - 1
    out = (span + (stride - 1 if ceil_mode else 0)) // stride + 1
    if ceil_mode and (out - 1) * stride >= n + padding:
        out -= 1  # the last window must start inside the input or its left padding
    return out


@dataclass(frozen=True)
class _Pool(Op):
    kernel: int = 2
    stride: int = 0  # 0 means "same as kernel", as in PyTorch
    padding: int = 0
    ceil_mode: bool = False
    dims: int = 2
    dilation: int = 1

    def output_spec(self, inputs: Sequence[TensorSpec], layer: str) -> TensorSpec:
        x = single_input(inputs, layer)
        require_rank(x, (self.dims + 1,), layer, f"{self.kind}{self.dims}d")
        stride = self.stride or self.kernel
        positive(layer, kernel=self.kernel, stride=stride)
        if self.padding > self.kernel // 2:
            raise ShapeError(layer, f"padding {self.padding} must be at most half the kernel {self.kernel}")
        spatial = x.shape[1:]
        if any(self.dilation * (self.kernel - 1) + 1 > n + 2 * self.padding for n in spatial):
            raise ShapeError(
                layer,
                f"kernel {self.kernel} larger than padded input {'x'.join(str(n + 2 * self.padding) for n in spatial)}",
            )
        out = tuple(pooled_size(n, self.kernel, stride, self.padding, self.dilation, self.ceil_mode) for n in spatial)
        return same_shape(x, (x.shape[0], *out))

    def other_flops(self, inputs: Sequence[TensorSpec], output: TensorSpec) -> int:
        return output.numel * int(self.kernel**self.dims)  # one compare or add per window element


@register_op
@dataclass(frozen=True)
class MaxPool(_Pool):
    kind: ClassVar[str] = "maxpool"
    saves_inputs: ClassVar[tuple[int, ...]] = (0,)

    def extra_saved(self, inputs: Sequence[TensorSpec], output: TensorSpec, training: bool) -> tuple[SavedTensor, ...]:
        return (SavedTensor("argmax indices", output.numel, "int64"),)  # max_pool2d_with_indices

    def forward_transients(
        self, inputs: Sequence[TensorSpec], output: TensorSpec, saving: bool
    ) -> tuple[SavedTensor, ...]:
        # Without autograd the indices still exist for a moment: off the CPU, F.max_pool2d dispatches to
        # max_pool2d_with_indices and keeps only its output (aten/src/ATen/native/MaxPooling.cpp, max_pool2d:
        # "with_indices defines CUDA dispatch"); the int64 indices, output-sized, are freed as it returns.
        return () if saving else self.extra_saved(inputs, output, False)


@register_op
@dataclass(frozen=True)
class AvgPool(_Pool):
    kind: ClassVar[str] = "avgpool"
    saves_inputs: ClassVar[tuple[int, ...]] = (0,)


@register_op
@dataclass(frozen=True)
class AdaptiveAvgPool(Op):
    """Output size fixed; windows adapt to the input. Backward keeps the input (for its shape, in practice
    a tensor shared with the layer before)."""

    kind: ClassVar[str] = "adaptive_avgpool"
    saves_inputs: ClassVar[tuple[int, ...]] = (0,)
    output_size: tuple[int, ...] = (1, 1)

    def output_spec(self, inputs: Sequence[TensorSpec], layer: str) -> TensorSpec:
        x = single_input(inputs, layer)
        require_rank(x, (len(self.output_size) + 1,), layer, "adaptive average pooling")
        for size in self.output_size:
            positive(layer, output_size=size)
        return same_shape(x, (x.shape[0], *self.output_size))

    def saved_inputs(self) -> tuple[int, ...]:
        # ATen turns a 1x1 adaptive average into mean(), whose backward needs only the shape
        return () if all(s == 1 for s in self.output_size) else (0,)

    def other_flops(self, inputs: Sequence[TensorSpec], output: TensorSpec) -> int:
        return inputs[0].numel
