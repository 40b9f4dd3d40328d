"""seed:cnn of shared/calibration/measure_gpu.py: [conv3x3-bn-relu]x2 per stage (64, 128, 256), max-pool
between stages, global average pool, fc100, on 3x128x128 inputs (ReLU inplace=False)."""

from _common import classification_loss as loss_fn
from _common import image_batch
from torch import nn

NAME = "seed:cnn"


def _block(cin: int, cout: int, inplace: bool) -> list[nn.Module]:
    return [nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=inplace)]


def build_model(inplace: bool = False) -> nn.Module:
    widths = ((3, 64), (64, 64), None, (64, 128), (128, 128), None, (128, 256), (256, 256))
    layers = [m for w in widths for m in (_block(*w, inplace) if w else [nn.MaxPool2d(2)])]
    return nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(256, 100))


def example_inputs(batch_size: int) -> tuple[object, ...]:
    return image_batch(batch_size, 3, 128, 100)


__all__ = ["build_model", "example_inputs", "loss_fn"]
