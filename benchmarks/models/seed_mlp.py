"""seed:mlp of shared/calibration/measure_gpu.py: 784-4096-4096-10 on 1x28x28 inputs, cross-entropy."""

from _common import classification_loss as loss_fn
from _common import flat_batch
from torch import nn

NAME = "seed:mlp"


def build_model() -> nn.Module:
    return nn.Sequential(
        nn.Flatten(), nn.Linear(784, 4096), nn.ReLU(), nn.Linear(4096, 4096), nn.ReLU(), nn.Linear(4096, 10)
    )


def example_inputs(batch_size: int) -> tuple[object, ...]:
    return flat_batch(batch_size, (1, 28, 28), 10)


__all__ = ["build_model", "example_inputs", "loss_fn"]
