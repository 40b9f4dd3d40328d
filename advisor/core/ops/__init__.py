"""The layer kinds: each a frozen dataclass with its own formulas (see base.Op), registered by kind in
registry.py as its module loads."""

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
from advisor.core.ops.generic import Opaque, OpaqueMatmul, OpaqueView
from advisor.core.ops.io import Input
from advisor.core.ops.linear import Linear
from advisor.core.ops.loss import CrossEntropy
from advisor.core.ops.moe import MoEExperts
from advisor.core.ops.norm import BatchNorm, GroupNorm, LayerNorm, RMSNorm
from advisor.core.ops.pool import AdaptiveAvgPool, AvgPool, MaxPool
from advisor.core.ops.recurrent import GRU, LSTM
from advisor.core.ops.registry import OP_REGISTRY, op_class, register_op, require_registered
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
from advisor.core.ops.text_ops import GELUTanhComposite, QuickGELU, ScaleBy
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

# Every op module above is imported, so every `@register_op` has run: the table is complete.
OP_TYPES: dict[str, type[Op]] = OP_REGISTRY

__all__ = [
    "GELU",
    "GRU",
    "LSTM",
    "OP_REGISTRY",
    "OP_TYPES",
    "AdaptiveAvgPool",
    "Add",
    "AddParameter",
    "Attention",
    "AvgPool",
    "BatchNorm",
    "ChannelShuffle",
    "ClassToken",
    "Concat",
    "Conv",
    "ConvTranspose",
    "CrossEntropy",
    "Dropout",
    "Embedding",
    "Flatten",
    "FusedSDPA",
    "GELUTanhComposite",
    "GroupNorm",
    "Hardsigmoid",
    "Hardswish",
    "Input",
    "LayerNorm",
    "LayerScale",
    "Linear",
    "MaxPool",
    "MoEExperts",
    "Mul",
    "Op",
    "Opaque",
    "OpaqueMatmul",
    "OpaqueView",
    "Pad",
    "PatchMerge",
    "Permute",
    "QuickGELU",
    "RMSNorm",
    "ReLU",
    "ReLU6",
    "Reshape",
    "Roll",
    "Rotary",
    "SavedTensor",
    "ScaleBy",
    "SiLU",
    "Sigmoid",
    "Slice",
    "Softmax",
    "StochasticDepth",
    "Tanh",
    "WindowAttention",
    "WindowMerge",
    "WindowPartition",
    "op_class",
    "register_op",
    "require_registered",
]
