"""Mobile and efficient CNNs as torchvision builds them: MobileNet v2/v3, EfficientNet-B0, ShuffleNet v2
and RegNetY-400MF (torchvision/models/mobilenetv2.py, mobilenetv3.py, efficientnet.py, shufflenetv2.py,
regnet.py, torchvision/ops/misc.py).

Conv2dNormActivation builds its activation with inplace=True (ReLU6, Hardswish, SiLU, ReLU);
SqueezeExcitation builds activation() and scale_activation() without it, except EfficientNet, which passes
partial(nn.SiLU, inplace=True). MobileNet v3 and EfficientNet add the residual in place (`result += input`),
MobileNet v2 and RegNet out of place (`x + self.conv(x)`). The classifiers' Dropout(inplace=True) of v3 and
EfficientNet is modelled as an ordinary dropout (a 1280-wide vector: negligible).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from advisor.core.graph import Graph, GraphBuilder
from advisor.core.ops.activation import Hardswish, ReLU
from advisor.core.ops.conv import Conv
from advisor.core.ops.dropout import Dropout
from advisor.core.ops.io import Input
from advisor.core.ops.linear import Linear
from advisor.core.ops.norm import BatchNorm
from advisor.core.ops.pool import MaxPool
from advisor.core.ops.shape import Add, ChannelShuffle, Concat, Slice
from advisor.core.ops.vision_ops import StochasticDepth
from advisor.core.zoo.common import ActKind, conv_norm_act, make_divisible, pool_flatten, squeeze_excitation

# MobileNetV2: expand ratio t, output channels c, repeats n, first stride s
_V2_SETTING = [
    (1, 16, 1, 1),
    (6, 24, 2, 2),
    (6, 32, 3, 2),
    (6, 64, 4, 2),
    (6, 96, 3, 1),
    (6, 160, 3, 2),
    (6, 320, 1, 1),
]


def _v2_block(b: GraphBuilder, x: int, out: int, stride: int, expand: int) -> int:
    inp = b.spec(x).shape[0]
    hidden = round(inp * expand)
    h, index = x, 0
    if expand != 1:
        h = conv_norm_act(b, h, "conv.0", hidden, 1, act="relu6")
        index = 1
    h = conv_norm_act(b, h, f"conv.{index}", hidden, 3, stride, groups=hidden, act="relu6")
    h = b.add(Conv(out, 1, bias=False), [h], f"conv.{index + 1}")
    h = b.add(BatchNorm(), [h], f"conv.{index + 2}")
    if stride == 1 and inp == out:
        h = b.add(Add(), [x, h], "add")  # return x + self.conv(x)
    return h


def mobilenet_v2() -> Graph:
    b = GraphBuilder("mobilenet_v2")
    x = b.add(Input((3, 224, 224)), [], "input")
    x = conv_norm_act(b, x, "features.0", 32, 3, 2, act="relu6")
    index = 1
    for t, c, n, s in _V2_SETTING:
        for i in range(n):
            with b.block(f"features.{index}"):
                x = _v2_block(b, x, c, s if i == 0 else 1, t)
            index += 1
    x = conv_norm_act(b, x, "features.18", 1280, 1, act="relu6")
    x = pool_flatten(b, x, "adaptive_avg_pool2d")
    x = b.add(Dropout(0.2), [x], "classifier.0")
    b.add(Linear(1000), [x], "classifier.1")
    return b.build()


# MobileNetV3 bneck_conf: input, kernel, expanded, out, use_se, activation, stride
_V3Conf = tuple[int, int, int, int, bool, str, int]
_V3_LARGE: list[_V3Conf] = [
    (16, 3, 16, 16, False, "RE", 1),
    (16, 3, 64, 24, False, "RE", 2),
    (24, 3, 72, 24, False, "RE", 1),
    (24, 5, 72, 40, True, "RE", 2),
    (40, 5, 120, 40, True, "RE", 1),
    (40, 5, 120, 40, True, "RE", 1),
    (40, 3, 240, 80, False, "HS", 2),
    (80, 3, 200, 80, False, "HS", 1),
    (80, 3, 184, 80, False, "HS", 1),
    (80, 3, 184, 80, False, "HS", 1),
    (80, 3, 480, 112, True, "HS", 1),
    (112, 3, 672, 112, True, "HS", 1),
    (112, 5, 672, 160, True, "HS", 2),
    (160, 5, 960, 160, True, "HS", 1),
    (160, 5, 960, 160, True, "HS", 1),
]
_V3_SMALL: list[_V3Conf] = [
    (16, 3, 16, 16, True, "RE", 2),
    (16, 3, 72, 24, False, "RE", 2),
    (24, 3, 88, 24, False, "RE", 1),
    (24, 5, 96, 40, True, "HS", 2),
    (40, 5, 240, 40, True, "HS", 1),
    (40, 5, 240, 40, True, "HS", 1),
    (40, 5, 120, 48, True, "HS", 1),
    (48, 5, 144, 48, True, "HS", 1),
    (48, 5, 288, 96, True, "HS", 2),
    (96, 5, 576, 96, True, "HS", 1),
    (96, 5, 576, 96, True, "HS", 1),
]


def _v3_block(b: GraphBuilder, x: int, conf: _V3Conf) -> int:
    inp, kernel, expanded, out, use_se, act_name, stride = conf
    act: ActKind = "hardswish" if act_name == "HS" else "relu"
    h, index = x, 0
    if expanded != inp:
        h = conv_norm_act(b, h, "block.0", expanded, 1, act=act)
        index = 1
    h = conv_norm_act(b, h, f"block.{index}", expanded, kernel, stride, groups=expanded, act=act)
    if use_se:
        index += 1
        h = squeeze_excitation(
            b, h, f"block.{index}", make_divisible(expanded // 4, 8), "relu", scale_act="hardsigmoid"
        )
    h = conv_norm_act(b, h, f"block.{index + 1}", out, 1, act=None)
    if stride == 1 and inp == out:
        h = b.add(Add(inplace_=True), [h, x], "add")  # result += input
    return h


def _mobilenet_v3(name: str, setting: list[_V3Conf], last_channel: int) -> Graph:
    b = GraphBuilder(name)
    x = b.add(Input((3, 224, 224)), [], "input")
    x = conv_norm_act(b, x, "features.0", 16, 3, 2, act="hardswish")
    for index, conf in enumerate(setting, start=1):
        with b.block(f"features.{index}"):
            x = _v3_block(b, x, conf)
    last_in = setting[-1][3]
    x = conv_norm_act(b, x, f"features.{len(setting) + 1}", 6 * last_in, 1, act="hardswish")
    x = pool_flatten(b, x)
    x = b.add(Linear(last_channel), [x], "classifier.0")
    x = b.add(Hardswish(inplace_=True), [x], "classifier.1")
    x = b.add(Dropout(0.2), [x], "classifier.2")
    b.add(Linear(1000), [x], "classifier.3")
    return b.build()


def mobilenet_v3_large() -> Graph:
    return _mobilenet_v3("mobilenet_v3_large", _V3_LARGE, 1280)


def mobilenet_v3_small() -> Graph:
    return _mobilenet_v3("mobilenet_v3_small", _V3_SMALL, 1024)


# EfficientNet-B0 MBConvConfig: expand_ratio, kernel, stride, input, out, layers
_B0_SETTING = [
    (1, 3, 1, 32, 16, 1),
    (6, 3, 2, 16, 24, 2),
    (6, 5, 2, 24, 40, 2),
    (6, 3, 2, 40, 80, 3),
    (6, 5, 1, 80, 112, 3),
    (6, 5, 2, 112, 192, 4),
    (6, 3, 1, 192, 320, 1),
]


def _mbconv(b: GraphBuilder, x: int, expand: int, kernel: int, stride: int, out: int, sd_prob: float) -> int:
    inp = b.spec(x).shape[0]
    expanded = make_divisible(inp * expand, 8)
    h, index = x, 0
    if expanded != inp:
        h = conv_norm_act(b, h, "block.0", expanded, 1, act="silu")
        index = 1
    h = conv_norm_act(b, h, f"block.{index}", expanded, kernel, stride, groups=expanded, act="silu")
    h = squeeze_excitation(b, h, f"block.{index + 1}", max(1, inp // 4), "silu", act_inplace=True)
    h = conv_norm_act(b, h, f"block.{index + 2}", out, 1, act=None)
    if stride == 1 and inp == out:
        h = b.add(StochasticDepth(sd_prob), [h], "stochastic_depth")
        h = b.add(Add(inplace_=True), [h, x], "add")  # result += input
    return h


def efficientnet_b0() -> Graph:
    b = GraphBuilder("efficientnet_b0")
    x = b.add(Input((3, 224, 224)), [], "input")
    x = conv_norm_act(b, x, "features.0", 32, 3, 2, act="silu")
    total, block_id = sum(s[-1] for s in _B0_SETTING), 0
    for stage, (expand, kernel, stride, _, out, layers) in enumerate(_B0_SETTING, start=1):
        for i in range(layers):
            with b.block(f"features.{stage}.{i}"):
                x = _mbconv(b, x, expand, kernel, stride if i == 0 else 1, out, 0.2 * block_id / total)
            block_id += 1
    x = conv_norm_act(b, x, "features.8", 1280, 1, act="silu")
    x = pool_flatten(b, x)
    x = b.add(Dropout(0.2), [x], "classifier.0")
    b.add(Linear(1000), [x], "classifier.1")
    return b.build()


def _conv_bn(
    b: GraphBuilder, x: int, name: str, index: int, out: int, kernel: int, stride: int = 1, depthwise: bool = False
) -> int:
    groups = b.spec(x).shape[0] if depthwise else 1
    x = b.add(Conv(out, kernel, stride, kernel // 2, groups=groups, bias=False), [x], f"{name}.{index}")
    return b.add(BatchNorm(), [x], f"{name}.{index + 1}")


def _shuffle_branch2(b: GraphBuilder, x: int, width: int, stride: int) -> int:
    x = _conv_bn(b, x, "branch2", 0, width, 1)
    x = b.add(ReLU(inplace_=True), [x], "branch2.2")
    x = _conv_bn(b, x, "branch2", 3, width, 3, stride, depthwise=True)
    x = _conv_bn(b, x, "branch2", 5, width, 1)
    return b.add(ReLU(inplace_=True), [x], "branch2.7")


def _shuffle_block(b: GraphBuilder, x: int, out: int, stride: int) -> int:
    width = out // 2
    if stride == 1:  # x1, x2 = x.chunk(2, dim=1): two views
        left = b.add(Slice(0, 0, width), [x], "chunk.0")
        right = _shuffle_branch2(b, b.add(Slice(0, width, 2 * width), [x], "chunk.1"), width, 1)
    else:
        left = _conv_bn(b, x, "branch1", 0, b.spec(x).shape[0], 3, stride, depthwise=True)
        left = _conv_bn(b, left, "branch1", 2, width, 1)
        left = b.add(ReLU(inplace_=True), [left], "branch1.4")
        right = _shuffle_branch2(b, x, width, stride)
    x = b.add(Concat(0), [left, right], "cat")
    return b.add(ChannelShuffle(2), [x], "channel_shuffle")


def shufflenet_v2_x1_0() -> Graph:
    b = GraphBuilder("shufflenet_v2_x1_0")
    x = b.add(Input((3, 224, 224)), [], "input")
    x = _conv_bn(b, x, "conv1", 0, 24, 3, 2)
    x = b.add(ReLU(inplace_=True), [x], "conv1.2")
    x = b.add(MaxPool(3, 2, 1), [x], "maxpool")
    for stage, repeats, out in ((2, 4, 116), (3, 8, 232), (4, 4, 464)):
        for i in range(repeats):
            with b.block(f"stage{stage}.{i}"):
                x = _shuffle_block(b, x, out, 2 if i == 0 else 1)
    x = _conv_bn(b, x, "conv5", 0, 1024, 1)
    x = b.add(ReLU(inplace_=True), [x], "conv5.2")
    x = pool_flatten(b, x, "mean")  # x.mean([2, 3])
    b.add(Linear(1000), [x], "fc")
    return b.build()


def regnet_stages(depth: int, w_0: int, w_a: float, w_m: float, group_width: int) -> list[tuple[int, int, int]]:
    """BlockParams.from_init_params: per stage (width, depth, group width), bottleneck multiplier 1."""
    capacity = [round(math.log((i * w_a + w_0) / w_0) / math.log(w_m)) for i in range(depth)]
    widths = [round(w_0 * w_m**c / 8) * 8 for c in capacity]
    stages: list[list[int]] = []
    for w in widths:
        if stages and stages[-1][0] == w:
            stages[-1][1] += 1
        else:
            stages.append([w, 1])
    out = []
    for w, d in stages:
        g = min(group_width, w)
        out.append((make_divisible(w, g), d, g))
    return out


def _regnet_block(b: GraphBuilder, x: int, out: int, stride: int, group_width: int, se_ratio: float) -> int:
    inp = b.spec(x).shape[0]
    proj = None
    if inp != out or stride != 1:
        proj = conv_norm_act(b, x, "proj", out, 1, stride, act=None)
    f = conv_norm_act(b, x, "f.a", out, 1)
    f = conv_norm_act(b, f, "f.b", out, 3, stride, groups=out // group_width)
    f = squeeze_excitation(b, f, "f.se", round(se_ratio * inp))
    f = conv_norm_act(b, f, "f.c", out, 1, act=None)
    x = b.add(Add(), [proj if proj is not None else x, f], "add")  # self.proj(x) + self.f(x)
    return b.add(ReLU(inplace_=True), [x], "activation")


def regnet_y_400mf() -> Graph:
    b = GraphBuilder("regnet_y_400mf")
    x = b.add(Input((3, 224, 224)), [], "input")
    x = conv_norm_act(b, x, "stem", 32, 3, 2)
    for stage, (width, depth, group_width) in enumerate(regnet_stages(16, 48, 27.89, 2.09, 8), start=1):
        for i in range(depth):
            with b.block(f"trunk_output.block{stage}.block{stage}-{i}"):
                x = _regnet_block(b, x, width, 2 if i == 0 else 1, group_width, 0.25)
    x = pool_flatten(b, x)
    b.add(Linear(1000), [x], "fc")
    return b.build()


MODELS: dict[str, Callable[[], Graph]] = {
    "mobilenet_v2": mobilenet_v2,
    "mobilenet_v3_large": mobilenet_v3_large,
    "mobilenet_v3_small": mobilenet_v3_small,
    "efficientnet_b0": efficientnet_b0,
    "shufflenet_v2_x1_0": shufflenet_v2_x1_0,
    "regnet_y_400mf": regnet_y_400mf,
}
