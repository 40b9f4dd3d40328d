"""Time of single GPU kernels on one card: matrix multiplies by tiles and waves over the multiprocessors,
memory-bound kernels at achievable bandwidth, and the fixed costs of launching a kernel.

These are the building blocks of the step-time model (advisor.recommend.timing) and of any other speed
figure (LLM prefill is GEMM-bound, decode bandwidth-bound): reuse them rather than a peak rate.
Stable names: gemm_seconds, gemm_flops_per_s, bandwidth_bytes_per_s, simt_flops_per_s, stream_seconds,
launch_seconds.
"""

from __future__ import annotations

import math

from advisor.recommend.devices import Device
from advisor.recommend.tensor_power import HOPPER, TensorPower

# Share of the datasheet peak that a large, well-shaped kernel reaches, measured on the H200 (shared/
# calibration/h200/environment.json "calibration", against cards.csv's H200 SXM figures): bf16 matmul
# 782.7 / 989.5 TFLOPS = 0.79; TF32 402.9 / 494.5 = 0.81; FP32 (CUDA cores) 50.5 / 67 = 0.75; device copy
# 4182.5 / 4800 GB/s = 0.87.
H200_TENSOR_CEILING = 0.79
SIMT_CEILING = 0.75
BANDWIDTH_CEILING = 0.87
# Tensor-core rates are quoted at the boost clock; under a full tensor load a board holds that clock only
# where its power limit allows: a GeForce RTX 4090 has 450 W for 165 TFLOPS and holds it, the 300 W RTX PRO
# 6000 Max-Q does not (its figures are the 600 W card's clocks cut down). How fast the clock falls with the
# power per operation depends on the die's energy per FLOP (advisor.recommend.tensor_power).
# A TF32 tensor-core GEMM draws the power of a half-precision one at half its FLOPs: mma.sync.m16n8k8.tf32 moves
# the same fragments as mma.sync.m16n8k16.f16/.bf16 (A 4, B 2, C and D 4 32-bit registers a thread: PTX ISA,
# "Matrix Fragments for mma.m16n8k8" and "for mma.m16n8k16") in half the multiply-adds, and the TF32 rate is
# half the half-precision one, so both issue as many instructions a clock. Its clock share under the board's
# power limit is the half-precision one (the H200: 0.79 by the rule, 402.9 / 494.5 = 0.81 measured), capped at
# that measured 0.81 where power is plentiful.
TF32_CEILING = 0.81
TF32_POWER_PER_FLOP = 2  # board power per TF32 FLOP over a half-precision one's


def tensor_ceiling(rate_tflops: float, tdp_w: float, power: TensorPower = HOPPER) -> float:
    """Share of a tensor-core rate (dense TFLOPS) a large GEMM sustains within the board's power limit, by the
    die's energy rule (Hopper's unless given)."""
    return power.ceiling(rate_tflops, tdp_w)


# Output tile of one thread block. Half-precision tensor-core GEMMs on Ampere/Hopper run 128x128 (and
# 128x256) tiles (CUTLASS's default GemmShape<128, 128, 32/64> for sm80/sm90, cuBLAS kernel names such as
# sm90_xmma_gemm_..._128x128); FP32 SIMT kernels use 128x64 (cuBLAS "sgemm_128x64" / CUTLASS SIMT
# GemmShape<128, 64, 8>). One tile occupies one multiprocessor for the wave it runs in.
TENSOR_TILE = (128, 128)
SIMT_TILE = (128, 64)
# cuBLAS/cuDNN split a long reduction over several blocks (split-K) when the output has too few tiles to
# fill the card; each split keeps at least a few K-steps of work (CUTLASS split-K examples use >= 256).
MIN_SPLIT_K_DEPTH = 256

# A kernel launch costs the host ~4-5 us of driver and dispatcher work (cudaLaunchKernel alone is 2-3 us,
# NVIDIA "CUDA C++ Best Practices"; PyTorch's dispatcher adds ~1-2 us per op) and the device ~2 us
# between back-to-back kernels (drain, launch of the next grid, ramp-up).
LAUNCH_HOST_SECONDS = 4.5e-6
LAUNCH_DEVICE_SECONDS = 2e-6


def _ceiling_flops(dev: Device, dtype_bytes: int, conv: bool = False) -> float:
    """Achievable dense rate of a large multiply: tensor cores for half precision; for fp32, TF32 tensor
    cores for cuDNN convolutions (allow_tf32 is on for cuDNN, off for matmul in PyTorch unless the workload
    turns it on) else CUDA cores."""
    if dtype_bytes <= 2 and dev.tensor_cores:
        return dev.matmul_tflops * 1e12 * tensor_ceiling(dev.matmul_tflops, dev.tdp_w, dev.tensor_power)
    if _tf32(dev, conv):
        rate = dev.conv_tflops if conv else dev.matmul_tflops
        return rate * 1e12 * min(TF32_CEILING, tensor_ceiling(rate * TF32_POWER_PER_FLOP, dev.tdp_w, dev.tensor_power))
    return simt_flops_per_s(dev)


def _tf32(dev: Device, conv: bool) -> bool:
    """An fp32 GEMM on TF32 tensor cores: cuDNN's convolutions by default, matmuls when the workload allows it
    (devices.matmul_rate then gives the TF32 rate, at or above the card's FP32 one)."""
    return not dev.tensor_cores and (dev.tf32_conv if conv else dev.tf32_matmul)


def _tensor_path(dev: Device, dtype_bytes: int, conv: bool) -> bool:
    return (dtype_bytes <= 2 and dev.tensor_cores) or (dtype_bytes == 4 and _tf32(dev, conv))


# A 3x3 stride-1 convolution on CUDA cores (fp32 without TF32 tensor cores: Volta, Turing, Pascal) runs
# Winograd's minimal filtering: F(2x2, 3x3) computes a 2x2 output tile with (2+3-1)^2 = 16 multiplies instead of
# 2x2x9 = 36, 2.25x fewer (A. Lavin, S. Gray, "Fast Algorithms for Convolutional Neural Networks", CVPR 2016,
# arXiv:1509.09308, section 4); cuDNN picks it for such layers (its volta_scudnn_winograd_128x128_* kernels in
# fp32 ResNet profiles). On tensor cores cuDNN runs implicit GEMMs instead.
WINOGRAD_MULTIPLY_REDUCTION = 36 / 16


def winograd_runs(dev: Device, dtype_bytes: int) -> bool:
    """A 3x3 stride-1 convolution of this dtype runs Winograd on this card (CUDA cores, not tensor cores)."""
    return not _tensor_path(dev, dtype_bytes, True)


def gemm_compute_seconds(m: int, n: int, k: int, dev: Device, dtype_bytes: int = 2, conv: bool = False) -> float:
    """Arithmetic time of C[m, n] = A[m, k] B[k, n]: output tiles run in waves of one tile per multiprocessor;
    a partial last wave costs a whole wave (wave quantization). With fewer tiles than multiprocessors the
    reduction is split (split-K) to use more of them."""
    tile_m, tile_n = TENSOR_TILE if _tensor_path(dev, dtype_bytes, conv) else SIMT_TILE
    tiles = math.ceil(m / tile_m) * math.ceil(n / tile_n)
    sms = max(dev.sm_count, 1)
    splits = max(1, min(sms // tiles, k // MIN_SPLIT_K_DEPTH)) if tiles < sms else 1
    waves = math.ceil(tiles * splits / sms)
    per_sm_flops = _ceiling_flops(dev, dtype_bytes, conv) / sms
    return waves * 2 * tile_m * tile_n * math.ceil(k / splits) / per_sm_flops


def gemm_seconds(m: int, n: int, k: int, dev: Device, dtype_bytes: int = 2, conv: bool = False) -> float:
    """One GEMM kernel: the longer of its tiled arithmetic and reading A, B and writing C once."""
    moved = (m * k + k * n + m * n) * dtype_bytes
    return max(gemm_compute_seconds(m, n, k, dev, dtype_bytes, conv), moved / bandwidth_bytes_per_s(dev))


def gemm_flops_per_s(m: int, n: int, k: int, dev: Device, dtype_bytes: int = 2) -> float:
    """Achievable rate of one matmul of this shape on this card (2 x m x n x k FLOPs over gemm_seconds)."""
    return 2 * m * n * k / gemm_seconds(m, n, k, dev, dtype_bytes)


def bandwidth_bytes_per_s(dev: Device) -> float:
    """What a streaming kernel (copy, elementwise, normalisation) reaches of the card's memory bandwidth."""
    return dev.bandwidth_gbs * 1e9 * BANDWIDTH_CEILING


def simt_flops_per_s(dev: Device) -> float:
    """Achievable FP32 arithmetic on CUDA cores (elementwise kernels, fp32 matmuls without TF32)."""
    return dev.fp32_tflops * 1e12 * SIMT_CEILING


def stream_seconds(moved_bytes: float, simt_flops: float, dev: Device) -> float:
    """A memory-bound kernel: bytes at achievable bandwidth, unless its arithmetic on CUDA cores is longer."""
    return max(moved_bytes / bandwidth_bytes_per_s(dev), simt_flops / simt_flops_per_s(dev))


def launch_seconds(kernels: int) -> tuple[float, float]:
    """(host, device) seconds that launching this many kernels costs beyond their work."""
    return kernels * LAUNCH_HOST_SECONDS, kernels * LAUNCH_DEVICE_SECONDS
