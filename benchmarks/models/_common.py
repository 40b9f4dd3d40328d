"""Shared helpers of the calibration model files: the data loader's targets stay referenced for the whole
step, as in shared/calibration/measure_gpu.py (make() returns them beside the inputs)."""

from __future__ import annotations

import torch
import torch.nn.functional as F

TARGETS: dict[str, torch.Tensor] = {}


def image_batch(batch_size: int, channels: int, size: int, classes: int) -> tuple[torch.Tensor]:
    images = torch.randn(batch_size, channels, size, size)
    TARGETS["labels"] = torch.randint(0, classes, (batch_size,))
    return (images,)


def flat_batch(batch_size: int, shape: tuple[int, ...], classes: int) -> tuple[torch.Tensor]:
    images = torch.randn(batch_size, *shape)
    TARGETS["labels"] = torch.randint(0, classes, (batch_size,))
    return (images,)


def classification_loss(output: torch.Tensor, inputs: object) -> torch.Tensor:
    return F.cross_entropy(output, TARGETS["labels"])
