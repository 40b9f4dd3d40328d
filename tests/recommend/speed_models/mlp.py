"""The issue's four-layer MLP: Linear(1024, 4096), ReLU, Linear(4096, 1024), Linear(1024, 10)."""

import torch
from torch import nn


def build_model() -> nn.Module:
    return nn.Sequential(nn.Linear(1024, 4096), nn.ReLU(), nn.Linear(4096, 1024), nn.Linear(1024, 10))


def example_inputs(batch_size: int) -> tuple[torch.Tensor]:
    return (torch.randn(batch_size, 1024),)
