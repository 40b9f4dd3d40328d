"""Published ImageNet-1K top-1 accuracy of torchvision's pretrained weights for the zoo's classifiers.

Every figure is the "acc@1" of the weights enum's IMAGENET1K_V1 entry (the original recipe, the same one
for every model, so that the models compare on one footing; later V2 recipes score higher, e.g. ResNet-50
V1 76.130 against V2 80.858), as torchvision's model documentation tables it and as each builder's
`_metrics["ImageNet-1K"]["acc@1"]` in torchvision/models/*.py holds it (single 224 px crop; Inception v3
at 299 px).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from advisor.core import zoo
from advisor.core.analytic import estimate
from advisor.core.estimate import Estimate
from advisor.core.workload import Mode, Workload

# torchvision's model documentation: acc@1 of each model's IMAGENET1K_V1 weights.
SOURCE_URL = "https://pytorch.org/vision/stable/models.html"

# zoo name -> (torchvision weights enum, ImageNet-1K acc@1 in %)
TOP1: dict[str, tuple[str, float]] = {
    "alexnet": ("AlexNet_Weights.IMAGENET1K_V1", 56.522),
    "convnext_tiny": ("ConvNeXt_Tiny_Weights.IMAGENET1K_V1", 82.520),
    "densenet121": ("DenseNet121_Weights.IMAGENET1K_V1", 74.434),
    "efficientnet_b0": ("EfficientNet_B0_Weights.IMAGENET1K_V1", 77.692),
    "googlenet": ("GoogLeNet_Weights.IMAGENET1K_V1", 69.778),
    "inception_v3": ("Inception_V3_Weights.IMAGENET1K_V1", 77.294),
    "mobilenet_v2": ("MobileNet_V2_Weights.IMAGENET1K_V1", 71.878),
    "mobilenet_v3_large": ("MobileNet_V3_Large_Weights.IMAGENET1K_V1", 74.042),
    "mobilenet_v3_small": ("MobileNet_V3_Small_Weights.IMAGENET1K_V1", 67.668),
    "regnet_y_400mf": ("RegNet_Y_400MF_Weights.IMAGENET1K_V1", 74.046),
    "resnet18": ("ResNet18_Weights.IMAGENET1K_V1", 69.758),
    "resnet34": ("ResNet34_Weights.IMAGENET1K_V1", 73.314),
    "resnet50": ("ResNet50_Weights.IMAGENET1K_V1", 76.130),
    "resnet101": ("ResNet101_Weights.IMAGENET1K_V1", 77.374),
    "resnet152": ("ResNet152_Weights.IMAGENET1K_V1", 78.312),
    "shufflenet_v2_x1_0": ("ShuffleNet_V2_X1_0_Weights.IMAGENET1K_V1", 69.362),
    "squeezenet1_0": ("SqueezeNet1_0_Weights.IMAGENET1K_V1", 58.092),
    "swin_t": ("Swin_T_Weights.IMAGENET1K_V1", 81.474),
    "vgg11": ("VGG11_Weights.IMAGENET1K_V1", 69.020),
    "vgg16": ("VGG16_Weights.IMAGENET1K_V1", 71.592),
    "vgg19": ("VGG19_Weights.IMAGENET1K_V1", 72.376),
    "vit_b_16": ("ViT_B_16_Weights.IMAGENET1K_V1", 81.072),
    "vit_l_16": ("ViT_L_16_Weights.IMAGENET1K_V1", 79.662),
}
IMAGENET_CLASSES = 1000


@dataclass(frozen=True)
class ModelPoint:
    """One model on the accuracy / compute / size map."""

    name: str
    forward_macs: int  # one 224 px image (299 px for Inception v3), multiply-adds as torchvision counts them
    param_count: int
    top1_percent: float | None  # None: not published (the user's own model)
    weights: str = ""


@cache
def zoo_points() -> tuple[ModelPoint, ...]:
    """The zoo's ImageNet classifiers with published accuracy; MACs and parameters from their own graphs."""
    points = []
    for name, (weights, top1) in sorted(TOP1.items()):
        result = estimate(zoo.build(name), Workload(mode=Mode.INFER, batch=1))
        points.append(ModelPoint(name, result.forward_macs, result.param_count, top1, weights))
    return tuple(points)


def estimate_point(result: Estimate) -> ModelPoint | None:
    """Where an estimated model sits on the map: a 1000-class classifier of images (its accuracy is not known
    here). None for anything else."""
    rows = [row for row in result.layers if row.kind != "cross_entropy"]
    if len(rows) < 2:
        return None
    if len(rows[0].output_shape) != 3 or rows[-1].output_shape != (IMAGENET_CLASSES,):
        return None
    batch = result.workload.batch
    return ModelPoint(result.model, result.forward_macs // batch, result.param_count, None)


def is_imagenet_classifier(task: str, output_shape: tuple[int, ...]) -> bool:
    """Whether a model belongs on the map: a classifier with ImageNet's 1000 classes."""
    return task == "classification" and output_shape == (IMAGENET_CLASSES,)
