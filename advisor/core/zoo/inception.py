"""GoogLeNet and Inception v3 as torchvision builds them (torchvision/models/googlenet.py, inception.py).

BasicConv2d is conv (no bias) -> BatchNorm(eps=0.001) -> F.relu(inplace=True); the functional pools
(F.avg_pool2d / F.max_pool2d in the Inception blocks) are named like the branch they feed.
GoogLeNet is built without its auxiliary heads (aux_logits=False, as torchvision publishes its counts);
Inception v3 keeps AuxLogits (its published parameter count includes them). The aux head only runs in
training mode; here it is a side branch after Mixed_6e whose logits stay referenced to the end of the step,
as the training loop keeps them for the aux loss. In eval torchvision skips it (its ~5.6 M MACs, 0.1%, are
counted here).
"""

from __future__ import annotations

from collections.abc import Callable

from advisor.core.graph import Graph, GraphBuilder
from advisor.core.ops.activation import ReLU
from advisor.core.ops.conv import Conv
from advisor.core.ops.dropout import Dropout
from advisor.core.ops.io import Input
from advisor.core.ops.linear import Linear
from advisor.core.ops.norm import BatchNorm
from advisor.core.ops.pool import AdaptiveAvgPool, AvgPool, MaxPool
from advisor.core.ops.shape import Concat, Flatten
from advisor.core.zoo.common import pool_flatten

Size = int | tuple[int, int]


def _basic_conv(b: GraphBuilder, x: int, name: str, out: int, kernel: Size, stride: int = 1, padding: Size = 0) -> int:
    x = b.add(Conv(out, kernel, stride, padding, bias=False), [x], f"{name}.conv")
    x = b.add(BatchNorm(), [x], f"{name}.bn")
    return b.add(ReLU(inplace_=True), [x], f"{name}.relu")


def _googlenet_inception(b: GraphBuilder, x: int, name: str, widths: tuple[int, ...]) -> int:
    """googlenet.Inception; branch3 uses a 3x3 conv (a known deviation from the paper torchvision keeps)."""
    c1, c3r, c3, c5r, c5, pool_proj = widths
    with b.block(name):
        b1 = _basic_conv(b, x, "branch1", c1, 1)
        b2 = _basic_conv(b, x, "branch2.0", c3r, 1)
        b2 = _basic_conv(b, b2, "branch2.1", c3, 3, padding=1)
        b3 = _basic_conv(b, x, "branch3.0", c5r, 1)
        b3 = _basic_conv(b, b3, "branch3.1", c5, 3, padding=1)
        b4 = b.add(MaxPool(3, 1, 1, ceil_mode=True), [x], "branch4.0")
        b4 = _basic_conv(b, b4, "branch4.1", pool_proj, 1)
        return b.add(Concat(0), [b1, b2, b3, b4], "cat")


_GOOGLENET: list[tuple[str, tuple[int, ...]]] = [
    ("inception3a", (64, 96, 128, 16, 32, 32)),
    ("inception3b", (128, 128, 192, 32, 96, 64)),
    ("maxpool3", (3, 2)),
    ("inception4a", (192, 96, 208, 16, 48, 64)),
    ("inception4b", (160, 112, 224, 24, 64, 64)),
    ("inception4c", (128, 128, 256, 24, 64, 64)),
    ("inception4d", (112, 144, 288, 32, 64, 64)),
    ("inception4e", (256, 160, 320, 32, 128, 128)),
    ("maxpool4", (2, 2)),
    ("inception5a", (256, 160, 320, 32, 128, 128)),
    ("inception5b", (384, 192, 384, 48, 128, 128)),
]


def googlenet() -> Graph:
    b = GraphBuilder("googlenet")
    x = b.add(Input((3, 224, 224)), [], "input")
    x = _basic_conv(b, x, "conv1", 64, 7, 2, 3)
    x = b.add(MaxPool(3, 2, ceil_mode=True), [x], "maxpool1")
    x = _basic_conv(b, x, "conv2", 64, 1)
    x = _basic_conv(b, x, "conv3", 192, 3, padding=1)
    x = b.add(MaxPool(3, 2, ceil_mode=True), [x], "maxpool2")
    for name, widths in _GOOGLENET:
        if name.startswith("maxpool"):
            x = b.add(MaxPool(widths[0], widths[1], ceil_mode=True), [x], name)
        else:
            x = _googlenet_inception(b, x, name, widths)
    x = pool_flatten(b, x)
    x = b.add(Dropout(0.2), [x], "dropout")
    b.add(Linear(1000), [x], "fc")
    return b.build()


def _avg_pool_branch(b: GraphBuilder, x: int, out: int) -> int:
    """branch_pool: F.avg_pool2d(x, kernel_size=3, stride=1, padding=1) then a 1x1 BasicConv2d."""
    p = b.add(AvgPool(3, 1, 1), [x], "avg_pool2d")
    return _basic_conv(b, p, "branch_pool", out, 1)


def _inception_a(b: GraphBuilder, x: int, pool_features: int) -> int:
    b1 = _basic_conv(b, x, "branch1x1", 64, 1)
    b5 = _basic_conv(b, x, "branch5x5_1", 48, 1)
    b5 = _basic_conv(b, b5, "branch5x5_2", 64, 5, padding=2)
    b3 = _basic_conv(b, x, "branch3x3dbl_1", 64, 1)
    b3 = _basic_conv(b, b3, "branch3x3dbl_2", 96, 3, padding=1)
    b3 = _basic_conv(b, b3, "branch3x3dbl_3", 96, 3, padding=1)
    bp = _avg_pool_branch(b, x, pool_features)
    return b.add(Concat(0), [b1, b5, b3, bp], "cat")


def _inception_b(b: GraphBuilder, x: int) -> int:
    b3 = _basic_conv(b, x, "branch3x3", 384, 3, 2)
    bd = _basic_conv(b, x, "branch3x3dbl_1", 64, 1)
    bd = _basic_conv(b, bd, "branch3x3dbl_2", 96, 3, padding=1)
    bd = _basic_conv(b, bd, "branch3x3dbl_3", 96, 3, 2)
    bp = b.add(MaxPool(3, 2), [x], "max_pool2d")
    return b.add(Concat(0), [b3, bd, bp], "cat")


def _seven(b: GraphBuilder, x: int, name: str, out: int, wide: bool) -> int:
    """A 1x7 (wide) or 7x1 BasicConv2d with 'same' padding."""
    kernel, padding = ((1, 7), (0, 3)) if wide else ((7, 1), (3, 0))
    return _basic_conv(b, x, name, out, kernel, padding=padding)


def _inception_c(b: GraphBuilder, x: int, c7: int) -> int:
    b1 = _basic_conv(b, x, "branch1x1", 192, 1)
    b7 = _basic_conv(b, x, "branch7x7_1", c7, 1)
    b7 = _seven(b, b7, "branch7x7_2", c7, True)
    b7 = _seven(b, b7, "branch7x7_3", 192, False)
    bd = _basic_conv(b, x, "branch7x7dbl_1", c7, 1)
    for i, (width, wide) in enumerate(((c7, False), (c7, True), (c7, False), (192, True)), start=2):
        bd = _seven(b, bd, f"branch7x7dbl_{i}", width, wide)
    bp = _avg_pool_branch(b, x, 192)
    return b.add(Concat(0), [b1, b7, bd, bp], "cat")


def _inception_d(b: GraphBuilder, x: int) -> int:
    b3 = _basic_conv(b, x, "branch3x3_1", 192, 1)
    b3 = _basic_conv(b, b3, "branch3x3_2", 320, 3, 2)
    b7 = _basic_conv(b, x, "branch7x7x3_1", 192, 1)
    b7 = _seven(b, b7, "branch7x7x3_2", 192, True)
    b7 = _seven(b, b7, "branch7x7x3_3", 192, False)
    b7 = _basic_conv(b, b7, "branch7x7x3_4", 192, 3, 2)
    bp = b.add(MaxPool(3, 2), [x], "max_pool2d")
    return b.add(Concat(0), [b3, b7, bp], "cat")


def _split_3x3(b: GraphBuilder, x: int, prefix: str, a: str, c: str) -> int:
    """InceptionE's parallel 1x3 and 3x1 convs on one input, concatenated."""
    left = _basic_conv(b, x, f"{prefix}{a}", 384, (1, 3), padding=(0, 1))
    right = _basic_conv(b, x, f"{prefix}{c}", 384, (3, 1), padding=(1, 0))
    return b.add(Concat(0), [left, right], f"{prefix}cat")


def _inception_e(b: GraphBuilder, x: int) -> int:
    b1 = _basic_conv(b, x, "branch1x1", 320, 1)
    b3 = _basic_conv(b, x, "branch3x3_1", 384, 1)
    b3 = _split_3x3(b, b3, "branch3x3_", "2a", "2b")
    bd = _basic_conv(b, x, "branch3x3dbl_1", 448, 1)
    bd = _basic_conv(b, bd, "branch3x3dbl_2", 384, 3, padding=1)
    bd = _split_3x3(b, bd, "branch3x3dbl_", "3a", "3b")
    bp = _avg_pool_branch(b, x, 192)
    return b.add(Concat(0), [b1, b3, bd, bp], "cat")


def _aux_logits(b: GraphBuilder, x: int) -> None:
    """InceptionAux: F.avg_pool2d(5, stride 3) -> conv0 1x1 -> conv1 5x5 -> adaptive pool -> fc."""
    with b.block("AuxLogits"):
        a = b.add(AvgPool(5, 3), [x], "avg_pool2d")
        a = _basic_conv(b, a, "conv0", 128, 1)
        a = _basic_conv(b, a, "conv1", 768, 5)
        a = b.add(AdaptiveAvgPool((1, 1)), [a], "adaptive_avg_pool2d")
        a = b.add(Flatten(), [a], "flatten")
        b.add(Linear(1000), [a], "fc")


def _inception_v3_stem(b: GraphBuilder, x: int) -> int:
    x = _basic_conv(b, x, "Conv2d_1a_3x3", 32, 3, 2)
    x = _basic_conv(b, x, "Conv2d_2a_3x3", 32, 3)
    x = _basic_conv(b, x, "Conv2d_2b_3x3", 64, 3, padding=1)
    x = b.add(MaxPool(3, 2), [x], "maxpool1")
    x = _basic_conv(b, x, "Conv2d_3b_1x1", 80, 1)
    x = _basic_conv(b, x, "Conv2d_4a_3x3", 192, 3)
    return b.add(MaxPool(3, 2), [x], "maxpool2")


def inception_v3() -> Graph:
    b = GraphBuilder("inception_v3")
    x = _inception_v3_stem(b, b.add(Input((3, 299, 299)), [], "input"))
    mixed: list[tuple[str, Callable[[int], int]]] = [
        ("Mixed_5b", lambda v: _inception_a(b, v, 32)),
        ("Mixed_5c", lambda v: _inception_a(b, v, 64)),
        ("Mixed_5d", lambda v: _inception_a(b, v, 64)),
        ("Mixed_6a", lambda v: _inception_b(b, v)),
        ("Mixed_6b", lambda v: _inception_c(b, v, 128)),
        ("Mixed_6c", lambda v: _inception_c(b, v, 160)),
        ("Mixed_6d", lambda v: _inception_c(b, v, 160)),
        ("Mixed_6e", lambda v: _inception_c(b, v, 192)),
        ("Mixed_7a", lambda v: _inception_d(b, v)),
        ("Mixed_7b", lambda v: _inception_e(b, v)),
        ("Mixed_7c", lambda v: _inception_e(b, v)),
    ]
    for name, build in mixed:
        if name == "Mixed_7a":
            _aux_logits(b, x)
        with b.block(name):
            x = build(x)
    x = b.add(AdaptiveAvgPool((1, 1)), [x], "avgpool")
    x = b.add(Dropout(0.5), [x], "dropout")
    x = b.add(Flatten(), [x], "flatten")
    b.add(Linear(1000), [x], "fc")
    return b.build()


MODELS: dict[str, Callable[[], Graph]] = {"googlenet": googlenet, "inception_v3": inception_v3}
