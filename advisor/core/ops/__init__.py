"""The registry of layer kinds: each a frozen dataclass with its own formulas (see base.Op)."""

from collections.abc import Iterable

from advisor.core.ops.activation import (
    GELU,
    Hardsigmoid,
    Hardswish,
    ReLU,
    ReLU6,
    Sigmoid,
    SiLU,
    Softmax,
    Tanh,
)
from advisor.core.ops.attention import Attention, FusedSDPA, Rotary
from advisor.core.ops.base import Op, SavedTensor
from advisor.core.ops.conv import Conv, ConvTranspose
from advisor.core.ops.dropout import Dropout
from advisor.core.ops.embedding import Embedding
from advisor.core.ops.io import Input
from advisor.core.ops.linear import Linear
from advisor.core.ops.loss import CrossEntropy
from advisor.core.ops.moe import MoEExperts
from advisor.core.ops.norm import BatchNorm, GroupNorm, LayerNorm, RMSNorm
from advisor.core.ops.pool import AdaptiveAvgPool, AvgPool, MaxPool
from advisor.core.ops.recurrent import GRU, LSTM
from advisor.core.ops.shape import (
    Add,
    AddParameter,
    ChannelShuffle,
    ClassToken,
    Concat,
    Flatten,
    Mul,
    Permute,
    Reshape,
    Slice,
)
from advisor.core.ops.text_ops import GELUTanhComposite, ScaleBy
from advisor.core.ops.vision_ops import (
    LayerScale,
    Pad,
    PatchMerge,
    Roll,
    StochasticDepth,
    WindowAttention,
    WindowMerge,
    WindowPartition,
)


def kind_registry(classes: Iterable[type[Op]]) -> dict[str, type[Op]]:
    """Kind -> class; a kind claimed twice raises, since a dict would silently keep only the later class and
    saved networks of the earlier kind would load as the wrong layer."""
    table: dict[str, type[Op]] = {}
    for cls in classes:
        if cls.kind in table:
            owner = table[cls.kind].__name__
            raise ValueError(f"op kind {cls.kind!r} is registered by both {owner} and {cls.__name__}")
        table[cls.kind] = cls
    return table


OP_TYPES: dict[str, type[Op]] = kind_registry(
    (Input, Linear, Conv, ConvTranspose, BatchNorm, LayerNorm, RMSNorm, GroupNorm, ReLU, ReLU6, GELU,
     SiLU, Sigmoid, Tanh, Hardswish, Hardsigmoid, Softmax, Dropout, MaxPool, AvgPool, AdaptiveAvgPool,
     Flatten, Reshape, Permute, Slice, Add, Mul, Concat, ChannelShuffle, ClassToken, AddParameter,
     Embedding, Attention, Rotary, LSTM, GRU, CrossEntropy, GELUTanhComposite, LayerScale, StochasticDepth,
     Pad, Roll, WindowPartition, WindowMerge, WindowAttention, PatchMerge, MoEExperts, ScaleBy)
)

__all__ = [
    "GELU", "GRU", "LSTM", "OP_TYPES", "AdaptiveAvgPool", "Add", "AddParameter", "Attention", "AvgPool",
    "BatchNorm", "ChannelShuffle", "ClassToken", "Concat", "Conv", "ConvTranspose", "CrossEntropy", "Dropout",
    "Embedding", "Flatten", "FusedSDPA", "GroupNorm", "Hardsigmoid", "Hardswish", "Input", "LayerNorm",
    "Linear", "MaxPool", "MoEExperts", "Mul", "Op", "Permute", "RMSNorm", "ReLU", "ReLU6", "Reshape", "Rotary",
    "SavedTensor", "SiLU", "Sigmoid", "Slice", "Softmax", "Tanh",
]
