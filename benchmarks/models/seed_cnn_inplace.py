"""seed:cnn_inplace of shared/calibration/measure_gpu.py: seed:cnn (seed_cnn.py) with ReLU(inplace=True)."""

from seed_cnn import build_model as _build
from seed_cnn import example_inputs, loss_fn
from torch import nn

NAME = "seed:cnn_inplace"


def build_model() -> nn.Module:
    return _build(inplace=True)


__all__ = ["build_model", "example_inputs", "loss_fn"]
