"""Step time from how the kernels of an eager PyTorch step run (advisor.recommend.kernels): every conv and
linear layer is one GEMM forward and two in backward (input and weight gradients), timed by tiles and waves
over the card's multiprocessors; attention runs fused (FlashAttention-style) kernels; normalisations,
activations, depthwise convolutions, casts and the optimizer's foreach kernels stream memory; every kernel
costs a launch. The host dispatches the forward from Python, one module at a time, while the GPU works
through its queue: a step takes the longer of the host's and the device's time (small batches and inference
are host/launch-bound, large ones device-bound).

step_work precomputes the card-independent shapes once per job; step_seconds is the cheap per-card part.
Five of FITTED's constants are fitted by benchmarks/time.py on the H200 measurements and public runs on other
cards, which also prints the leave-one-family-out and leave-one-card-out errors; every other constant is
cited where it is defined.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from functools import cached_property

from advisor.core.estimate import Estimate
from advisor.recommend.devices import Device
from advisor.recommend.kernels import (
    LAUNCH_HOST_SECONDS,
    WINOGRAD_MULTIPLY_REDUCTION,
    bandwidth_bytes_per_s,
    gemm_seconds,
    simt_flops_per_s,
    stream_seconds,
    winograd_runs,
)
from advisor.recommend.optimizer_kernels import NO_OPTIMIZER, OptimizerWork, optimizer_work
from advisor.recommend.step_layers import Gemm, LayerWork, layer_works

__all__ = [
    "FITTED",
    "Efficiency",
    "LayerWork",
    "StepParts",
    "StepWork",
    "combine",
    "step_parts",
    "step_seconds",
    "step_work",
]


@dataclass(frozen=True)
class Efficiency:
    python_op_seconds: float  # host time of one forward op: nn.Module __call__, Python and dispatcher
    backward_node_seconds: float  # host time of one autograd node in backward (C++ engine, no Python)
    tensor: float  # share of the large-GEMM ceiling half-precision matmuls reach inside a model
    unaligned: float  # share of it a half-precision GEMM reaches with a dimension not a multiple of 8
    conv: float  # share of the GEMM ceiling cuDNN's convolutions reach (no cudnn.benchmark: heuristic choice)
    attention: float  # share of the matmul ceiling a fused attention kernel reaches
    stream: float  # bytes eager PyTorch's memory-bound kernels move, over the minimum the layer needs
    sm_stream_bytes_per_cycle: float  # what one multiprocessor's loads in flight sustain per clock cycle
    kernel_seconds: float  # device time of one kernel beyond its work: the gap between launches, ramp-up, tail
    backward: float  # share of its forward's rate a gradient GEMM or convolution reaches (dgrad, wgrad)


# python_op_seconds, backward_node_seconds, stream, sm_stream_bytes_per_cycle, kernel_seconds and backward are
# fitted by benchmarks/time.py on 254 step times: the 68 H200 rows of shared/calibration and 186 public runs on
# 17 other cards (timm's, Lambda's, torchtune's and Answer.AI's tables, benchmarks/public_speed.py); it prints the
# fit, the in-sample, the leave-one-family-out and the leave-one-card-out errors. Each grid is held to a physical
# range: host time per op 10-60 us, device time per kernel 1-8 us, eager streaming kernels at 1/3 to all of the
# copy bandwidth, 4-60 bytes per multiprocessor cycle, gradient GEMMs at 1/2 to all of their forward's rate
# (cuDNN's dgrad and wgrad, cuBLAS's transposed operands). Three end on a bound (backward_node_seconds 60 us,
# kernel_seconds 8 us: the rows ask for more fixed cost per op than the ranges allow; stream 1.0: the
# per-multiprocessor term below takes all of the eager kernels' shortfall).
# sm_stream_bytes_per_cycle: a memory-bound kernel has only so many loads in flight per multiprocessor, and by
# Little's law (bandwidth = bytes in flight / latency) a card whose bandwidth per multiprocessor is high needs
# more of them than an eager kernel keeps. DRAM latency is about the same number of SM cycles on every recent
# die (570-660 on an A100, H100 and AD102: te42kyfo/gpu-benches cuda-latency/a100_80.txt@2f9158840909,
# gpu-latency/h100_pcie.txt@a7dc559cc5a1, gpu-latency/l40.txt@5ff059f8625a), so what one SM sustains is a
# number of bytes per clock cycle, and a kernel's bytes take bandwidth x (1 + bandwidth per SM cycle / this).
# At the fitted 12 bytes a cycle an RTX 4090 (1008 GB/s x 0.87 over 128 SMs at 2.52 GHz: 2.7 bytes a cycle)
# streams at 0.82 of its copy rate, an RTX 3090 (5.9) at 0.67, an A100 SXM (11.6) at 0.51, an H200 (16.0) at
# 0.43: HBM cards have the most bandwidth per SM cycle, and advisor/recommend/generation_speed.py likewise
# finds a single stream reaching less of an HBM peak. (Fitted per second instead, 24 GB/s an SM, the GeForce
# dies at 2.5 GHz streamed as slowly per SM as the 1.98 GHz H200: the RTX 4090's public rows read 0.85 of
# their measured throughput, its LoRA rows up to 22% slow; per cycle 0.88 and within 18%, time.py's in-sample
# median 11.5% either way.) Not modelled: the large L2 of AD102/GB202 (72/96 MB): at the rows' batches 0-4% of
# the streamed bytes are in kernels whose input and output fit in it.
# conv and attention are held at 1.0 of the GEMM ceiling (fitted before, both ended on that bound).
# Not fitted: tensor = 1.0 (kernels.tensor_ceiling gives each card's share under its power limit).
# unaligned = 0.5: padding GPT-2's vocabulary from 50,257 to 50,304 made nanoGPT's step ~25% faster
# (A. Karpathy, x.com/karpathy/status/1621578354024677377, Feb 2023); the lm_head is ~27% of GPT-2 small's
# matmul FLOPs (768 x 50,257 of ~142M multiply-adds per token), so 0.73 + 0.27 / u = 1.25 gives u ~ 0.5
# (PaddlePaddle models PR #5134 measured 14 -> 10 ms for one such matmul, 0.7, on an older card).
FITTED = Efficiency(
    python_op_seconds=36e-6,
    backward_node_seconds=60e-6,
    tensor=1.0,
    unaligned=0.5,
    conv=1.0,
    attention=1.0,
    stream=1.0,
    sm_stream_bytes_per_cycle=12.0,
    kernel_seconds=8e-6,
    backward=0.9,
)
# Fixed host cost of one training step outside the layers: zero_grad, loss.backward() starting the
# autograd engine, optimizer.step()'s Python (hooks, grouping tensors by device and dtype): ~100 us,
# an estimate from PyTorch profiler traces of small models (not fitted).
STEP_HOST_SECONDS = 100e-6


@dataclass(frozen=True)
class StepParts:
    """One step's times on one card with every efficiency at 1: step_seconds scales and combines them."""

    python_ops: int
    backward_nodes: int
    kernels: int
    host_fixed_seconds: float
    matmul_seconds: float  # cuBLAS GEMMs
    unaligned_seconds: float  # half-precision GEMMs with a dimension not a multiple of 8 (slow kernels)
    conv_seconds: float  # cuDNN implicit GEMMs
    backward_gemm_seconds: float  # of the three above, the gradient GEMMs' and convolutions' part
    attention_seconds: float  # fused attention at the matmul ceiling
    stream_seconds: float  # memory-bound kernels (layers and optimizer) at achievable bandwidth
    bandwidth_per_sm_cycle: float  # the card's achievable bandwidth over its multiprocessors' cycles (bytes)


@dataclass(frozen=True)
class StepWork:
    """Card-independent work of one step: per-layer kernels, the optimizer's, samples and tokens."""

    layers: tuple[LayerWork, ...]
    optimizer_bytes: float  # bytes the optimizer's kernels stream (0: no optimizer step)
    samples: int
    tokens_per_sample: int
    optimizer: OptimizerWork = NO_OPTIMIZER
    training: bool = False

    @cached_property
    def gemm_counts(self) -> tuple[tuple[Gemm, int], ...]:
        """Each distinct GEMM shape once, with how often it runs: repeated blocks (ResNet stages,
        transformer layers) are timed once per card, which keeps ranking hundreds of cards fast."""
        return tuple(Counter(g for layer in self.layers for g in layer.gemms).items())

    @cached_property
    def totals(self) -> tuple[float, int, int, int]:
        """Attention FLOPs, kernels, forward ops and the autograd nodes those record (card-independent sums)."""
        ops = sum(x.host_ops for x in self.layers)
        return (
            sum(x.attention_flops for x in self.layers),
            sum(x.kernels for x in self.layers),
            ops,
            ops - sum(x.untracked_ops for x in self.layers),
        )


def step_work(e: Estimate, tokens_per_sample: int = 1) -> StepWork:
    w = e.workload
    layers = layer_works(e.layers, w.training)
    # the optimizer steps only what trains: a LoRA/QLoRA step streams the adapters' states, not the base's
    opt = (
        optimizer_work(w.optimizer, e.trainable_param_count, sum(x.param_tensors for x in layers), w.param_dtype_bytes)
        if w.training
        else NO_OPTIMIZER
    )
    return StepWork(layers, float(opt.moved_bytes), w.batch, tokens_per_sample, opt, w.training)


def step_parts(work: StepWork, card: Device) -> StepParts:
    matmul = unaligned = conv = stream = backward = 0.0
    winograd = {dtype: winograd_runs(card, dtype) for dtype in (2, 4)}
    for g, count in work.gemm_counts:
        seconds = count * gemm_seconds(g.m, g.n, g.k, card, g.dtype_bytes, g.conv)
        if g.winograd and winograd.get(g.dtype_bytes, False):
            seconds /= WINOGRAD_MULTIPLY_REDUCTION
        backward += seconds if g.backward else 0.0
        if g.conv:
            conv += seconds
        elif g.dtype_bytes <= 2 and (g.m % 8 or g.n % 8 or g.k % 8):
            unaligned += seconds
        else:
            matmul += seconds
    bandwidth = bandwidth_bytes_per_s(card)
    simt = simt_flops_per_s(card)
    for layer in work.layers:  # inline stream_seconds: this loop runs for every card ranked
        stream += max(layer.stream_bytes / bandwidth, layer.simt_flops / simt)
    attention_flops, kernels, python_ops, autograd_nodes = work.totals
    attention = attention_flops / (card.matmul_tflops * 1e12)
    host = STEP_HOST_SECONDS if work.layers and work.training else 0.0
    if work.optimizer_bytes:  # 0 when a caller times the layers alone (gradient accumulation)
        kernels += work.optimizer.kernels
        host += work.optimizer.host_seconds
        stream += stream_seconds(work.optimizer_bytes, 0.0, card)
    nodes = autograd_nodes if work.training else 0
    return StepParts(
        python_ops,
        nodes,
        kernels,
        host,
        matmul,
        unaligned,
        conv,
        backward,
        attention,
        stream,
        bandwidth / (max(card.sm_count, 1) * card.sm_clock_hz),
    )


def combine(parts: StepParts, eff: Efficiency, tensor_cores: bool) -> float:
    """The step takes the longer of the host's dispatching and the device's queue of kernels."""
    host = (
        parts.python_ops * eff.python_op_seconds
        + parts.backward_nodes * eff.backward_node_seconds
        + parts.kernels * LAUNCH_HOST_SECONDS
        + parts.host_fixed_seconds
    )
    tensor = eff.tensor if tensor_cores else 1.0
    device = (
        parts.matmul_seconds / tensor
        + parts.unaligned_seconds / (tensor * eff.unaligned)
        + parts.conv_seconds / eff.conv
        + parts.attention_seconds / eff.attention
        + parts.stream_seconds * eff.stream * (1.0 + parts.bandwidth_per_sm_cycle / eff.sm_stream_bytes_per_cycle)
        + parts.backward_gemm_seconds * (1 / eff.backward - 1)
        + parts.kernels * eff.kernel_seconds
    )
    return max(host, device)


def step_seconds(work: StepWork, card: Device, eff: Efficiency = FITTED) -> float:
    return combine(step_parts(work, card), eff, card.tensor_cores)
