"""Convolutions: Conv1d/2d/3d with stride, padding, dilation and groups, and ConvTranspose2d.

Output size per PyTorch's docs: floor((in + 2p - d(k-1) - 1) / s) + 1; transposed:
(in - 1)s - 2p + d(k-1) + output_padding + 1.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from advisor.core.errors import ShapeError
from advisor.core.graph import TensorSpec
from advisor.core.ops.base import AmpPolicy, Op, positive, product, require_rank, same_shape, single_input
from advisor.core.ops.registry import register_op


def _tuple(value: int | tuple[int, ...], dims: int) -> tuple[int, ...]:
    return (value,) * dims if isinstance(value, int) else tuple(value)


@register_op
@dataclass(frozen=True)
class Conv(Op):
    kind: ClassVar[str] = "conv"
    amp: ClassVar[AmpPolicy] = "lower"
    saves_inputs: ClassVar[tuple[int, ...]] = (0,)  # convolution_backward needs the input and the weight
    out_channels: int = 1
    kernel: int | tuple[int, ...] = 1
    stride: int | tuple[int, ...] = 1
    padding: int | tuple[int, ...] = 0
    dilation: int | tuple[int, ...] = 1
    groups: int = 1
    bias: bool = True
    dims: int = 2

    def _check(self, x: TensorSpec, layer: str) -> None:
        require_rank(x, (self.dims + 1,), layer, f"conv{self.dims}d")
        positive(layer, out_channels=self.out_channels, groups=self.groups)
        for name, values in (("kernel", self.kernel), ("stride", self.stride), ("dilation", self.dilation)):
            for v in _tuple(values, self.dims):
                positive(layer, **{name: v})
        if any(p < 0 for p in _tuple(self.padding, self.dims)):
            raise ShapeError(layer, f"padding must not be negative, got {self.padding}")
        if x.shape[0] % self.groups or self.out_channels % self.groups:
            raise ShapeError(
                layer, f"groups {self.groups} must divide in_channels {x.shape[0]} and out_channels {self.out_channels}"
            )

    def output_spec(self, inputs: Sequence[TensorSpec], layer: str) -> TensorSpec:
        x = single_input(inputs, layer)
        self._check(x, layer)
        k, s = _tuple(self.kernel, self.dims), _tuple(self.stride, self.dims)
        p, d = _tuple(self.padding, self.dims), _tuple(self.dilation, self.dims)
        spatial = x.shape[1:]
        padded = tuple(n + 2 * pad for n, pad in zip(spatial, p, strict=True))
        reach = tuple(dil * (kk - 1) + 1 for kk, dil in zip(k, d, strict=True))
        if any(r > n for r, n in zip(reach, padded, strict=True)):
            raise ShapeError(
                layer, f"kernel {'x'.join(map(str, reach))} larger than padded input {'x'.join(map(str, padded))}"
            )
        out = tuple((n - r) // st + 1 for n, r, st in zip(padded, reach, s, strict=True))
        return same_shape(x, (self.out_channels, *out))

    def param_count(self, inputs: Sequence[TensorSpec]) -> int:
        in_channels = inputs[0].shape[0]
        weights = self.out_channels * (in_channels // self.groups) * product(_tuple(self.kernel, self.dims))
        return weights + (self.out_channels if self.bias else 0)

    def forward_macs(self, inputs: Sequence[TensorSpec], output: TensorSpec) -> int:
        # each output element sums (in_channels / groups) x kernel-volume products
        in_per_group = inputs[0].shape[0] // self.groups
        return output.numel * in_per_group * product(_tuple(self.kernel, self.dims))


@register_op
@dataclass(frozen=True)
class ConvTranspose(Op):
    kind: ClassVar[str] = "conv_transpose"
    amp: ClassVar[AmpPolicy] = "lower"
    saves_inputs: ClassVar[tuple[int, ...]] = (0,)
    out_channels: int = 1
    kernel: int | tuple[int, ...] = 1
    stride: int | tuple[int, ...] = 1
    padding: int | tuple[int, ...] = 0
    output_padding: int | tuple[int, ...] = 0
    dilation: int | tuple[int, ...] = 1
    groups: int = 1
    bias: bool = True
    dims: int = 2

    def output_spec(self, inputs: Sequence[TensorSpec], layer: str) -> TensorSpec:
        x = single_input(inputs, layer)
        Conv(
            self.out_channels, self.kernel, self.stride, self.padding, self.dilation, self.groups, self.bias, self.dims
        )._check(x, layer)
        k, s = _tuple(self.kernel, self.dims), _tuple(self.stride, self.dims)
        p, d = _tuple(self.padding, self.dims), _tuple(self.dilation, self.dims)
        op = _tuple(self.output_padding, self.dims)
        if any(o >= max(st, dl) for o, st, dl in zip(op, s, d, strict=True)):
            raise ShapeError(layer, f"output_padding {self.output_padding} must be smaller than stride or dilation")
        out = tuple(
            (n - 1) * st - 2 * pp + dl * (kk - 1) + o + 1
            for n, st, pp, dl, kk, o in zip(x.shape[1:], s, p, d, k, op, strict=True)
        )
        return same_shape(x, (self.out_channels, *out))

    def param_count(self, inputs: Sequence[TensorSpec]) -> int:
        in_channels = inputs[0].shape[0]
        weights = in_channels * (self.out_channels // self.groups) * product(_tuple(self.kernel, self.dims))
        return weights + (self.out_channels if self.bias else 0)

    def forward_macs(self, inputs: Sequence[TensorSpec], output: TensorSpec) -> int:
        # every input element is scattered into (out_channels / groups) x kernel-volume outputs
        out_per_group = self.out_channels // self.groups
        return inputs[0].numel * out_per_group * product(_tuple(self.kernel, self.dims))
