"""The two small networks of ../shared/calibration/measure_gpu.py (build()): seed:mlp and seed:cnn."""

from __future__ import annotations

from advisor.core.graph import Graph, GraphBuilder
from advisor.core.ops import (
    AdaptiveAvgPool,
    BatchNorm,
    Conv,
    Flatten,
    Input,
    Linear,
    MaxPool,
    ReLU,
)


def mlp() -> Graph:
    """Flatten, 784-4096-4096-10 with ReLU, on 1x28x28 inputs."""
    b = GraphBuilder("seed:mlp")
    x = b.add(Input((1, 28, 28)), [], "input")
    x = b.add(Flatten(), [x], "flatten")
    for index, width in enumerate((4096, 4096)):
        x = b.add(Linear(width), [x], f"fc{index + 1}")
        x = b.add(ReLU(), [x], f"relu{index + 1}")
    b.add(Linear(10), [x], "fc3")
    return b.build()


def cnn(inplace: bool = False) -> Graph:
    """[conv3x3-bn-relu]x2 at 64, 128 and 256 channels with max-pools between, global average pool, fc100,
    on 3x128x128 inputs."""
    b = GraphBuilder("seed:cnn_inplace" if inplace else "seed:cnn")
    x = b.add(Input((3, 128, 128)), [], "input")
    for stage, width in enumerate((64, 128, 256)):
        if stage:
            x = b.add(MaxPool(2), [x], f"pool{stage}")
        for rep in range(2):
            name = f"s{stage + 1}.{rep + 1}"
            x = b.add(Conv(width, 3, padding=1, bias=False), [x], f"{name}.conv")
            x = b.add(BatchNorm(), [x], f"{name}.bn")
            x = b.add(ReLU(inplace_=inplace), [x], f"{name}.relu")
    x = b.add(AdaptiveAvgPool((1, 1)), [x], "gap")
    x = b.add(Flatten(), [x], "flatten")
    b.add(Linear(100), [x], "fc")
    return b.build()


MODELS = {"seed:mlp": mlp, "seed:cnn": cnn, "seed:cnn_inplace": lambda: cnn(inplace=True)}
