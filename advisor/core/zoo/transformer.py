"""Vision transformers and ConvNeXt as torchvision builds them (torchvision/models/vision_transformer.py,
swin_transformer.py, convnext.py).

ViT: nn.MultiheadAttention with a packed in_proj, called with need_weights=False, so attention goes through
scaled_dot_product_attention (the fused Attention op). Swin: explicit windowed attention (matmul, softmax,
matmul) on channels-last (H, W, C) maps; the zero-size F.pad copies, rolls and window partition copies are
modelled as torchvision runs them. ConvNeXt: channels-last blocks between two Permute views, layer scale,
stochastic depth and an in-place residual add. The dropouts with p=0.0 (ViT's, Swin's MLP) are kept for
the layer table; they return their input.
"""

from __future__ import annotations

from collections.abc import Callable

from advisor.core.graph import Graph, GraphBuilder
from advisor.core.ops.activation import GELU
from advisor.core.ops.attention import Attention
from advisor.core.ops.conv import Conv
from advisor.core.ops.dropout import Dropout
from advisor.core.ops.io import Input
from advisor.core.ops.linear import Linear
from advisor.core.ops.norm import LayerNorm
from advisor.core.ops.pool import AdaptiveAvgPool
from advisor.core.ops.shape import Add, AddParameter, ClassToken, Flatten, Permute, Reshape, Slice
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


def _mlp(b: GraphBuilder, x: int, hidden: int, prefix: str = "mlp") -> int:
    """torchvision.ops.MLP with GELU: Linear, GELU, Dropout, Linear, Dropout (p=0.0, not inplace)."""
    width = b.spec(x).shape[-1]
    x = b.add(Linear(hidden), [x], f"{prefix}.0")
    x = b.add(GELU(), [x], f"{prefix}.1")
    x = b.add(Dropout(0.0), [x], f"{prefix}.2")
    x = b.add(Linear(width), [x], f"{prefix}.3")
    return b.add(Dropout(0.0), [x], f"{prefix}.4")


def _encoder_block(b: GraphBuilder, x: int, heads: int, mlp_dim: int) -> int:
    hidden = b.spec(x).shape[-1]
    h = b.add(LayerNorm(), [x], "ln_1")
    h = b.add(Linear(3 * hidden), [h], "self_attention.in_proj")
    h = b.add(Attention(heads), [h], "self_attention.sdpa")
    h = b.add(Linear(hidden), [h], "self_attention.out_proj")
    h = b.add(Dropout(0.0), [h], "dropout")
    x = b.add(Add(), [h, x], "add")  # x = x + input
    y = b.add(LayerNorm(), [x], "ln_2")
    y = _mlp(b, y, mlp_dim)
    return b.add(Add(), [x, y], "add_1")  # return x + y


def _vit(name: str, layers: int, heads: int, hidden: int, mlp_dim: int, patch: int = 16) -> Graph:
    b = GraphBuilder(name)
    x = b.add(Input((3, 224, 224)), [], "input")
    x = b.add(Conv(hidden, patch, patch), [x], "conv_proj")
    grid = 224 // patch
    x = b.add(Reshape((hidden, grid * grid)), [x], "reshape")
    x = b.add(Permute((1, 0)), [x], "permute")
    x = b.add(ClassToken(), [x], "class_token")  # torch.cat([class_token.expand(n, -1, -1), x], dim=1)
    x = b.add(AddParameter(), [x], "encoder.pos_embedding")
    x = b.add(Dropout(0.0), [x], "encoder.dropout")
    for i in range(layers):
        with b.block(f"encoder.layers.encoder_layer_{i}"):
            x = _encoder_block(b, x, heads, mlp_dim)
    x = b.add(LayerNorm(), [x], "encoder.ln")
    x = b.add(Slice(0, 0, 1, keep_dim=False), [x], "class_token_out")  # x[:, 0]
    b.add(Linear(1000), [x], "heads.head")
    return b.build()


def vit_b_16() -> Graph:
    return _vit("vit_b_16", 12, 12, 768, 3072)


def vit_l_16() -> Graph:
    return _vit("vit_l_16", 24, 16, 1024, 4096)


def _shifted_window_attention(b: GraphBuilder, x: int, heads: int, window: int, shift: int) -> int:
    """ShiftedWindowAttention on (H, W, C): pad, roll, partition, qkv, attention, proj, merge, roll back.
    The final x[:, :H, :W, :].contiguous() is a no-op when nothing was padded (224 -> 56/28/14/7)."""
    h, w, c = b.spec(x).shape
    pad_h, pad_w = (window - h % window) % window, (window - w % window) % window
    x = b.add(Pad(pad_h, pad_w), [x], "attn.pad")
    if shift:
        x = b.add(Roll(-shift, -shift), [x], "attn.roll")
    x = b.add(WindowPartition(window), [x], "attn.window_partition")
    x = b.add(Linear(3 * c), [x], "attn.qkv")
    x = b.add(WindowAttention(heads, window, shifted=bool(shift)), [x], "attn.attention")
    x = b.add(Linear(c), [x], "attn.proj")
    x = b.add(WindowMerge(h + pad_h, w + pad_w), [x], "attn.window_merge")
    if shift:
        x = b.add(Roll(shift, shift), [x], "attn.roll_back")
    if pad_h or pad_w:
        x = b.add(Slice(0, 0, h), [x], "attn.crop_h")
        x = b.add(Slice(1, 0, w), [x], "attn.crop_w")
    return x


def _swin_block(b: GraphBuilder, x: int, heads: int, window: int, shift: int, sd_prob: float) -> int:
    h = b.add(LayerNorm(), [x], "norm1")
    h = _shifted_window_attention(b, h, heads, window, shift)
    h = b.add(StochasticDepth(sd_prob), [h], "stochastic_depth")
    x = b.add(Add(), [x, h], "add")  # x = x + self.stochastic_depth(self.attn(self.norm1(x)))
    y = b.add(LayerNorm(), [x], "norm2")
    y = _mlp(b, y, 4 * b.spec(x).shape[-1])
    y = b.add(StochasticDepth(sd_prob), [y], "stochastic_depth_1")
    return b.add(Add(), [x, y], "add_1")


def _patch_merging(b: GraphBuilder, x: int, name: str) -> int:
    h, w, c = b.spec(x).shape
    x = b.add(Pad(h % 2, w % 2), [x], f"{name}.pad")  # _patch_merging_pad
    x = b.add(PatchMerge(), [x], f"{name}.cat")
    x = b.add(LayerNorm(), [x], f"{name}.norm")
    return b.add(Linear(2 * c, bias=False), [x], f"{name}.reduction")


def swin_t() -> Graph:
    embed, depths, heads, window, sd = 96, (2, 2, 6, 2), (3, 6, 12, 24), 7, 0.2
    b = GraphBuilder("swin_t")
    x = b.add(Input((3, 224, 224)), [], "input")
    x = b.add(Conv(embed, 4, 4), [x], "features.0.0")
    x = b.add(Permute((1, 2, 0)), [x], "features.0.1")
    x = b.add(LayerNorm(), [x], "features.0.2")
    block_id, total = 0, sum(depths)
    for stage, (depth, n_heads) in enumerate(zip(depths, heads, strict=True)):
        for i in range(depth):
            size = b.spec(x).shape[0]  # the shift is dropped where the window covers the whole map
            shift = window // 2 if i % 2 and window < size else 0
            with b.block(f"features.{2 * stage + 1}.{i}"):
                x = _swin_block(b, x, n_heads, window, shift, sd * block_id / (total - 1))
            block_id += 1
        if stage < len(depths) - 1:
            x = _patch_merging(b, x, f"features.{2 * stage + 2}")
    x = b.add(LayerNorm(), [x], "norm")
    x = b.add(Permute((2, 0, 1)), [x], "permute")
    x = b.add(AdaptiveAvgPool((1, 1)), [x], "avgpool")
    x = b.add(Flatten(), [x], "flatten")
    b.add(Linear(1000), [x], "head")
    return b.build()


def _layer_norm_2d(b: GraphBuilder, x: int, name: str) -> int:
    """convnext.LayerNorm2d: permute to channels-last (a view), layer_norm, permute back (a view)."""
    x = b.add(Permute((1, 2, 0)), [x], f"{name}.permute")
    x = b.add(LayerNorm(), [x], name)
    return b.add(Permute((2, 0, 1)), [x], f"{name}.permute_1")


def _cn_block(b: GraphBuilder, x: int, sd_prob: float) -> int:
    dim = b.spec(x).shape[0]
    h = b.add(Conv(dim, 7, padding=3, groups=dim), [x], "block.0")
    h = b.add(Permute((1, 2, 0)), [h], "block.1")
    h = b.add(LayerNorm(), [h], "block.2")
    h = b.add(Linear(4 * dim), [h], "block.3")
    h = b.add(GELU(), [h], "block.4")
    h = b.add(Linear(dim), [h], "block.5")
    h = b.add(Permute((2, 0, 1)), [h], "block.6")
    h = b.add(LayerScale(0), [h], "layer_scale")
    h = b.add(StochasticDepth(sd_prob), [h], "stochastic_depth")
    return b.add(Add(inplace_=True), [h, x], "add")  # result += input


def convnext_tiny() -> Graph:
    setting, sd = ((96, 3), (192, 3), (384, 9), (768, 3)), 0.1
    b = GraphBuilder("convnext_tiny")
    x = b.add(Input((3, 224, 224)), [], "input")
    x = b.add(Conv(96, 4, 4), [x], "features.0.0")
    x = _layer_norm_2d(b, x, "features.0.1")
    block_id, total = 0, sum(d for _, d in setting)
    for stage, (dim, depth) in enumerate(setting):
        for i in range(depth):
            with b.block(f"features.{2 * stage + 1}.{i}"):
                x = _cn_block(b, x, sd * block_id / (total - 1.0))
            block_id += 1
        if stage < len(setting) - 1:
            x = _layer_norm_2d(b, x, f"features.{2 * stage + 2}.0")
            x = b.add(Conv(2 * dim, 2, 2), [x], f"features.{2 * stage + 2}.1")
    x = b.add(AdaptiveAvgPool((1, 1)), [x], "avgpool")
    x = _layer_norm_2d(b, x, "classifier.0")
    x = b.add(Flatten(), [x], "classifier.1")
    b.add(Linear(1000), [x], "classifier.2")
    return b.build()


MODELS: dict[str, Callable[[], Graph]] = {
    "vit_b_16": vit_b_16,
    "vit_l_16": vit_l_16,
    "swin_t": swin_t,
    "convnext_tiny": convnext_tiny,
}
