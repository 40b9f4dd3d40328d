"""tv:mobilenet_v2 of shared/calibration/measure_gpu.py: torchvision.models.mobilenet_v2(weights=None),
3x224x224 inputs, 1000 classes, cross-entropy. Needs torchvision (benchmark only)."""

import torchvision.models as tvm
from _common import classification_loss as loss_fn
from _common import image_batch
from torch import nn

NAME = "tv:mobilenet_v2"


def build_model() -> nn.Module:
    return tvm.mobilenet_v2(weights=None)


def example_inputs(batch_size: int) -> tuple[object, ...]:
    return image_batch(batch_size, 3, 224, 1000)


__all__ = ["build_model", "example_inputs", "loss_fn"]
