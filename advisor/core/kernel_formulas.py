"""The kernels each layer kind launches in a step (core.kernels), derived from its shapes: a registry of small
pure formulas per op class, as torch.utils.flop_counter registers one per aten op.

A formula sees the op, its input and output specs and an OpStep (batch, the dtype it computes in, which
gradients backward computes) and returns the layer's kernels with the number of forward ops Python
dispatches for it. Kinds without a formula of their own stream memory (elementwise ops, normalisations,
pooling, embeddings): read their inputs, write the output; in backward read the output's gradient and what
was saved, write the input's gradient. Views and identities launch nothing.

The formulas follow the aten calls eager PyTorch makes for each module, so the simulated path (which records
those calls) and this one describe the same work: nn.Linear is addmm (mm for a 3-D input) forward and two
mm backward (aten/src/ATen/native/LinearAlgebra.cpp, tools/autograd/derivatives.yaml addmm/mm); nn.Conv2d is
one cudnn_convolution forward and convolution_backward's dgrad and wgrad; autocast casts each fp32 weight to
half on every call (a _to_copy kernel, and its backward casts the gradient back).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from advisor.core.graph import TensorSpec
from advisor.core.kernels import Convolution, Kernel, Matmul, Pass, Stream
from advisor.core.llm.quant import NF4_BLOCK, NF4_BLOCKS_PER_ABSMAX
from advisor.core.ops.activation import _InputSaving
from advisor.core.ops.attention import Rotary
from advisor.core.ops.base import Op, SavedTensor, product
from advisor.core.ops.conv import Conv, ConvTranspose
from advisor.core.ops.io import Input
from advisor.core.ops.linear import Linear
from advisor.core.ops.loss import CrossEntropy
from advisor.core.ops.norm import BatchNorm, RMSNorm
from advisor.core.ops.text_ops import GELUTanhComposite


@dataclass(frozen=True, kw_only=True)
class OpStep:
    """One layer of one step, as its formula needs it."""

    rows: int  # what the per-sample output is multiplied by: the batch, or 1 for tensors the batch shares
    batch: int
    dtype_bytes: int  # bytes per element of what the op computes in (its output's dtype)
    input_bytes: tuple[int, ...]  # each input over the whole batch as the op reads it
    output_bytes: int
    training: bool
    output_grad: bool  # autograd tracks the output: backward runs through this layer
    input_grad: bool  # some input needs its gradient
    weight_grad: bool  # the op's own parameters train (false for a frozen base under LoRA)
    weight_casts: tuple[int, ...]  # parameter tensors autocast copies to half on each call (their elements)
    quantized_base: bool  # QLoRA: a frozen 4-bit base weight, dequantized to half on every pass


@dataclass(frozen=True, kw_only=True)
class OpKernels:
    kernels: tuple[Kernel, ...]
    host_ops: int  # forward ops Python dispatches that launch a kernel (views launch none)
    autograd_nodes: int  # of those, the ones that record an autograd node (when the output needs a gradient)


Formula = Callable[[Op, Sequence[TensorSpec], TensorSpec, OpStep], OpKernels]
FORMULAS: dict[type[Op], Formula] = {}
NONE = OpKernels(kernels=(), host_ops=0, autograd_nodes=0)


def formula(*classes: type[Op]) -> Callable[[Formula], Formula]:
    """Registers a formula for op classes; a class registered twice is an error (a silent override would
    time a layer by the wrong formula)."""

    def register(fn: Formula) -> Formula:
        for cls in classes:
            if cls in FORMULAS:
                raise ValueError(f"a kernel formula for {cls.__name__} is registered twice")
            FORMULAS[cls] = fn
        return fn

    return register


def op_kernels(op: Op, inputs: Sequence[TensorSpec], output: TensorSpec, step: OpStep) -> OpKernels:
    """The op's kernels: its class's formula (or its nearest base class's), else streaming."""
    if isinstance(op, Input) or op.is_view or op.is_identity(step.training):
        return NONE
    for cls in type(op).__mro__:
        fn = FORMULAS.get(cls)
        if fn is not None:
            return fn(op, inputs, output, step)
    return stream_kernels(op, inputs, output, step)


def runs_backward(step: OpStep) -> bool:
    return step.training and step.output_grad


def _casts(step: OpStep) -> list[Kernel]:
    """Autocast's weight copies: fp32 read, half written, and the gradient cast back in backward."""
    out: list[Kernel] = [
        Stream(read_bytes=4 * n, written_bytes=2 * n, flops=0, pass_=Pass.FORWARD) for n in step.weight_casts
    ]
    if runs_backward(step) and step.weight_grad:
        out += [Stream(read_bytes=2 * n, written_bytes=4 * n, flops=0, pass_=Pass.BACKWARD) for n in step.weight_casts]
    return out


def _saved_bytes(saved: Sequence[SavedTensor], step: OpStep) -> int:
    """Bytes of the tensors an op writes beside its output for backward (masks, indices, statistics)."""
    width = {
        "act": step.dtype_bytes,
        "input": step.dtype_bytes,
        "float32": 4,
        "autocast_float32": 4,
        "int64": 8,
        "bool": 1,
    }
    return sum(t.numel * width[t.dtype] for t in saved) * step.rows


def stream_kernels(op: Op, inputs: Sequence[TensorSpec], output: TensorSpec, step: OpStep, ops: int = 1) -> OpKernels:
    """`ops` memory-bound kernels in a row, each reading the inputs and writing the output (and what it saves
    beside it: a mask, indices). Backward reads the output's gradient and what autograd saved (the saved
    inputs, the output, the extra tensors) and writes the inputs' gradients and, for parameters, their fp32
    gradients; an op that hands its gradient on (an add) launches nothing in backward."""
    read = sum(step.input_bytes) or step.output_bytes
    extra = _saved_bytes(op.extra_saved(inputs, output, step.training), step) if step.training else 0
    forward_flops = op.other_flops(inputs, output) * step.rows
    kernels: list[Kernel] = [
        Stream(
            read_bytes=read,
            written_bytes=step.output_bytes + extra // ops,
            flops=forward_flops // ops,
            pass_=Pass.FORWARD,
        )
        for _ in range(ops)
    ]
    if runs_backward(step) and not op.grad_passthrough:
        saved = sum(step.input_bytes[i] for i in op.saved_inputs() if i < len(step.input_bytes))
        saved += step.output_bytes if op.saves_result() else 0
        grads = sum(step.input_bytes) if step.input_grad else 0
        params = 4 * op.param_count(inputs) if step.weight_grad else 0
        kernels += [
            Stream(
                read_bytes=step.output_bytes + saved + extra // ops + params // ops,
                written_bytes=grads + params // ops,
                flops=2 * forward_flops // ops,
                pass_=Pass.BACKWARD,
            )
            for _ in range(ops)
        ]
    return OpKernels(kernels=tuple(kernels), host_ops=ops, autograd_nodes=ops)


@formula(_InputSaving)
def _input_saving(op: Op, inputs: Sequence[TensorSpec], output: TensorSpec, step: OpStep) -> OpKernels:
    """An in-place activation whose backward needs its input (hardtanh_, silu_, hardswish_): autograd clones
    the input before the op overwrites it (the "original input" extra_saved copy), a kernel of its own."""
    made = stream_kernels(op, inputs, output, step)
    if not (op.inplace and step.training and step.output_grad):
        return made
    first, *rest = made.kernels
    assert isinstance(first, Stream)
    clone = Stream(read_bytes=step.input_bytes[0], written_bytes=step.input_bytes[0], flops=0, pass_=Pass.FORWARD)
    own = replace(first, written_bytes=step.output_bytes)
    return OpKernels(kernels=(clone, own, *rest), host_ops=2, autograd_nodes=1)


def _streams(sizes: Sequence[tuple[int, int]], pass_: Pass) -> list[Kernel]:
    """One elementwise kernel per (bytes read, bytes written)."""
    return [Stream(read_bytes=r, written_bytes=w, flops=w // 4, pass_=pass_) for r, w in sizes]


@formula(RMSNorm)
def _rms_norm(op: Op, inputs: Sequence[TensorSpec], output: TensorSpec, step: OpStep) -> OpKernels:
    """transformers' LlamaRMSNorm (and torch's rms_norm, CompositeImplicit) in eager ops: x.to(float32),
    pow(2), mean(-1), + eps, rsqrt, x * rsqrt, .to(input dtype), weight * x: each its own kernel, the casts
    none in fp32 (modeling_llama.py LlamaRMSNorm.forward). Backward runs each op's gradient: about two
    fp32 tensors read and one written per op that touches the whole tensor."""
    x = step.input_bytes[0]
    elements = x // step.dtype_bytes
    full, rows = 4 * elements, 4 * (elements // max(inputs[0].shape[-1], 1))
    cast = step.dtype_bytes != 4
    sizes = [(x, full)] * cast + [(full, full), (full, rows), (rows, rows), (rows, rows), (full + rows, full)]
    sizes += [(full, x)] * cast + [(x, step.output_bytes)]
    kernels = _streams(sizes, Pass.FORWARD)
    if runs_backward(step):
        kernels += _streams(_rms_norm_backward(x, full, rows, cast), Pass.BACKWARD)
    return OpKernels(kernels=tuple(kernels), host_ops=len(sizes), autograd_nodes=len(sizes))


def _rms_norm_backward(x: int, full: int, rows: int, cast: bool) -> list[tuple[int, int]]:
    """(read, written) of the gradient kernels the composite's autograd nodes launch, last op first:
    weight * h (g * w for h's gradient, g * h and its sum for w's), the cast back, x * rsqrt (g * r; g * x and
    its row sum for r's), rsqrt's and mean's (row-sized, then expanded), pow's 2 * x * g, the sum of x's two
    gradients (pow and the product read it) and the cast to the input's dtype."""
    half = [(x, x), (2 * x, x), (x, rows)]  # the weight product's, in the input's dtype
    out = (
        half
        + [(x, full)] * cast
        + [
            (full + rows, full),
            (2 * full, full),
            (full, rows),
            (rows, rows),
            (rows, rows),
            (rows, full),
            (2 * full, full),
            (2 * full, full),
        ]
    )
    return out + [(full, x)] * cast


@formula(Rotary)
def _rotary(op: Op, inputs: Sequence[TensorSpec], output: TensorSpec, step: OpStep) -> OpKernels:
    """apply_rotary_pos_emb for one of q, k: q * cos + rotate_half(q) * sin, rotate_half = cat(-x2, x1): neg,
    cat, two muls and the add are kernels, the halves are views (modeling_llama.py). Backward: the two muls'
    gradients, the negation's; the add hands its gradient on and the cat's gradient is two views."""
    x, out = step.input_bytes[0], step.output_bytes
    sizes = [(x // 2, x // 2), (x, x), (x, out), (x, out), (2 * out, out)]  # neg, cat, q*cos, rot*sin, add
    kernels = _streams(sizes, Pass.FORWARD)
    if runs_backward(step):
        kernels += _streams([(out, x), (out, x), (x // 2, x // 2), (2 * x, x)], Pass.BACKWARD)
    return OpKernels(kernels=tuple(kernels), host_ops=len(sizes), autograd_nodes=len(sizes))


@formula(GELUTanhComposite)
def _composite_gelu(op: Op, inputs: Sequence[TensorSpec], output: TensorSpec, step: OpStep) -> OpKernels:
    # transformers' NewGELUActivation: 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * pow(x, 3)))):
    # pow, mul, add, mul, tanh, add, mul, mul, each its own kernel and autograd node
    return stream_kernels(op, inputs, output, step, ops=8)


@formula(BatchNorm)
def _batch_norm(op: Op, inputs: Sequence[TensorSpec], output: TensorSpec, step: OpStep) -> OpKernels:
    """cudnn_batch_norm in training reads its input twice (statistics, then normalising) and its backward
    reads input and output gradient twice (weight-gradient reductions, then the input's); nn.BatchNorm's
    training forward also counts the batch, num_batches_tracked.add_(1) (torch/nn/modules/batchnorm.py)."""
    if not step.training:
        return stream_kernels(op, inputs, output, step)
    x = step.input_bytes[0]
    kernels: list[Kernel] = [
        Stream(read_bytes=2 * x, written_bytes=step.output_bytes, flops=4 * x // step.dtype_bytes, pass_=Pass.FORWARD),
        Stream(read_bytes=8, written_bytes=8, flops=1, pass_=Pass.FORWARD),
    ]
    if runs_backward(step):
        kernels.append(Stream(read_bytes=4 * x, written_bytes=x, flops=8 * x // step.dtype_bytes, pass_=Pass.BACKWARD))
    return OpKernels(kernels=tuple(kernels), host_ops=2, autograd_nodes=1)  # the counter records none


def matmul_kernel(m: int, n: int, k: int, step: OpStep, pass_: Pass, batches: int = 1, launches: int = 1) -> Matmul:
    return Matmul(m=m, n=n, k=k, batches=batches, launches=launches, dtype_bytes=step.dtype_bytes, pass_=pass_)


def _gemm_backward(m: int, n: int, k: int, step: OpStep, weight_grad: bool) -> list[Kernel]:
    """dgrad (grad_out[m, n] x W[n, k]) when the input needs it, wgrad (grad_out^T x input) when the weight
    trains, and the bias gradient's reduction over the m rows."""
    out: list[Kernel] = []
    if step.input_grad:
        out.append(matmul_kernel(m, k, n, step, Pass.INPUT_GRAD))
    if weight_grad:
        out.append(matmul_kernel(n, k, m, step, Pass.WEIGHT_GRAD))
    return out


@formula(Linear)
def _linear(op: Op, inputs: Sequence[TensorSpec], output: TensorSpec, step: OpStep) -> OpKernels:
    assert isinstance(op, Linear)
    n, k = op.out_features, inputs[0].shape[-1]
    m = output.numel * step.rows // n
    kernels: list[Kernel] = [*dequantize_kernels(n * k, step, Pass.FORWARD), matmul_kernel(m, n, k, step, Pass.FORWARD)]
    if runs_backward(step):
        kernels += dequantize_kernels(n * k, step, Pass.BACKWARD) if step.input_grad else []
        kernels += _gemm_backward(m, n, k, step, step.weight_grad)
        if op.bias and step.weight_grad:
            kernels.append(
                Stream(read_bytes=m * n * step.dtype_bytes, written_bytes=4 * n, flops=m * n, pass_=Pass.BACKWARD)
            )
        if op.tied_to and step.weight_grad:  # AccumulateGrad adds the head's gradient to the embedding's
            kernels.append(Stream(read_bytes=8 * n * k, written_bytes=4 * n * k, flops=n * k, pass_=Pass.BACKWARD))
    kernels += _casts(step)
    ops = 1 + len(step.weight_casts)
    return OpKernels(kernels=tuple(kernels), host_ops=ops + dequantize_ops(step), autograd_nodes=ops)


def dequantize_kernels(elements: int, step: OpStep, pass_: Pass) -> list[Kernel]:
    """QLoRA: bitsandbytes' MatMul4Bit dequantizes the whole NF4 weight to 16 bit before each GEMM: in forward
    (`linear(A, dequantize_4bit(B).to(A.dtype).t())`) and again in backward for the input's gradient
    (`matmul(grad_output, dequantize_4bit(B).t())`), never a weight gradient (bitsandbytes-foundation/
    bitsandbytes@012c660699cc bitsandbytes/autograd/_functions.py MatMul4Bit). With double quantization
    (QLoRA's default) dequantize_4bit runs three kernels (bitsandbytes 0.45.3 functional.py L1352-1356):
    dequantize_blockwise turns the 8-bit absmax (one per 64 weights, core.llm.quant NF4_BLOCK) into float32
    using one float32 absmax per 256 of them, `absmax += offset` adds the mean back, and kDequantizeBlockwise
    reads the packed 4 bits per weight with the float32 absmax and writes the 16-bit weight."""
    if not step.quantized_base:
        return []
    blocks = -(-elements // NF4_BLOCK)
    second = -(-blocks // NF4_BLOCKS_PER_ABSMAX)
    return [
        Stream(read_bytes=blocks + 4 * second, written_bytes=4 * blocks, flops=blocks, pass_=pass_),
        Stream(read_bytes=4 * blocks, written_bytes=4 * blocks, flops=blocks, pass_=pass_),
        Stream(read_bytes=elements // 2 + 4 * blocks, written_bytes=2 * elements, flops=2 * elements, pass_=pass_),
    ]


def dequantize_ops(step: OpStep) -> int:
    """The forward's dequantize_4bit kernels Python dispatches (inside MatMul4Bit: no autograd node)."""
    return 3 if step.quantized_base else 0


def _conv_kernels(conv: Convolution, step: OpStep, has_bias: bool) -> OpKernels:
    kernels: list[Kernel] = [conv]
    if runs_backward(step):
        for wanted, pass_ in ((step.input_grad, Pass.INPUT_GRAD), (step.weight_grad, Pass.WEIGHT_GRAD)):
            if wanted:
                kernels.append(Convolution(**{**conv.__dict__, "pass_": pass_}))
        if has_bias and step.weight_grad:
            kernels.append(
                Stream(
                    read_bytes=step.output_bytes,
                    written_bytes=4 * conv.out_channels,
                    flops=step.output_bytes // step.dtype_bytes,
                    pass_=Pass.BACKWARD,
                )
            )
    kernels += _casts(step)
    ops = 1 + len(step.weight_casts)
    return OpKernels(kernels=tuple(kernels), host_ops=ops, autograd_nodes=ops)


@formula(Conv)
def _conv(op: Op, inputs: Sequence[TensorSpec], output: TensorSpec, step: OpStep) -> OpKernels:
    assert isinstance(op, Conv)
    x = inputs[0].shape
    volume = product(op.kernel if isinstance(op.kernel, tuple) else (op.kernel,) * op.dims)
    conv = Convolution(
        batch=step.rows,
        in_channels=x[0],
        out_channels=op.out_channels,
        groups=op.groups,
        kernel_volume=volume,
        input_pixels=product(x[1:]),
        output_pixels=product(output.shape[1:]),
        dtype_bytes=step.dtype_bytes,
        pass_=Pass.FORWARD,
    )
    return _conv_kernels(conv, step, op.bias)


@formula(ConvTranspose)
def _conv_transpose(op: Op, inputs: Sequence[TensorSpec], output: TensorSpec, step: OpStep) -> OpKernels:
    """A transposed convolution is the data gradient of the convolution that maps its output back to its input
    (cuDNN runs ConvTranspose forward as backward-data): described as that convolution's GEMM."""
    assert isinstance(op, ConvTranspose)
    x = inputs[0].shape
    volume = product(op.kernel if isinstance(op.kernel, tuple) else (op.kernel,) * op.dims)
    conv = Convolution(
        batch=step.rows,
        in_channels=op.out_channels,
        out_channels=x[0],
        groups=op.groups,
        kernel_volume=volume,
        input_pixels=product(output.shape[1:]),
        output_pixels=product(x[1:]),
        dtype_bytes=step.dtype_bytes,
        pass_=Pass.FORWARD,
    )
    return _conv_kernels(conv, step, op.bias)


@formula(CrossEntropy)
def _cross_entropy(op: Op, inputs: Sequence[TensorSpec], output: TensorSpec, step: OpStep) -> OpKernels:
    """log_softmax writes fp32 log-probabilities, nll_loss picks one per row; backward fills their gradient
    with zeros and scatters into it (nll_loss_backward), log_softmax_backward reads it and the saved output
    and writes the logits' gradient (aten/src/ATen/native/LossNLL.cpp). The caller adds the fp32 cast of
    half logits (autocast's fp32 list, HF's logits.float())."""
    logits = step.input_bytes[0]
    flops = op.other_flops(inputs, output) * step.rows
    kernels: list[Kernel] = [
        Stream(read_bytes=logits, written_bytes=logits, flops=flops, pass_=Pass.FORWARD),
        Stream(read_bytes=logits, written_bytes=step.output_bytes, flops=0, pass_=Pass.FORWARD),
    ]
    if runs_backward(step):
        kernels += [
            Stream(read_bytes=0, written_bytes=logits, flops=0, pass_=Pass.BACKWARD),
            Stream(read_bytes=2 * logits, written_bytes=logits, flops=2 * flops, pass_=Pass.BACKWARD),
        ]
    return OpKernels(kernels=tuple(kernels), host_ops=2, autograd_nodes=2)  # _log_softmax, nll_loss_forward


# the other formula modules register themselves on import
from advisor.core import lora_kernels, sequence_kernels  # noqa: E402, F401
