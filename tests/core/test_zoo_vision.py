"""The vision zoo against torchvision's published numbers (weights meta: num_params and _ops, which are
GMACs of conv/linear/matmul), plus hand arithmetic for a few layers and the memory-relevant flags."""

from __future__ import annotations

from decimal import Decimal
from functools import cache

import pytest

from advisor.core.graph import Graph, TensorSpec
from advisor.core.ops.activation import ReLU, ReLU6, SiLU
from advisor.core.ops.io import Input
from advisor.core.ops.shape import Add
from advisor.core.ops.vision_ops import (
    LayerScale,
    PatchMerge,
    StochasticDepth,
    WindowAttention,
    WindowMerge,
    WindowPartition,
)
from advisor.core.replay import replay_step
from advisor.core.workload import Workload
from advisor.core.zoo.vision import MODELS

# torchvision weights meta: (num_params, _ops as published, in GMACs). shufflenet_v2_x1_0 publishes 0.145.
PUBLISHED: dict[str, tuple[int, str]] = {
    "alexnet": (61100840, "0.714"),
    "vgg11": (132863336, "7.609"),
    "vgg16": (138357544, "15.47"),
    "vgg19": (143667240, "19.632"),
    "resnet18": (11689512, "1.814"),
    "resnet34": (21797672, "3.664"),
    "resnet50": (25557032, "4.089"),
    "resnet101": (44549160, "7.801"),
    "resnet152": (60192808, "11.514"),
    "densenet121": (7978856, "2.834"),
    "mobilenet_v2": (3504872, "0.301"),
    "mobilenet_v3_small": (2542856, "0.057"),
    "mobilenet_v3_large": (5483032, "0.217"),
    "efficientnet_b0": (5288548, "0.386"),
    "squeezenet1_0": (1248424, "0.819"),
    "shufflenet_v2_x1_0": (2278604, "0.145"),
    "googlenet": (6624904, "1.498"),
    "inception_v3": (27161264, "5.713"),
    "convnext_tiny": (28589128, "4.456"),
    "regnet_y_400mf": (4344144, "0.402"),
    "vit_b_16": (86567656, "17.564"),
    "vit_l_16": (304326632, "61.555"),
    "swin_t": (28288354, "4.491"),
}


@cache
def graph(name: str) -> Graph:
    return MODELS[name]()


def macs(g: Graph) -> int:
    return sum(n.op.forward_macs(g.input_specs(n), n.output) for n in g.nodes)


def node_macs(g: Graph, name: str) -> int:
    node = next(n for n in g.nodes if n.name == name)
    return node.op.forward_macs(g.input_specs(node), node.output)


def node_params(g: Graph, prefix: str) -> int:
    return sum(n.op.param_count(g.input_specs(n)) for n in g.nodes if n.name.startswith(prefix))


def test_every_published_model_is_in_the_zoo() -> None:
    assert set(MODELS) == set(PUBLISHED)


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_parameter_count_is_torchvisions(name: str) -> None:
    assert graph(name).param_count == PUBLISHED[name][0]


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_forward_macs_match_torchvision(name: str) -> None:
    published = Decimal(PUBLISHED[name][1])
    # 0.5%, or half a unit of the last published digit where that is wider (0.057 for 56.5 M MACs)
    half_unit = Decimal(5) * Decimal(10) ** (published.as_tuple().exponent - 1)  # type: ignore[operator]
    tolerance = max(published * Decimal("0.005"), half_unit)
    assert abs(Decimal(macs(graph(name))) / Decimal(10**9) - published) <= tolerance


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_graph_shape_and_names(name: str) -> None:
    g = graph(name)
    side = 299 if name == "inception_v3" else 224
    assert g.name == name
    assert isinstance(g.nodes[0].op, Input) and g.nodes[0].output.shape == (3, side, side)
    assert g.nodes[-1].output.shape == (1000,)
    assert g.nodes[-1].op.kind != "cross_entropy"
    names = [n.name for n in g.nodes]
    assert len(names) == len(set(names))


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_residual_adds_sit_in_checkpoint_blocks(name: str) -> None:
    g = graph(name)
    assert all(n.block for n in g.nodes if isinstance(n.op, Add))
    if name not in ("alexnet", "vgg11", "vgg16", "vgg19"):
        assert g.blocks()


def test_resnet18_layers_by_hand() -> None:
    g = graph("resnet18")
    # conv1: 64*3*7*7 = 9408 weights, no bias; output 64x112x112, so 9408 * 112*112 = 118013952 MACs
    assert node_params(g, "conv1") == 9408
    assert node_macs(g, "conv1") == 118013952
    # layer2.0.downsample: 1x1 conv 64->128 (8192) + BatchNorm(128) weight and bias (256) = 8448
    assert node_params(g, "layer2.0.downsample") == 8448
    # fc: 512*1000 weights + 1000 biases = 513000
    assert node_params(g, "fc") == 513000
    # 2 + 2 + 2 + 2 BasicBlocks, each with one in-place `out += identity`
    assert sum(isinstance(n.op, Add) and n.op.inplace for n in g.nodes) == 8


def test_vit_b_16_by_hand() -> None:
    g = graph("vit_b_16")
    # patchify conv: 768*3*16*16 + 768 = 590592 params; 768 * 196 outputs * 3*16*16 = 115605504 MACs
    assert node_params(g, "conv_proj") == 590592
    assert node_macs(g, "conv_proj") == 115605504
    # class token 768 + position embedding 197*768 = 151296
    assert node_params(g, "class_token") + node_params(g, "encoder.pos_embedding") == 768 + 151296
    # attention matmuls QK^T and AV: 12 layers x 2 x 12 heads x 197 x 197 x 64 = 715327488
    attention = sum(node_macs(g, n.name) for n in g.nodes if n.op.kind == "attention")
    assert attention == 715327488


def test_swin_t_relative_position_tables() -> None:
    # (2*7-1)^2 = 169 entries per head; heads summed over blocks: 2*3 + 2*6 + 6*12 + 2*24 = 138
    g = graph("swin_t")
    tables = sum(n.op.param_count(g.input_specs(n)) for n in g.nodes if isinstance(n.op, WindowAttention))
    assert tables == 169 * 138
    # blocks 1, 3, 5 of stages 1-3 shift their windows; stage 4 (7x7, one window) never does
    shifted = [n.name for n in g.nodes if n.op.kind == "roll" and n.name.endswith("attn.roll")]
    assert shifted == [
        "features.1.1.attn.roll",
        "features.3.1.attn.roll",
        "features.5.1.attn.roll",
        "features.5.3.attn.roll",
        "features.5.5.attn.roll",
    ]


def test_inception_v3_aux_head_by_hand() -> None:
    # conv0 768*128 + bn 2*128 = 98560; conv1 128*768*5*5 + bn 2*768 = 2459136; fc 768*1000 + 1000 = 769000
    assert node_params(graph("inception_v3"), "AuxLogits.") == 98560 + 2459136 + 769000
    # without it the network has 27161264 - 3326696 = 23834568 parameters
    assert PUBLISHED["inception_v3"][0] - 3326696 == 23834568


def test_inplace_flags_follow_torchvision() -> None:
    resnet = graph("resnet50")
    assert all(n.op.inplace for n in resnet.nodes if isinstance(n.op, ReLU))
    assert all(n.op.inplace for n in graph("mobilenet_v2").nodes if isinstance(n.op, ReLU6))
    # MobileNetV3's SqueezeExcitation builds ReLU() and Hardsigmoid() without inplace
    se = [n for n in graph("mobilenet_v3_large").nodes if ".block.2.activation" in n.name]
    assert se and not any(n.op.inplace for n in se)
    # EfficientNet passes partial(nn.SiLU, inplace=True) to its SE block; every SiLU is in place
    assert all(n.op.inplace for n in graph("efficientnet_b0").nodes if isinstance(n.op, SiLU))


def test_views_and_copies() -> None:
    shufflenet = graph("shufflenet_v2_x1_0")
    assert sum(n.op.kind == "channel_shuffle" for n in shufflenet.nodes) == 4 + 8 + 4
    assert all(n.op.is_view for n in graph("convnext_tiny").nodes if n.op.kind in ("permute", "flatten"))
    dense = graph("densenet121")  # one cat per dense layer (6+12+24+16) and one per block
    assert sum(n.op.kind == "concat" for n in dense.nodes) == 58 + 4


def test_stochastic_depth_is_identity_in_eval_and_first_block() -> None:
    convnext = graph("convnext_tiny")
    probs = [n.op.p for n in convnext.nodes if isinstance(n.op, StochasticDepth)]
    assert probs[0] == 0.0 and probs[-1] == pytest.approx(0.1)
    op = StochasticDepth(0.1)
    spec = TensorSpec((96, 56, 56))
    assert op.is_identity(False) and not op.is_identity(True)
    assert [s.numel for s in op.extra_saved([spec], spec, True)] == [1]


def test_vision_ops_shapes_and_counts() -> None:
    hwc = TensorSpec((56, 56, 96))
    windows = WindowPartition(7).output_spec([hwc], "p")
    assert windows.shape == (64, 49, 96)
    assert WindowMerge(56, 56).output_spec([windows], "m").shape == (56, 56, 96)
    qkv = TensorSpec((64, 49, 288))
    attn = WindowAttention(heads=3, window=7)
    out = attn.output_spec([qkv], "a")
    assert out.shape == (64, 49, 96)
    assert attn.param_count([qkv]) == 169 * 3
    assert attn.forward_macs([qkv], out) == 2 * 64 * 49 * 49 * 96  # QK^T and AV per window
    assert PatchMerge().output_spec([hwc], "pm").shape == (28, 28, 384)
    assert LayerScale(0).param_count([TensorSpec((96, 56, 56))]) == 96


@pytest.mark.parametrize("name", ["resnet50", "inception_v3", "swin_t", "convnext_tiny", "efficientnet_b0"])
def test_memory_simulation_runs(name: str) -> None:
    g = graph(name)
    infer = replay_step(g, Workload(mode="infer", batch=2)).peak_bytes
    train = replay_step(g, Workload(batch=2)).peak_bytes
    checkpointed = replay_step(g, Workload(batch=2, checkpointing=True)).peak_bytes
    assert 0 < infer < train
    assert checkpointed <= train
