"""Building blocks the vision zoo shares: torchvision's Conv2dNormActivation, squeeze-and-excitation,
_make_divisible and the global-pool head, each naming its layers as torchvision's module paths do."""

from __future__ import annotations

from typing import Literal

from advisor.core.graph import GraphBuilder
from advisor.core.ops.activation import Hardsigmoid, Hardswish, ReLU, ReLU6, Sigmoid, SiLU
from advisor.core.ops.base import Op
from advisor.core.ops.conv import Conv
from advisor.core.ops.norm import BatchNorm
from advisor.core.ops.pool import AdaptiveAvgPool
from advisor.core.ops.shape import Flatten, Mul

ActKind = Literal["relu", "relu6", "hardswish", "hardsigmoid", "silu", "sigmoid"]


def activation(kind: ActKind, inplace: bool) -> Op:
    """The activation module; inplace as torchvision constructs it (ReLU(inplace=True) and friends)."""
    if kind == "relu":
        return ReLU(inplace_=inplace)
    if kind == "relu6":
        return ReLU6(inplace_=inplace)
    if kind == "hardswish":
        return Hardswish(inplace_=inplace)
    if kind == "hardsigmoid":
        return Hardsigmoid(inplace_=inplace)
    if kind == "silu":
        return SiLU(inplace_=inplace)
    return Sigmoid(inplace_=inplace)


def make_divisible(v: float, divisor: int, min_value: int | None = None) -> int:
    """torchvision.models._utils._make_divisible: round to a multiple of divisor, never below 90% of v."""
    new_v = max(min_value or divisor, int(v + divisor / 2) // divisor * divisor)
    if new_v < 0.9 * v:
        new_v += divisor
    return new_v


def conv_norm_act(
    b: GraphBuilder,
    x: int,
    name: str,
    out: int,
    kernel: int = 3,
    stride: int = 1,
    groups: int = 1,
    act: ActKind | None = "relu",
) -> int:
    """torchvision.ops.Conv2dNormActivation: conv (no bias, padding (k-1)//2) -> BatchNorm -> activation;
    ConvNormActivation's inplace defaults to True, so the activation is built inplace=True.
    Layers are `name.0`, `name.1`, `name.2`."""
    conv = Conv(out, kernel, stride, padding=(kernel - 1) // 2, groups=groups, bias=False)
    x = b.add(conv, [x], f"{name}.0")
    x = b.add(BatchNorm(), [x], f"{name}.1")
    if act is not None:
        x = b.add(activation(act, True), [x], f"{name}.2")
    return x


def squeeze_excitation(
    b: GraphBuilder,
    x: int,
    name: str,
    squeeze: int,
    act: ActKind = "relu",
    act_inplace: bool = False,
    scale_act: ActKind = "sigmoid",
) -> int:
    """torchvision.ops.SqueezeExcitation: scale = scale_act(fc2(act(fc1(avgpool(x))))); return scale * x.
    The 1x1 convs carry biases; the module builds activation() and scale_activation() without inplace."""
    channels = b.spec(x).shape[0]
    s = b.add(AdaptiveAvgPool((1, 1)), [x], f"{name}.avgpool")
    s = b.add(Conv(squeeze, 1), [s], f"{name}.fc1")
    s = b.add(activation(act, act_inplace), [s], f"{name}.activation")
    s = b.add(Conv(channels, 1), [s], f"{name}.fc2")
    s = b.add(activation(scale_act, False), [s], f"{name}.scale_activation")
    return b.add(Mul(), [s, x], f"{name}.mul")


def pool_flatten(b: GraphBuilder, x: int, pool: str = "avgpool") -> int:
    """Global average pool to 1x1, then torch.flatten(x, 1) (a view)."""
    x = b.add(AdaptiveAvgPool((1, 1)), [x], pool)
    return b.add(Flatten(), [x], "flatten")
