"""AlexNet, VGG and SqueezeNet as torchvision builds them (torchvision/models/alexnet.py, vgg.py,
squeezenet.py): ReLU(inplace=True) throughout, Dropout in the classifiers, torch.flatten as a view."""

from __future__ import annotations

from collections.abc import Callable

from advisor.core.graph import Graph, GraphBuilder
from advisor.core.ops.activation import ReLU
from advisor.core.ops.conv import Conv
from advisor.core.ops.dropout import Dropout
from advisor.core.ops.io import Input
from advisor.core.ops.linear import Linear
from advisor.core.ops.pool import AdaptiveAvgPool, MaxPool
from advisor.core.ops.shape import Concat, Flatten

# (out_channels, kernel, stride, padding) per conv, "M" a 3x3/2 max-pool: AlexNet.features
_ALEXNET: list[tuple[int, int, int, int] | str] = [
    (64, 11, 4, 2),
    "M",
    (192, 5, 1, 2),
    "M",
    (384, 3, 1, 1),
    (256, 3, 1, 1),
    (256, 3, 1, 1),
    "M",
]


def alexnet() -> Graph:
    b = GraphBuilder("alexnet")
    x = b.add(Input((3, 224, 224)), [], "input")
    index = 0
    for item in _ALEXNET:
        if isinstance(item, str):
            x = b.add(MaxPool(3, 2), [x], f"features.{index}")
            index += 1
            continue
        out, k, s, p = item
        x = b.add(Conv(out, k, s, p), [x], f"features.{index}")
        x = b.add(ReLU(inplace_=True), [x], f"features.{index + 1}")
        index += 2
    x = b.add(AdaptiveAvgPool((6, 6)), [x], "avgpool")
    x = b.add(Flatten(), [x], "flatten")
    x = b.add(Dropout(0.5), [x], "classifier.0")
    x = b.add(Linear(4096), [x], "classifier.1")
    x = b.add(ReLU(inplace_=True), [x], "classifier.2")
    x = b.add(Dropout(0.5), [x], "classifier.3")
    x = b.add(Linear(4096), [x], "classifier.4")
    x = b.add(ReLU(inplace_=True), [x], "classifier.5")
    b.add(Linear(1000), [x], "classifier.6")
    return b.build()


# torchvision vgg.py cfgs: "A" = vgg11, "D" = vgg16, "E" = vgg19 (0 marks a 2x2 max-pool)
_VGG_CFGS: dict[str, list[int]] = {
    "vgg11": [64, 0, 128, 0, 256, 256, 0, 512, 512, 0, 512, 512, 0],
    "vgg16": [64, 64, 0, 128, 128, 0, 256, 256, 256, 0, 512, 512, 512, 0, 512, 512, 512, 0],
    "vgg19": [64, 64, 0, 128, 128, 0, 256, 256, 256, 256, 0, 512, 512, 512, 512, 0, 512, 512, 512, 512, 0],
}


def _vgg(name: str) -> Graph:
    b = GraphBuilder(name)
    x = b.add(Input((3, 224, 224)), [], "input")
    index = 0
    for width in _VGG_CFGS[name]:
        if width == 0:
            x = b.add(MaxPool(2, 2), [x], f"features.{index}")
            index += 1
        else:
            x = b.add(Conv(width, 3, padding=1), [x], f"features.{index}")
            x = b.add(ReLU(inplace_=True), [x], f"features.{index + 1}")
            index += 2
    x = b.add(AdaptiveAvgPool((7, 7)), [x], "avgpool")
    x = b.add(Flatten(), [x], "flatten")
    for i in (0, 3):
        x = b.add(Linear(4096), [x], f"classifier.{i}")
        x = b.add(ReLU(inplace_=True), [x], f"classifier.{i + 1}")
        x = b.add(Dropout(0.5), [x], f"classifier.{i + 2}")
    b.add(Linear(1000), [x], "classifier.6")
    return b.build()


def vgg11() -> Graph:
    return _vgg("vgg11")


def vgg16() -> Graph:
    return _vgg("vgg16")


def vgg19() -> Graph:
    return _vgg("vgg19")


def _fire(b: GraphBuilder, x: int, name: str, squeeze: int, expand: int) -> int:
    """squeezenet.Fire: squeeze 1x1 -> ReLU, then expand1x1 and expand3x3 (each -> ReLU) concatenated."""
    with b.block(name):
        s = b.add(Conv(squeeze, 1), [x], "squeeze")
        s = b.add(ReLU(inplace_=True), [s], "squeeze_activation")
        e1 = b.add(Conv(expand, 1), [s], "expand1x1")
        e1 = b.add(ReLU(inplace_=True), [e1], "expand1x1_activation")
        e3 = b.add(Conv(expand, 3, padding=1), [s], "expand3x3")
        e3 = b.add(ReLU(inplace_=True), [e3], "expand3x3_activation")
        return b.add(Concat(0), [e1, e3], "cat")


def squeezenet1_0() -> Graph:
    b = GraphBuilder("squeezenet1_0")
    x = b.add(Input((3, 224, 224)), [], "input")
    x = b.add(Conv(96, 7, 2), [x], "features.0")
    x = b.add(ReLU(inplace_=True), [x], "features.1")
    x = b.add(MaxPool(3, 2, ceil_mode=True), [x], "features.2")
    fires = {
        3: (16, 64),
        4: (16, 64),
        5: (32, 128),
        7: (32, 128),
        8: (48, 192),
        9: (48, 192),
        10: (64, 256),
        12: (64, 256),
    }
    for index in range(3, 13):
        if index in fires:
            x = _fire(b, x, f"features.{index}", *fires[index])
        else:
            x = b.add(MaxPool(3, 2, ceil_mode=True), [x], f"features.{index}")
    x = b.add(Dropout(0.5), [x], "classifier.0")
    x = b.add(Conv(1000, 1), [x], "classifier.1")
    x = b.add(ReLU(inplace_=True), [x], "classifier.2")
    x = b.add(AdaptiveAvgPool((1, 1)), [x], "classifier.3")
    b.add(Flatten(), [x], "flatten")
    return b.build()


MODELS: dict[str, Callable[[], Graph]] = {
    "alexnet": alexnet,
    "vgg11": vgg11,
    "vgg16": vgg16,
    "vgg19": vgg19,
    "squeezenet1_0": squeezenet1_0,
}
