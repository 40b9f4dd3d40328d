"""What a layer runs on the GPU in one step, as data: the one description both estimators fill and the time
model (advisor.recommend.timing) reads.

The analytic path derives these records from each op's shapes (core.kernel_formulas); the simulated path
records them from the aten calls it dispatches, with the real shapes (importers.simulate.kernel_record).
Nothing downstream reads a layer's kind: a GEMM is a GEMM whichever module ran it.

Sizes are over the whole batch (not per sample), bytes in the dtype the kernel computes in.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Pass(enum.Enum):
    """Which part of the step launches a kernel. A GEMM in backward is either the input's gradient
    (dgrad: grad_out x W) or the weight's (wgrad: x^T x grad_out), the two shapes cuBLAS and cuDNN multiply."""

    FORWARD = "forward"
    INPUT_GRAD = "input_grad"
    WEIGHT_GRAD = "weight_grad"
    BACKWARD = "backward"  # any other backward kernel (elementwise gradients, reductions, attention backward)

    @property
    def backward(self) -> bool:
        return self is not Pass.FORWARD


class AttentionBackend(enum.Enum):
    """The fused scaled-dot-product kernels CUDA picks (sdp_utils.cpp): FlashAttention-2 for half precision
    without a mask, the memory-efficient (xformers/cutlass) kernel for float32 or a mask."""

    FLASH = "flash"
    EFFICIENT = "efficient"


@dataclass(frozen=True, kw_only=True)
class Matmul:
    """C[m, n] = A[m, k] B[k, n], `batches` of them in one launch (bmm), run `launches` times in a row
    (a recurrent layer's per-step GEMM)."""

    m: int
    n: int
    k: int
    batches: int
    launches: int
    dtype_bytes: int
    pass_: Pass

    @property
    def macs(self) -> int:
        return self.m * self.n * self.k * self.batches * self.launches


@dataclass(frozen=True, kw_only=True)
class Convolution:
    """One cuDNN convolution call (forward, dgrad or wgrad) over the whole batch. cuDNN runs it as an implicit
    GEMM with M = batch x output pixels, N = output channels / groups, K = input channels / groups x kernel
    volume, once per group; a depthwise one (few multiply-adds per output) as a direct, memory-bound kernel."""

    batch: int
    in_channels: int
    out_channels: int
    groups: int
    kernel_volume: int
    input_pixels: int
    output_pixels: int
    dtype_bytes: int
    pass_: Pass

    @property
    def macs_per_output(self) -> int:
        return self.in_channels // self.groups * self.kernel_volume

    @property
    def macs(self) -> int:
        return self.batch * self.output_pixels * self.out_channels * self.macs_per_output

    def implicit_gemm(self) -> tuple[int, int, int]:
        """(m, n, k) of the GEMM this call multiplies; the groups run side by side as more rows of tiles
        (same tile count as one GEMM of groups x m rows). Forward (M, N, K); dgrad (M, K, N); wgrad (N, K, M)."""
        m = self.batch * self.output_pixels * self.groups
        n, k = self.out_channels // self.groups, self.macs_per_output
        if self.pass_ is Pass.INPUT_GRAD:
            return m, k, n
        if self.pass_ is Pass.WEIGHT_GRAD:
            return n, k, m
        return m, n, k

    def tensor_bytes(self) -> int:
        """Input, weight and output read or written once (a depthwise kernel moves about this much)."""
        weight = self.out_channels * self.macs_per_output
        return (
            self.batch * (self.in_channels * self.input_pixels + self.out_channels * self.output_pixels) + weight
        ) * self.dtype_bytes


@dataclass(frozen=True, kw_only=True)
class Attention:
    """A fused attention kernel over batch x heads rows: forward (QK^T, softmax, PV in one kernel) or its
    backward (which recomputes the scores: 5 matmuls of that size instead of 2)."""

    batch_heads: int
    q_len: int
    kv_len: int
    head_dim: int
    v_head_dim: int
    causal: bool
    backend: AttentionBackend
    dtype_bytes: int
    pass_: Pass

    @property
    def flops(self) -> int:
        # QK^T and PV: 2 x rows x q x kv x (d + dv) FLOPs; backward: QK^T again, dV, dP, dS->dQ, dK (2.5x)
        forward = 2 * self.batch_heads * self.q_len * self.kv_len * (self.head_dim + self.v_head_dim)
        return forward * 5 // 2 if self.pass_.backward else forward

    @property
    def io_bytes(self) -> int:
        """q, k, v read and the output written (forward); backward also reads the output and its gradient
        and writes dq, dk, dv (flash_bwd: ~8 such tensors of the output's size, as q, k, v are)."""
        q = self.batch_heads * self.q_len * self.head_dim
        kv = self.batch_heads * self.kv_len * (self.head_dim + self.v_head_dim)
        out = self.batch_heads * self.q_len * self.v_head_dim
        moved = q + kv + out
        return (2 * moved + out if self.pass_.backward else moved) * self.dtype_bytes


@dataclass(frozen=True, kw_only=True)
class Stream:
    """A memory-bound kernel (elementwise, normalisation, reduction, copy, cast, gather): the bytes it reads
    and writes, and its arithmetic on the CUDA cores."""

    read_bytes: int
    written_bytes: int
    flops: int
    pass_: Pass


Kernel = Matmul | Convolution | Attention | Stream


def kernels_macs(kernels: tuple[Kernel, ...], pass_: Pass = Pass.FORWARD) -> int:
    """Multiply-adds of the GEMM-like kernels of one pass (a check that both paths describe the same work)."""
    return sum(k.macs for k in kernels if isinstance(k, Matmul | Convolution) and k.pass_ is pass_)


def forward_kernels(kernels: tuple[Kernel, ...]) -> tuple[Kernel, ...]:
    """The kernels an inference pass (or checkpointing's recomputation) runs of a layer's step."""
    return tuple(k for k in kernels if k.pass_ is Pass.FORWARD)
