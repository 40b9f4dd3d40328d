"""Kernel formulas (core.kernel_formulas) of the layers that mix tokens: fused and eager attention, Swin's
window attention, cuDNN's recurrent layers and a mixture of experts' GEMMs."""

from __future__ import annotations

from collections.abc import Sequence

from advisor.core.graph import TensorSpec
from advisor.core.kernel_formulas import OpKernels, OpStep, formula, matmul_kernel, runs_backward, stream_kernels
from advisor.core.kernels import Attention, AttentionBackend, Kernel, Pass, Stream
from advisor.core.ops.attention import Attention as AttentionOp
from advisor.core.ops.attention import FusedSDPA
from advisor.core.ops.base import Op, product
from advisor.core.ops.moe import MoEExperts
from advisor.core.ops.recurrent import _Recurrent
from advisor.core.ops.vision_ops import WindowAttention


def _fused_attention(
    rows: int, seq_q: int, seq_k: int, dims: tuple[int, int], causal: bool, efficient: bool, step: OpStep
) -> OpKernels:
    """One fused kernel forward; backward: flash's preprocessing (dot(dO, O)), the main kernel and the
    float32 dq_accum converted to dq (flash_api.cpp mha_bwd), two of them memory-bound."""
    backend = AttentionBackend.EFFICIENT if efficient or step.dtype_bytes == 4 else AttentionBackend.FLASH
    fields = dict(
        batch_heads=rows * step.rows,
        q_len=seq_q,
        kv_len=seq_k,
        head_dim=dims[0],
        v_head_dim=dims[1],
        causal=causal,
        backend=backend,
        dtype_bytes=step.dtype_bytes,
    )
    kernels: list[Kernel] = [Attention(**fields, pass_=Pass.FORWARD)]  # type: ignore[arg-type]
    if runs_backward(step):
        q_elements = rows * step.rows * seq_q * dims[0]
        kernels += [
            Attention(**fields, pass_=Pass.BACKWARD),  # type: ignore[arg-type]
            Stream(
                read_bytes=2 * step.output_bytes,
                written_bytes=4 * rows * step.rows * seq_q,
                flops=0,
                pass_=Pass.BACKWARD,
            ),
            Stream(
                read_bytes=4 * q_elements, written_bytes=step.dtype_bytes * q_elements, flops=0, pass_=Pass.BACKWARD
            ),
        ]
    return OpKernels(kernels=tuple(kernels), host_ops=1, autograd_nodes=1)


def _explicit_attention(
    rows: int, seq_q: int, seq_k: int, dims: tuple[int, int], step: OpStep, softmax_ops: int
) -> OpKernels:
    """Eager attention: scores = q @ k^T (bmm), `softmax_ops` memory-bound kernels over the scores (scale,
    mask, softmax, dropout), probs @ v (bmm); backward two bmm per product and the softmax's gradient."""
    b = rows * step.rows
    scores = b * seq_q * seq_k * step.dtype_bytes
    kernels: list[Kernel] = [matmul_kernel(seq_q, seq_k, dims[0], step, Pass.FORWARD, batches=b)]
    kernels += [
        Stream(read_bytes=scores, written_bytes=scores, flops=scores // step.dtype_bytes, pass_=Pass.FORWARD)
        for _ in range(softmax_ops)
    ]
    kernels.append(matmul_kernel(seq_q, dims[1], seq_k, step, Pass.FORWARD, batches=b))
    if runs_backward(step):
        kernels += [
            matmul_kernel(seq_q, seq_k, dims[1], step, Pass.INPUT_GRAD, batches=b),
            matmul_kernel(seq_k, dims[1], seq_q, step, Pass.INPUT_GRAD, batches=b),
            Stream(
                read_bytes=2 * scores, written_bytes=scores, flops=2 * scores // step.dtype_bytes, pass_=Pass.BACKWARD
            ),
            matmul_kernel(seq_q, dims[0], seq_k, step, Pass.INPUT_GRAD, batches=b),
            matmul_kernel(seq_k, dims[0], seq_q, step, Pass.INPUT_GRAD, batches=b),
        ]
    return OpKernels(kernels=tuple(kernels), host_ops=2 + softmax_ops, autograd_nodes=2 + softmax_ops)


@formula(AttentionOp)
def _attention(op: Op, inputs: Sequence[TensorSpec], output: TensorSpec, step: OpStep) -> OpKernels:
    assert isinstance(op, AttentionOp)
    seq_q, seq_k = inputs[0].shape[0], inputs[-1].shape[0]
    hd = op.head_dim(inputs)
    dims = (hd, op.v_head_dim or hd)
    if op.kernel == "fused":
        return _fused_attention(op.heads, seq_q, seq_k, dims, op.causal, op.mask_bias or op.full_precision, step)
    return _explicit_attention(op.heads, seq_q, seq_k, dims, step, softmax_ops=3 + op.causal)


@formula(FusedSDPA)
def _sdpa(op: Op, inputs: Sequence[TensorSpec], output: TensorSpec, step: OpStep) -> OpKernels:
    assert isinstance(op, FusedSDPA)
    q, k = inputs[0].shape, inputs[1].shape
    return _fused_attention(product(q[:-2]), q[-2], k[-2], (q[-1], output.shape[-1]), False, len(inputs) > 3, step)


@formula(WindowAttention)
def _window_attention(op: Op, inputs: Sequence[TensorSpec], output: TensorSpec, step: OpStep) -> OpKernels:
    # torchvision's Swin computes attention explicitly: scale, bias add, (mask add), softmax around two matmuls
    assert isinstance(op, WindowAttention)
    windows, tokens, width = inputs[0].shape
    head_dim = width // 3 // op.heads
    return _explicit_attention(
        windows * op.heads, tokens, tokens, (head_dim, head_dim), step, softmax_ops=2 + op.shifted
    )


@formula(_Recurrent)
def _recurrent(op: Op, inputs: Sequence[TensorSpec], output: TensorSpec, step: OpStep) -> OpKernels:
    """cuDNN's RNN: per layer and direction, one GEMM for every step's input projection, then one small GEMM
    per time step for the recurrent projection (each waits for the last) and the gates' elementwise kernel."""
    assert isinstance(op, _Recurrent)
    seq, features = inputs[0].shape
    g, h = op.gates * op.hidden_size, op.hidden_size
    kernels: list[Kernel] = []
    for n_in in op._layer_inputs(features):
        for _ in range(op.directions):
            kernels += [
                matmul_kernel(seq * step.rows, g, n_in, step, Pass.FORWARD),
                matmul_kernel(step.rows, g, h, step, Pass.FORWARD, launches=seq),
                Stream(
                    read_bytes=seq * step.rows * g * step.dtype_bytes,
                    written_bytes=seq * step.rows * 2 * h * step.dtype_bytes,
                    flops=6 * seq * step.rows * g,
                    pass_=Pass.FORWARD,
                ),
            ]
            if runs_backward(step):
                kernels += [
                    matmul_kernel(seq * step.rows, n_in, g, step, Pass.INPUT_GRAD),
                    matmul_kernel(step.rows, h, g, step, Pass.INPUT_GRAD, launches=seq),
                    *(
                        [matmul_kernel(g, n_in + h, seq * step.rows, step, Pass.WEIGHT_GRAD)]
                        if step.weight_grad
                        else []
                    ),
                ]
    return OpKernels(kernels=tuple(kernels), host_ops=1, autograd_nodes=1)


@formula(MoEExperts)
def _moe(op: Op, inputs: Sequence[TensorSpec], output: TensorSpec, step: OpStep) -> OpKernels:
    """transformers' eager experts loop: per expert hit, index the routed tokens, the gate/up and down GEMMs of
    its share of the rows (tokens x experts_per_token / experts on average), the activation, index_add_ back."""
    assert isinstance(op, MoEExperts)
    hidden = output.shape[-1]
    tokens = output.numel // hidden * step.rows
    rows = max(tokens * op.experts_per_token // op.experts, 1)
    ups = op._projections - 1
    kernels: list[Kernel] = []
    for _ in range(op.experts):
        kernels += [
            matmul_kernel(rows, op.intermediate, hidden, step, Pass.FORWARD, launches=ups),
            matmul_kernel(rows, hidden, op.intermediate, step, Pass.FORWARD),
        ]
        if runs_backward(step):
            kernels += [
                matmul_kernel(rows, hidden, op.intermediate, step, Pass.INPUT_GRAD, launches=ups),
                matmul_kernel(rows, op.intermediate, hidden, step, Pass.INPUT_GRAD),
                *(
                    [matmul_kernel(op.intermediate, hidden, rows, step, Pass.WEIGHT_GRAD, launches=ups + 1)]
                    if step.weight_grad
                    else []
                ),
            ]
    streamed = stream_kernels(op, inputs, output, step, ops=4)
    ops = op.experts * (op._projections + 4)
    return OpKernels(kernels=tuple(kernels) + streamed.kernels, host_ops=ops, autograd_nodes=ops)
