"""ResNet (v1.5: stride on the 3x3) and DenseNet-121 as torchvision builds them (torchvision/models/resnet.py,
densenet.py).

ResNet blocks reuse one ReLU(inplace=True) module (`self.relu`) two or three times; the calls are named
relu, relu_1, relu_2 as torch.fx names repeated calls. `out += identity` is an in-place add, and the
downsample branch runs after the main branch's last BatchNorm, as in Bottleneck.forward.
"""

from __future__ import annotations

from collections.abc import Callable

from advisor.core.graph import Graph, GraphBuilder
from advisor.core.ops.activation import ReLU
from advisor.core.ops.conv import Conv
from advisor.core.ops.io import Input
from advisor.core.ops.linear import Linear
from advisor.core.ops.norm import BatchNorm
from advisor.core.ops.pool import AvgPool, MaxPool
from advisor.core.ops.shape import Add, Concat
from advisor.core.zoo.common import pool_flatten


def _conv_bn(b: GraphBuilder, x: int, conv: str, bn: str, out: int, kernel: int, stride: int = 1) -> int:
    x = b.add(Conv(out, kernel, stride, padding=kernel // 2, bias=False), [x], conv)
    return b.add(BatchNorm(), [x], bn)


def _residual_end(b: GraphBuilder, out: int, x: int, stride: int, relu: str) -> int:
    """identity = downsample(x) where the shape changes; out += identity; relu(out)."""
    identity = x
    width = b.spec(out).shape[0]
    if stride != 1 or b.spec(x).shape[0] != width:
        identity = _conv_bn(b, x, "downsample.0", "downsample.1", width, 1, stride)
    out = b.add(Add(inplace_=True), [out, identity], "add")
    return b.add(ReLU(inplace_=True), [out], relu)


def _basic_block(b: GraphBuilder, x: int, planes: int, stride: int) -> int:
    out = _conv_bn(b, x, "conv1", "bn1", planes, 3, stride)
    out = b.add(ReLU(inplace_=True), [out], "relu")
    out = _conv_bn(b, out, "conv2", "bn2", planes, 3)
    return _residual_end(b, out, x, stride, "relu_1")


def _bottleneck(b: GraphBuilder, x: int, planes: int, stride: int) -> int:
    out = _conv_bn(b, x, "conv1", "bn1", planes, 1)
    out = b.add(ReLU(inplace_=True), [out], "relu")
    out = _conv_bn(b, out, "conv2", "bn2", planes, 3, stride)
    out = b.add(ReLU(inplace_=True), [out], "relu_1")
    out = _conv_bn(b, out, "conv3", "bn3", planes * 4, 1)
    return _residual_end(b, out, x, stride, "relu_2")


def _resnet(name: str, bottleneck: bool, layers: tuple[int, int, int, int]) -> Graph:
    b = GraphBuilder(name)
    x = b.add(Input((3, 224, 224)), [], "input")
    x = b.add(Conv(64, 7, 2, 3, bias=False), [x], "conv1")
    x = b.add(BatchNorm(), [x], "bn1")
    x = b.add(ReLU(inplace_=True), [x], "relu")
    x = b.add(MaxPool(3, 2, 1), [x], "maxpool")
    block = _bottleneck if bottleneck else _basic_block
    for stage, (planes, depth) in enumerate(zip((64, 128, 256, 512), layers, strict=True)):
        for i in range(depth):
            with b.block(f"layer{stage + 1}.{i}"):
                x = block(b, x, planes, 2 if stage and i == 0 else 1)
    x = pool_flatten(b, x)
    b.add(Linear(1000), [x], "fc")
    return b.build()


def resnet18() -> Graph:
    return _resnet("resnet18", False, (2, 2, 2, 2))


def resnet34() -> Graph:
    return _resnet("resnet34", False, (3, 4, 6, 3))


def resnet50() -> Graph:
    return _resnet("resnet50", True, (3, 4, 6, 3))


def resnet101() -> Graph:
    return _resnet("resnet101", True, (3, 4, 23, 3))


def resnet152() -> Graph:
    return _resnet("resnet152", True, (3, 8, 36, 3))


def _dense_layer(b: GraphBuilder, features: list[int], growth: int, bn_size: int) -> int:
    """_DenseLayer (memory_efficient=False): bn_function cats every earlier feature map (a new tensor each
    layer), norm1 -> relu1(inplace) -> conv1 1x1 -> norm2 -> relu2(inplace) -> conv2 3x3; drop_rate 0."""
    concated = b.add(Concat(0), features, "cat")
    x = b.add(BatchNorm(), [concated], "norm1")
    x = b.add(ReLU(inplace_=True), [x], "relu1")
    x = b.add(Conv(bn_size * growth, 1, bias=False), [x], "conv1")
    # bn_function's local `concated_features` (densenet.py) references the cat until conv1 has returned
    b.hold(concated, x)
    x = b.add(BatchNorm(), [x], "norm2")
    x = b.add(ReLU(inplace_=True), [x], "relu2")
    return b.add(Conv(growth, 3, padding=1, bias=False), [x], "conv2")


def _transition(b: GraphBuilder, x: int, name: str) -> int:
    x = b.add(BatchNorm(), [x], f"{name}.norm")
    x = b.add(ReLU(inplace_=True), [x], f"{name}.relu")
    x = b.add(Conv(b.spec(x).shape[0] // 2, 1, bias=False), [x], f"{name}.conv")
    return b.add(AvgPool(2, 2), [x], f"{name}.pool")


def densenet121() -> Graph:
    growth, bn_size = 32, 4
    b = GraphBuilder("densenet121")
    x = b.add(Input((3, 224, 224)), [], "input")
    x = b.add(Conv(64, 7, 2, 3, bias=False), [x], "features.conv0")
    x = b.add(BatchNorm(), [x], "features.norm0")
    x = b.add(ReLU(inplace_=True), [x], "features.relu0")
    x = b.add(MaxPool(3, 2, 1), [x], "features.pool0")
    for stage, depth in enumerate((6, 12, 24, 16), start=1):
        features = [x]
        for i in range(1, depth + 1):
            with b.block(f"features.denseblock{stage}.denselayer{i}"):
                features.append(_dense_layer(b, features, growth, bn_size))
        x = b.add(Concat(0), features, f"features.denseblock{stage}.cat")
        if stage < 4:
            x = _transition(b, x, f"features.transition{stage}")
    x = b.add(BatchNorm(), [x], "features.norm5")
    x = b.add(ReLU(inplace_=True), [x], "relu")  # F.relu(features, inplace=True) in DenseNet.forward
    x = pool_flatten(b, x, "adaptive_avg_pool2d")
    b.add(Linear(1000), [x], "classifier")
    return b.build()


MODELS: dict[str, Callable[[], Graph]] = {
    "resnet18": resnet18,
    "resnet34": resnet34,
    "resnet50": resnet50,
    "resnet101": resnet101,
    "resnet152": resnet152,
    "densenet121": densenet121,
}
