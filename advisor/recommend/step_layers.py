"""What the time model needs of one layer, read from the kernels its estimate row lists (core.kernels): the
GEMM shapes, fused attention work, bytes of memory-bound kernels, launches and host ops. Nothing here reads a
layer's kind or reconstructs shapes from totals: both estimators describe the kernels, this only sorts them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from advisor.core.estimate import LayerRow
from advisor.core.kernels import Attention, Convolution, Kernel, Matmul, Stream, forward_kernels

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
    backward: bool  # a gradient GEMM (dgrad or wgrad)
    winograd: bool = False  # a 3x3 stride-1 convolution, which cuDNN can run as Winograd on CUDA cores


@dataclass(frozen=True, kw_only=True)
class LayerWork:
    """Card-independent work of one layer over a whole step (forward, and backward when training)."""

    gemms: tuple[Gemm, ...]  # one entry per launch
    attention_flops: float  # fused attention kernels (forward, and backward's recomputation)
    stream_bytes: float  # bytes the memory-bound kernels read and write
    simt_flops: float  # arithmetic of those kernels (CUDA cores)
    kernels: int  # launches
    host_ops: int  # forward ops the Python interpreter dispatches (backward runs in the C++ engine)
    param_tensors: int
    untracked_ops: int  # of host_ops, those that record no autograd node (buffer updates)


def _matmul_gemms(k: Matmul) -> list[Gemm]:
    # a bmm's batches run as more rows of tiles of one launch (cuBLAS strided-batched GEMM)
    return [Gemm(k.m * k.batches, k.n, k.k, k.dtype_bytes, False, k.pass_.backward)] * k.launches


def _sorted_kernels(kernels: Sequence[Kernel]) -> tuple[list[Gemm], float, float, float]:
    gemms: list[Gemm] = []
    attention = moved = simt = 0.0
    for k in kernels:
        if isinstance(k, Matmul):
            gemms += _matmul_gemms(k)
        elif isinstance(k, Convolution):
            if k.macs_per_output < MIN_MACS_PER_OUTPUT_FOR_GEMM:
                moved += k.tensor_bytes()
                simt += 2 * k.macs
            else:
                m, n, depth = k.implicit_gemm()
                gemms.append(
                    Gemm(
                        m,
                        n,
                        depth,
                        k.dtype_bytes,
                        True,
                        k.pass_.backward,
                        k.kernel_volume == 9 and k.input_pixels == k.output_pixels and k.groups == 1,
                    )
                )
        elif isinstance(k, Attention):
            attention += k.flops
            moved += k.io_bytes
        elif isinstance(k, Stream):
            moved += k.read_bytes + k.written_bytes
            simt += k.flops
    return gemms, attention, moved, simt


def layer_work(row: LayerRow, training: bool) -> LayerWork:
    """The row's kernels as the time model sorts them; in inference only its forward kernels run."""
    kernels = row.kernels if training else forward_kernels(row.kernels)
    gemms, attention, moved, simt = _sorted_kernels(kernels)
    launches = sum(k.launches if isinstance(k, Matmul) else 1 for k in kernels)
    nodes = row.autograd_nodes if training else row.host_ops
    return LayerWork(
        gemms=tuple(gemms),
        attention_flops=attention,
        stream_bytes=moved,
        simt_flops=simt,
        kernels=launches,
        host_ops=row.host_ops,
        param_tensors=row.param_tensors if training else 0,
        untracked_ops=row.host_ops - nodes,
    )


def layer_works(rows: Sequence[LayerRow], training: bool) -> tuple[LayerWork, ...]:
    return tuple(work for work in (layer_work(row, training) for row in rows) if work.kernels)
