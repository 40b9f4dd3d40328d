"""The kernels one layer launches in a step, from its estimate row: GEMM shapes of conv/linear layers
(implicit GEMM for convolutions), fused attention, and the bytes of memory-bound kernels.

GEMM dimensions come from what a LayerRow carries. Linear: N = output features (last dim), M = output
elements / N, K = MACs / output elements. Convolution as implicit GEMM (cuDNN): M = batch x output pixels,
N = output channels, K = input channels / groups x kernel area = MACs per output element.
Backward runs the input gradient as GEMM(M, K, N) and the weight gradient as GEMM(N, K, M) (the reduction
over batch x pixels), the shapes cuBLAS and cuDNN's dgrad/wgrad kernels multiply.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from advisor.core.estimate import LayerRow

# Layer kinds of the analytic graph, and the nn.Module class names a simulated estimate reports
# (HF's Conv1D is a linear layer).
CONV_KINDS = frozenset({"conv", "conv_transpose", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d",
                        "ConvTranspose2d", "ConvTranspose3d"})
MATMUL_KINDS = frozenset({"linear", "lstm", "gru", "Linear", "Conv1D", "NonDynamicallyQuantizableLinear",
                          "LSTM", "GRU", "RNN"})
ATTENTION_KINDS = frozenset({"attention", "window_attention", "MultiheadAttention"})
# Kinds that launch no kernel of their own (the input is copied to the card before the step).
NO_KERNEL_KINDS = frozenset({"input"})
# An attention layer's forward dispatches ~9 ops from Python: q, k and v each split into heads (view +
# transpose), the fused kernel, then the heads merged back (transpose + reshape): the forward of
# transformers' BertSelfAttention / GPT2Attention and torch.nn.MultiheadAttention.
ATTENTION_HOST_OPS = 9
NORM_KINDS = frozenset({"batchnorm", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d"})
# Layers written as several PyTorch ops, each its own kernel and autograd node: transformers'
# NewGELUActivation (GPT-2's gelu_new) is 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * pow(x, 3)))):
# pow, mul, add, mul, tanh, add, mul, mul.
COMPOSITE_OPS = {"gelu_tanh_composite": 8, "NewGELUActivation": 8}
# Convolutions with fewer multiply-adds per output than this (depthwise: 9) do too little arithmetic per
# byte for a GEMM: cuDNN runs them as direct kernels bound by memory bandwidth.
MIN_MACS_PER_OUTPUT_FOR_GEMM = 64


@dataclass(frozen=True)
class Gemm:
    m: int
    n: int
    k: int
    dtype_bytes: int
    conv: bool  # cuDNN implicit GEMM (TF32 in fp32) rather than cuBLAS


@dataclass(frozen=True)
class LayerWork:
    """Card-independent kernels of one layer over a whole step (forward, and backward when training)."""

    gemms: tuple[Gemm, ...]
    attention_flops: float  # fused attention kernels (forward, and backward's recomputation)
    stream_bytes: float  # bytes the memory-bound kernels read and write
    simt_flops: float  # arithmetic of those kernels (CUDA cores)
    kernels: int  # launches
    host_ops: int  # forward ops the Python interpreter dispatches (backward runs in the C++ engine)
    param_tensors: int = 0
    untracked_ops: int = 0  # of host_ops, those that record no autograd node (buffer updates)


def _gemm_dims(row: LayerRow) -> tuple[int, int, int]:
    outputs = max(row.batch_outputs, 1)
    shape = row.output_shape or (1,)
    n = shape[0] if row.kind in CONV_KINDS and len(shape) > 1 else shape[-1]
    return max(outputs // max(n, 1), 1), max(n, 1), max(row.forward_macs // outputs, 1)


def _param_tensors(row: LayerRow, n: int, k: int) -> int:
    """Weight, plus a bias when the layer has more parameters than its n x k weight."""
    if not row.param_count:
        return 0
    return 2 if row.param_count > n * k or row.kind not in CONV_KINDS | MATMUL_KINDS else 1


def _gemm_layer(row: LayerRow, training: bool, dtype: int, amp: bool) -> LayerWork:
    m, n, k = _gemm_dims(row)
    conv = row.kind in CONV_KINDS
    gemms = [Gemm(m, n, k, dtype, conv)]
    # autocast casts the fp32 weight (and bias) to half on every call: an op, a kernel and an autograd
    # node each; read 4 bytes and write 2 per parameter (and back for their gradients in backward)
    casts = _param_tensors(row, n, k) if amp else 0
    cast_bytes = 6.0 * row.param_count if casts else 0.0
    kernels, host, moved = 1 + casts, 1 + casts, cast_bytes
    if training and row.backward_flops:
        if row.backward_flops > 1.5 * row.forward_flops:  # the input needs its gradient too
            gemms.append(Gemm(m, k, n, dtype, conv))
        if row.param_count:
            gemms.append(Gemm(n, k, m, dtype, conv))
        kernels += len(gemms) - 1 + casts
        moved += cast_bytes
    return LayerWork(tuple(gemms), 0.0, moved, 0.0, kernels, host, _param_tensors(row, n, k))


def _attention_layer(row: LayerRow, training: bool) -> LayerWork:
    # FlashAttention reads q, k, v and writes the output (4 x output); backward reads those, the output
    # gradient and writes dq, dk, dv (~8 x output) in a preprocessing, a main and a dq-conversion kernel.
    passes = (1, 3) if training else (1, 0)
    moved = row.output_bytes * (4 + (8 if training else 0))
    return LayerWork((), float(row.forward_flops + row.backward_flops), moved, 0.0, sum(passes),
                     ATTENTION_HOST_OPS)


def _stream_layer(row: LayerRow, training: bool, in_bytes: int) -> LayerWork:
    """Elementwise, normalisation, pooling, loss, depthwise convolution: read the input, write the output;
    backward reads the output's gradient and what was saved, and writes the input's gradient."""
    largest = max(in_bytes, row.output_bytes)
    inputs = 2 if row.kind in ("add", "mul", "Add") else 1
    ops = COMPOSITE_OPS.get(row.kind, 1)
    # batch norm in training reads its input twice in forward (statistics, then normalising) and in backward
    # reads input and output gradient twice (the reductions for the weight gradients, then the input's);
    # nn.BatchNorm's training forward also counts the batch, num_batches_tracked.add_(1) (torch/nn/modules/
    # batchnorm.py): one more op and kernel, without an autograd node (benchmarks/host_dispatch.py measures
    # a train-mode BatchNorm2d call ~24 us dearer on the host than an inference one)
    stats = training and row.kind in NORM_KINDS
    moved = ops * ((inputs + stats) * in_bytes + row.output_bytes)
    kernels = ops + stats
    if training and row.backward_flops:
        moved += ops * (3 + 2 * stats) * largest + 2 * row.param_count * 4  # and the parameters' gradients
        kernels += ops
    flops = row.forward_flops + row.backward_flops
    return LayerWork((), 0.0, float(moved), float(flops), kernels, ops + stats, 2 if row.param_count else 0,
                     untracked_ops=int(stats))


def _cross_entropy_layer(row: LayerRow, training: bool, in_bytes: int, act_bytes: int) -> LayerWork:
    """F.cross_entropy as it runs: half-precision logits are first cast to fp32 (autocast puts cross_entropy
    on its fp32 list; Hugging Face's causal-LM loss calls logits.float() in every precision), then
    log_softmax reads them and writes fp32 log-probabilities and nll_loss picks one per row. Backward fills
    the log-probabilities' gradient with zeros and scatters into it (nll_loss_backward), log_softmax_backward
    reads that gradient and the saved output and writes the logits' gradient, and the cast back writes it in
    half. For a 50,257-word vocabulary these tensors are the largest of the step (torch/nn/functional.py,
    aten/src/ATen/native/LossNLL.cpp)."""
    elements = in_bytes // act_bytes
    fp32 = 4 * elements
    cast = act_bytes < 4
    moved = cast * (in_bytes + fp32) + 2 * fp32
    kernels = 2 + cast
    if training:
        moved += fp32 + 3 * fp32 + cast * (fp32 + in_bytes)
        kernels += 3 + cast
    return LayerWork((), 0.0, float(moved), float(row.forward_flops + row.backward_flops), kernels, 1 + cast)


def layer_works(rows: Sequence[LayerRow], training: bool, act_bytes: int, amp: bool) -> tuple[LayerWork, ...]:
    out, previous_bytes = [], 0
    for row in rows:
        in_bytes = previous_bytes or row.output_bytes
        if row.output_bytes:
            previous_bytes = row.output_bytes
        if row.kind in NO_KERNEL_KINDS or not (row.output_bytes or row.forward_flops):
            continue  # views launch no kernel
        outputs = max(row.batch_outputs, 1)
        gemm = row.kind in CONV_KINDS | MATMUL_KINDS and row.forward_macs >= MIN_MACS_PER_OUTPUT_FOR_GEMM * outputs
        if gemm:
            out.append(_gemm_layer(row, training, act_bytes, amp))
        elif row.kind == "cross_entropy":
            out.append(_cross_entropy_layer(row, training, in_bytes, act_bytes))
        elif row.kind in ATTENTION_KINDS and row.forward_macs:
            out.append(_attention_layer(row, training))
        else:
            out.append(_stream_layer(row, training, in_bytes))
    return tuple(out)
