"""Kernel formulas (core.kernel_formulas) of LoRA layers: the frozen base's GEMM (dequantized from NF4 under
QLoRA), the two thin adapter GEMMs each way, and the casts around fp32 adapters on a half-precision base."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from advisor.core.graph import TensorSpec
from advisor.core.kernel_formulas import (
    OpKernels,
    OpStep,
    dequantize_kernels,
    dequantize_ops,
    formula,
    matmul_kernel,
    runs_backward,
)
from advisor.core.kernels import Kernel, Pass, Stream
from advisor.core.llm.lora import LoRALinear
from advisor.core.ops.base import Op


@formula(LoRALinear)
def _lora_linear(op: Op, inputs: Sequence[TensorSpec], output: TensorSpec, step: OpStep) -> OpKernels:
    """PEFT's lora.Linear.forward: result = base(x); result + lora_B(lora_A(dropout(x))) * scaling. The frozen
    base has no weight-gradient GEMM; the adapters are two thin GEMMs each way (rank r)."""
    assert isinstance(op, LoRALinear)
    n, k, r = op.out_features, inputs[0].shape[-1], op.lora_rank
    m = output.numel * step.rows // n
    half = step.dtype_bytes
    # fp32 adapters on a half base (LoRALinear.fp32_adapters): the input cast to fp32 for A, both adapter GEMMs
    # in fp32, the scaling and the sum in fp32, and the sum cast back to the base's dtype
    adapter = replace(step, dtype_bytes=4) if op.fp32_adapters else step
    wide = adapter.dtype_bytes
    kernels: list[Kernel] = [
        *dequantize_kernels(n * k, step, Pass.FORWARD),
        matmul_kernel(m, n, k, step, Pass.FORWARD),
        *_dtype_cast(m * k, half, wide, Pass.FORWARD),
        matmul_kernel(m, r, k, adapter, Pass.FORWARD),
        matmul_kernel(m, n, r, adapter, Pass.FORWARD),
        Stream(read_bytes=m * n * wide, written_bytes=m * n * wide, flops=m * n, pass_=Pass.FORWARD),
        Stream(read_bytes=m * n * (half + wide), written_bytes=m * n * wide, flops=m * n, pass_=Pass.FORWARD),
        *_dtype_cast(m * n, wide, half, Pass.FORWARD),
    ]
    if runs_backward(step):  # B's gradients, the scaling's, A's weight gradient; the input's only where it needs one
        kernels += [
            *_dtype_cast(m * n, half, wide, Pass.BACKWARD),
            Stream(read_bytes=m * n * wide, written_bytes=m * n * wide, flops=m * n, pass_=Pass.BACKWARD),
            matmul_kernel(n, r, m, adapter, Pass.WEIGHT_GRAD),
            matmul_kernel(m, r, n, adapter, Pass.INPUT_GRAD),
            matmul_kernel(r, k, m, adapter, Pass.WEIGHT_GRAD),
        ]
        if step.input_grad:  # through the base and through A, summed
            kernels += [
                *dequantize_kernels(n * k, step, Pass.BACKWARD),
                matmul_kernel(m, k, n, step, Pass.INPUT_GRAD),
                matmul_kernel(m, k, r, adapter, Pass.INPUT_GRAD),
                *_dtype_cast(m * k, wide, half, Pass.BACKWARD),
                Stream(read_bytes=2 * m * k * half, written_bytes=m * k * half, flops=m * k, pass_=Pass.BACKWARD),
            ]
    casts = 2 if op.fp32_adapters else 0
    return OpKernels(kernels=tuple(kernels), host_ops=5 + casts + dequantize_ops(step), autograd_nodes=5 + casts)


def _dtype_cast(elements: int, source_bytes: int, target_bytes: int, pass_: Pass) -> list[Kernel]:
    """A dtype cast (`tensor.to(dtype)`), where the dtypes differ."""
    if source_bytes == target_bytes:
        return []
    return [Stream(read_bytes=elements * source_bytes, written_bytes=elements * target_bytes, flops=0, pass_=pass_)]
