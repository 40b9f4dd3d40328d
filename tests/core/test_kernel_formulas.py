"""The kernels the analytic path derives for each layer (core.kernel_formulas via core.layer_kernels),
checked on small graphs with the arithmetic written out."""

from __future__ import annotations

from dataclasses import replace

import pytest

from advisor.core import zoo
from advisor.core.analytic import estimate
from advisor.core.estimate import LayerRow
from advisor.core.graph import Graph, GraphBuilder
from advisor.core.kernel_formulas import FORMULAS, formula
from advisor.core.kernels import Attention, AttentionBackend, Convolution, Matmul, Pass, Stream, kernels_macs
from advisor.core.ops import BatchNorm, Conv, CrossEntropy, Input, Linear, ReLU
from advisor.core.ops.attention import Attention as AttentionOp
from advisor.core.workload import Workload


def _row(graph: Graph, workload: Workload, name: str) -> LayerRow:
    return next(r for r in estimate(graph, workload).layers if r.name == name)


def _mlp() -> Graph:
    b = GraphBuilder("mlp")
    x = b.add(Input((1024,)), [], name="x")
    x = b.add(Linear(4096), [x], name="fc1")
    x = b.add(ReLU(), [x], name="relu")
    b.add(Linear(10), [x], name="fc2")
    return b.build()


def test_a_linear_layer_is_one_gemm_forward_and_two_backward() -> None:
    fc2 = _row(_mlp(), Workload("train", 8, "bf16", "adam"), "fc2")
    # M = 8 rows, N = 10 features, K = 4096; dgrad GEMM(M, K, N), wgrad GEMM(N, K, M); bf16: 2 bytes
    gemms = [k for k in fc2.kernels if isinstance(k, Matmul)]
    assert [(g.m, g.n, g.k, g.pass_) for g in gemms] == [
        (8, 10, 4096, Pass.FORWARD),
        (8, 4096, 10, Pass.INPUT_GRAD),
        (10, 4096, 8, Pass.WEIGHT_GRAD),
    ]
    assert all(g.dtype_bytes == 2 for g in gemms)
    bias_grad = [k for k in fc2.kernels if isinstance(k, Stream)]
    assert len(bias_grad) == 1 and bias_grad[0].read_bytes == 8 * 10 * 2  # the reduction reads grad_out
    assert (fc2.host_ops, fc2.autograd_nodes, fc2.param_tensors) == (1, 1, 2)


def test_the_first_layer_computes_no_input_gradient() -> None:
    fc1 = _row(_mlp(), Workload("train", 8, "fp32", "adam"), "fc1")
    passes = [k.pass_ for k in fc1.kernels if isinstance(k, Matmul)]
    assert passes == [Pass.FORWARD, Pass.WEIGHT_GRAD]  # the input image needs no gradient


def test_autocast_casts_weight_and_bias_each_call_and_their_gradients_back() -> None:
    fc2 = _row(_mlp(), Workload("train", 8, "amp_bf16", "adam"), "fc2")
    casts = [k for k in fc2.kernels if isinstance(k, Stream) and not k.flops]  # the bias reduction computes
    # forward: weight 10 x 4096 and bias 10 read in fp32 (4 B), written in bf16 (2 B); backward the reverse
    assert [(c.read_bytes, c.written_bytes, c.pass_) for c in casts] == [
        (40960 * 4, 40960 * 2, Pass.FORWARD),
        (10 * 4, 10 * 2, Pass.FORWARD),
        (40960 * 2, 40960 * 4, Pass.BACKWARD),
        (10 * 2, 10 * 4, Pass.BACKWARD),
    ]
    assert fc2.host_ops == 3  # addmm and the two casts


def test_inference_runs_forward_kernels_only() -> None:
    row = _row(_mlp(), Workload("infer", 8, "fp32"), "relu")
    # relu: read 8 x 4096 x 4 B, write as much, one comparison per element
    assert row.kernels == (Stream(read_bytes=131072, written_bytes=131072, flops=32768, pass_=Pass.FORWARD),)
    assert row.autograd_nodes == 0


def _convnet(groups: int) -> Graph:
    b = GraphBuilder("conv")
    x = b.add(Input((32, 56, 56)), [], name="x")
    x = b.add(Conv(32, 3, padding=1, groups=groups, bias=False), [x], name="conv")
    x = b.add(BatchNorm(), [x], name="bn")
    b.add(ReLU(), [x], name="relu")
    return b.build()


def test_a_convolution_is_an_implicit_gemm_by_its_shapes() -> None:
    (conv,) = _row(_convnet(1), Workload("infer", 2), "conv").kernels
    assert isinstance(conv, Convolution)
    # M = 2 x 56 x 56 = 6272 output pixels, N = 32 channels, K = 32 x 3 x 3 = 288
    assert conv.implicit_gemm() == (6272, 32, 288)
    assert conv.macs == 6272 * 32 * 288  # 57,802,752


def test_a_depthwise_convolution_has_nine_macs_per_output() -> None:
    (conv,) = _row(_convnet(32), Workload("infer", 2), "conv").kernels
    assert isinstance(conv, Convolution) and conv.macs_per_output == 9  # 1 channel x 3 x 3
    # the direct kernel moves input + output + weight once: (2 x 32 x 3136 x 2) + 32 x 9, in fp32
    assert conv.tensor_bytes() == (2 * 32 * 3136 * 2 + 32 * 9) * 4


def test_training_batch_norm_reads_its_input_twice_and_counts_its_batch() -> None:
    bn = _row(_convnet(1), Workload("train", 2, "fp32", "sgd"), "bn")
    x = 2 * 32 * 56 * 56 * 4  # 802,816 bytes
    streams = [(k.read_bytes, k.written_bytes, k.pass_) for k in bn.kernels]
    assert streams[0] == (2 * x, x, Pass.FORWARD)  # statistics, then normalising
    assert streams[1][2] is Pass.FORWARD  # num_batches_tracked.add_(1)
    assert streams[2] == (4 * x, x, Pass.BACKWARD)
    assert (bn.host_ops, bn.autograd_nodes) == (2, 1)  # the counter records no autograd node


def _attention(kernel: str) -> Graph:
    b = GraphBuilder("attn")
    x = b.add(Input((128, 768)), [], name="x")
    x = b.add(Linear(3 * 768), [x], name="qkv")  # trained: backward runs through the attention
    b.add(AttentionOp(heads=12, causal=True, kernel=kernel), [x], name="attn")  # type: ignore[arg-type]
    return b.build()


def test_fused_attention_is_one_kernel_each_way() -> None:
    row = _row(_attention("fused"), Workload("train", 4, "bf16", "adam"), "attn")
    fused = [k for k in row.kernels if isinstance(k, Attention)]
    assert [k.pass_ for k in fused] == [Pass.FORWARD, Pass.BACKWARD]
    forward = fused[0]
    assert (forward.batch_heads, forward.q_len, forward.head_dim, forward.backend) == (
        48,
        128,
        64,
        AttentionBackend.FLASH,
    )
    assert forward.flops == 2 * 48 * 128 * 128 * (64 + 64)  # QK^T and PV: 201,326,592
    assert fused[1].flops == forward.flops * 5 // 2  # backward recomputes the scores


def test_eager_attention_is_two_batched_matmuls() -> None:
    row = _row(_attention("eager"), Workload("infer", 4, "fp32"), "attn")
    bmm = [k for k in row.kernels if isinstance(k, Matmul)]
    # scores (128 x 128 by 64) and probabilities x values (128 x 64 by 128), 4 x 12 = 48 of each
    assert [(k.m, k.n, k.k, k.batches) for k in bmm] == [(128, 128, 64, 48), (128, 64, 128, 48)]
    assert kernels_macs(row.kernels) == 2 * 48 * 128 * 128 * 64


def test_the_loss_streams_its_logits() -> None:
    b = GraphBuilder("loss")
    x = b.add(Input((1000,)), [], name="logits")
    b.add(CrossEntropy(), [x], name="loss")
    row = _row(b.build(), Workload("infer", 2, "fp32"), "loss")
    # log_softmax reads 2 x 1000 x 4 B and writes as much; nll_loss reads it and writes the loss
    assert [(k.read_bytes, k.written_bytes) for k in row.kernels] == [(8000, 8000), (8000, 4)]


def test_a_formula_registered_twice_is_an_error() -> None:
    with pytest.raises(ValueError, match="Linear"):
        formula(Linear)(FORMULAS[Linear])


def _dequantize_streams(row: LayerRow) -> list[tuple[int, int, Pass]]:
    return [(k.read_bytes, k.written_bytes, k.pass_) for k in row.kernels if isinstance(k, Stream) and k.read_bytes]


@pytest.mark.parametrize("checkpointing", [False, True])
def test_a_qlora_projection_dequantizes_its_nf4_base_each_pass_and_has_no_base_weight_gradient(
    checkpointing: bool,
) -> None:
    graph = zoo.build("smollm2-135m", 64)
    w = Workload("train", 2, "bf16", "adamw", finetune="qlora", lora_rank=8, checkpointing=checkpointing)
    q = _row(graph, w, "layers.1.self_attn.q_proj")  # 576 x 576 base, rank 8, 2 x 64 = 128 tokens
    # dequantize_4bit of 576 x 576 = 331,776 weights: 5,184 absmax bytes (one per 64), 21 float32 second-level
    # absmax (one per 256 blocks); kernels: absmax 8 bit -> fp32 (read 5,184 + 84, write 4 x 5,184 = 20,736),
    # absmax += offset (20,736 each way), then 4-bit -> bf16 (read 331,776 / 2 + 20,736 = 186,624, write 2 x 331,776)
    one = [(5268, 20736), (20736, 20736), (186624, 663552)]
    passes = [Pass.FORWARD, Pass.BACKWARD] + ([Pass.BACKWARD] if checkpointing else [])  # + the recompute
    streams = [s for s in _dequantize_streams(q) if (s[0], s[1]) in one]
    assert streams == [(r, wr, p) for p in passes for r, wr in one]
    # the only weight-gradient GEMMs are the adapters': lora_B (576 x 8 by the 128 tokens), lora_A (8 x 576)
    wgrad = [(k.m, k.n, k.k) for k in q.kernels if isinstance(k, Matmul) and k.pass_ is Pass.WEIGHT_GRAD]
    assert wgrad == [(576, 8, 128), (8, 576, 128)]
    # PEFT's five forward ops, the two casts around its fp32 adapters on the bf16 base (the input to fp32, the
    # adapters' output back) and dequantize_4bit's three kernels
    assert q.host_ops == 5 + 2 + 3
    lora = _row(graph, replace(w, finetune="lora"), "layers.1.self_attn.q_proj")
    assert not [s for s in _dequantize_streams(lora) if (s[0], s[1]) in one] and lora.host_ops == 5 + 2
    # adapters kept in the base's bf16 (torchtune, FSDP mixed precision) cast nothing
    assert _row(graph, replace(w, adapter_dtype="base"), "layers.1.self_attn.q_proj").host_ops == 5 + 3
