"""Per-op formulas, with the arithmetic beside each expected number."""

from dataclasses import dataclass
from typing import ClassVar

import pytest

from advisor.core.errors import ShapeError, SpecError
from advisor.core.graph import GraphBuilder, TensorSpec
from advisor.core.ops import (
    GRU,
    LSTM,
    OP_REGISTRY,
    Attention,
    BatchNorm,
    Concat,
    Conv,
    ConvTranspose,
    CrossEntropy,
    Dropout,
    Embedding,
    FusedSDPA,
    Input,
    LayerNorm,
    Linear,
    MaxPool,
    Op,
    ReLU,
    register_op,
    require_registered,
)


def spec(*shape: int) -> TensorSpec:
    return TensorSpec(tuple(shape))


def test_linear_counts() -> None:
    op, x = Linear(10), spec(784)
    out = op.output_spec([x], "fc")
    assert out.shape == (10,)
    assert op.param_count([x]) == 7850  # 784*10 + 10
    assert op.forward_macs([x], out) == 7840  # 784*10
    assert op.forward_flops([x], out) == 15680  # 2 * 7840
    assert op.backward_flops([x], out, input_grad=True) == 31360  # 2 * (7840 weight + 7840 input)
    assert op.backward_flops([x], out, input_grad=False) == 15680  # weights only


def test_linear_on_a_sequence_applies_to_the_last_dim() -> None:
    op, x = Linear(3072), spec(128, 768)
    out = op.output_spec([x], "fc")
    assert out.shape == (128, 3072)
    assert op.forward_macs([x], out) == 301989888  # 128*768*3072


def test_conv_output_size_params_and_macs() -> None:
    op, x = Conv(64, 7, stride=2, padding=3, bias=False), spec(3, 224, 224)
    out = op.output_spec([x], "conv1")
    assert out.shape == (64, 112, 112)  # floor((224 + 6 - 7) / 2) + 1 = 112
    assert op.param_count([x]) == 9408  # 64*3*7*7
    assert op.forward_macs([x], out) == 118013952  # 64*112*112 outputs * 3*7*7


def test_depthwise_separable_cuts_compute_about_eight_fold() -> None:
    x = spec(256, 56, 56)
    full = Conv(256, 3, padding=1)
    dw, pw = Conv(256, 3, padding=1, groups=256), Conv(256, 1)
    full_macs = full.forward_macs([x], full.output_spec([x], "a"))  # 256*56*56 * 256*9
    separable = dw.forward_macs([x], dw.output_spec([x], "b")) + pw.forward_macs([x], pw.output_spec([x], "c"))
    assert full_macs == 1849688064
    assert separable == 7225344 + 205520896  # 256*56*56*9 + 256*56*56*256
    assert 8 < full_macs / separable < 9  # 1 / (1/256 + 1/9) = 8.7


def test_dilation_and_error_names_the_layer() -> None:
    op = Conv(8, 3, dilation=2)
    assert op.output_spec([spec(1, 9, 9)], "c").shape == (8, 5, 5)  # reach 5: 9 - 5 + 1
    with pytest.raises(ShapeError, match="conv3: kernel 7x7 larger than padded input 5x5"):
        Conv(8, 7).output_spec([spec(1, 5, 5)], "conv3")
    with pytest.raises(ShapeError, match="c: groups 3 must divide in_channels 4"):
        Conv(6, 3, groups=3).output_spec([spec(4, 9, 9)], "c")


def test_conv_transpose_doubles_resolution() -> None:
    op, x = ConvTranspose(32, 4, stride=2, padding=1), spec(64, 16, 16)
    out = op.output_spec([x], "up")
    assert out.shape == (32, 32, 32)  # (16-1)*2 - 2 + 3 + 1 = 32
    assert op.param_count([x]) == 32800  # 64*32*4*4 + 32
    assert op.forward_macs([x], out) == 8388608  # 64*16*16 inputs * 32*4*4


def test_maxpool_keeps_int64_indices() -> None:
    op, x = MaxPool(3, stride=2, padding=1), spec(64, 112, 112)
    out = op.output_spec([x], "pool")
    assert out.shape == (64, 56, 56)
    (indices,) = op.extra_saved([x], out, training=True)
    assert (indices.numel, indices.dtype) == (200704, "int64")  # 64*56*56


def test_maxpool_ceil_mode() -> None:
    assert MaxPool(3, stride=2, ceil_mode=True).output_spec([spec(64, 55, 55)], "p").shape == (64, 27, 27)
    assert MaxPool(2, ceil_mode=True).output_spec([spec(8, 5, 5)], "p").shape == (8, 3, 3)


def test_batchnorm_and_layernorm_params() -> None:
    assert BatchNorm().param_count([spec(64, 8, 8)]) == 128  # gamma, beta
    assert BatchNorm().buffer_count([spec(64, 8, 8)]) == 128  # running mean, var
    assert LayerNorm().param_count([spec(128, 768)]) == 1536  # 2 * 768


def test_dropout_is_identity_in_eval_and_keeps_a_mask_in_training() -> None:
    op, x = Dropout(0.1), spec(128, 768)
    assert op.is_identity(training=False)
    (mask,) = op.extra_saved([x], x, training=True)
    assert (mask.numel, mask.dtype) == (98304, "bool")  # 128*768, one byte each
    with pytest.raises(ShapeError, match="d: dropout probability"):
        Dropout(1.5).output_spec([x], "d")


def test_attention_macs_and_fused_memory() -> None:
    op, qkv = Attention(heads=12, causal=True), spec(1024, 3 * 768)
    out = op.output_spec([qkv], "attn")
    assert out.shape == (1024, 768)
    assert op.forward_macs([qkv], out) == 1610612736  # 2 * 12 heads * 1024 * 1024 * 64
    kept = {s.what: s.numel for s in op.extra_saved([qkv], out, training=True)}
    assert kept == {"kernel output": 786432, "log-sum-exp": 12288}  # 1024*768; 12*1024, no 1024x1024
    math = Attention(heads=12, kernel="math", dropout=0.1)
    probs = {s.what: s.numel for s in math.extra_saved([qkv], out, training=True)}
    assert probs["softmax probabilities"] == 12582912  # 12 * 1024 * 1024


def test_both_descriptions_of_the_fused_kernel_keep_and_take_the_same() -> None:
    """Attention (layer graphs) and FusedSDPA (traced calls) describe one kernel: the same log-sum-exp and the
    same float32 backward workspace for the same call."""
    layer, qkv = Attention(heads=12, causal=True), spec(1024, 3 * 768)
    out = layer.output_spec([qkv], "attn")
    traced = FusedSDPA()
    q = TensorSpec((12, 1024, 64))  # per sample: heads, seq, head_dim
    traced_out = traced.output_spec([q, q, q], "sdpa")
    # flash (half precision, no mask): dq_accum and softmax_d, 12 * 1024 * (64 + 1) = 798,720 floats
    assert traced.backward_workspace([q, q, q], traced_out) == 798720
    assert layer.backward_workspace([qkv], out) == 2 * 798720  # in the half-precision op's elements
    # memory-efficient (fp32): one float32 delta per query row, 12 * 1024 = 12,288
    fp32 = layer.for_dtype(4, autocast=False)
    mask = TensorSpec((1, 1024, 1024))
    assert (
        fp32.backward_workspace([qkv], out)
        == FusedSDPA(input_count=4).backward_workspace([q, q, q, mask], traced_out)
        == 12288
    )
    lse = {s.what: (s.numel, s.dtype) for s in fp32.extra_saved([qkv], out, training=True)}
    assert lse["log-sum-exp"] == (12288, "float32")  # 12 * 1024, already a multiple of 32 rows


def test_grouped_query_attention_shapes() -> None:
    op = Attention(heads=32, kv_heads=4)
    q, kv = spec(16, 4096), spec(16, 512)  # head_dim 128; 4 kv heads * 128
    assert op.output_spec([q, kv, kv], "a").shape == (16, 4096)
    with pytest.raises(ShapeError, match="a: heads 32 must be a multiple of kv_heads 5"):
        Attention(heads=32, kv_heads=5).output_spec([q, kv, kv], "a")


def test_lstm_and_gru_params_match_pytorch() -> None:
    x = spec(35, 128)
    # nn.LSTM(128, 256, num_layers=2): layer 0: 4*256*(128+256) + 2*4*256 = 395264; layer 1: 4*256*512 + 2048
    assert LSTM(256, num_layers=2).param_count([x]) == 395264 + 526336
    # nn.GRU(128, 64, bidirectional=True): 2 * (3*64*(128+64) + 2*3*64) = 74496
    assert GRU(64, bidirectional=True).param_count([x]) == 74496
    assert GRU(64, bidirectional=True).output_spec([x], "g").shape == (35, 128)


def test_embedding_and_loss() -> None:
    ids = TensorSpec((512,), "int64")
    op = Embedding(30522, 768)
    assert op.output_spec([ids], "e").shape == (512, 768)
    assert op.param_count([ids]) == 23440896  # 30522*768
    with pytest.raises(ShapeError, match="pos: sequence length 513 exceeds 512 positions"):
        Embedding(512, 768, index="position").output_spec([TensorSpec((513,), "int64")], "pos")
    loss = CrossEntropy()
    assert loss.target_count([spec(1024, 50257)]) == 1024
    assert loss.target_count([spec(21, 64, 64)]) == 4096  # per-pixel targets


def test_concat_checks_the_other_dims() -> None:
    assert Concat().output_spec([spec(64, 8, 8), spec(32, 8, 8)], "cat").shape == (96, 8, 8)
    with pytest.raises(ShapeError, match="cat: cannot concatenate"):
        Concat().output_spec([spec(64, 8, 8), spec(32, 4, 4)], "cat")


def test_builder_names_layers_and_rejects_duplicates() -> None:
    b = GraphBuilder("net")
    x = b.add(Input((3, 8, 8)), [])
    x = b.add(Conv(4, 3), [x])
    with b.block("stage1"):
        b.add(Conv(4, 3), [x])
    graph = b.build()
    assert [n.name for n in graph.nodes] == ["input1", "conv1", "stage1.conv2"]
    assert graph.blocks() == [("stage1", [2])]
    with pytest.raises(ShapeError, match="bad: kernel 9x9 larger than padded input 6x6"):
        b.add(Conv(4, 9), [x], "bad")


def test_the_registry_refuses_a_kind_claimed_twice_or_inherited() -> None:
    with pytest.raises(ValueError, match="'relu' is registered by both ReLU and OtherReLU"):

        @register_op
        @dataclass(frozen=True)
        class OtherReLU(ReLU):
            kind: ClassVar[str] = "relu"

    with pytest.raises(ValueError, match="CopiedReLU declares no kind of its own"):

        @register_op
        @dataclass(frozen=True)
        class CopiedReLU(ReLU):  # inherits "relu", as a copied class would
            pass

    assert OP_REGISTRY["relu"] is ReLU  # neither refused class got in


def test_an_importer_cannot_return_an_unregistered_kind() -> None:
    @dataclass(frozen=True)
    class Stray(Op):  # an importer's private op, never registered
        kind: ClassVar[str] = "stray"

        def output_spec(self, inputs: object, layer: str) -> object:  # type: ignore[override]
            return inputs[0]  # type: ignore[index]

    b = GraphBuilder("net")
    b.add(Stray(), [b.add(Input((4,)), [])], "odd")
    with pytest.raises(SpecError, match=r"net\.py: layer odd: kind 'stray' \(Stray\) is not a registered"):
        require_registered(b.build(), "net.py")
