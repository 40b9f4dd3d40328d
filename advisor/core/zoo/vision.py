"""The built-in vision model zoo: torchvision classifiers rebuilt layer by layer as IR graphs.

Each builder takes no arguments and returns the graph torchvision's model runs for one 224x224 image
(299x299 for inception_v3) with 1000 classes: first node Input((3, H, W)), last node the logits (1000,);
layer names follow torchvision's module paths. The families live in classic, resnet, inception, mobile
and transformer.
"""

from __future__ import annotations

from collections.abc import Callable

from advisor.core.graph import Graph
from advisor.core.zoo import classic, inception, mobile, resnet, transformer

MODELS: dict[str, Callable[[], Graph]] = {
    **classic.MODELS,
    **resnet.MODELS,
    **inception.MODELS,
    **mobile.MODELS,
    **transformer.MODELS,
}

__all__ = ["MODELS"]
