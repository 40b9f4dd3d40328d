"""Step time from a per-layer roofline: each layer takes the longer of its arithmetic at the card's peak
rate and its memory traffic at the card's bandwidth, each scaled by an efficiency, plus a fixed cost per
kernel launch (eager PyTorch dispatches every op from Python).

The four efficiencies are fitted on the H200 step times of shared/calibration/h200/measurements.csv by
benchmarks/time.py (which prints the fit and the error); the same constants serve every card.
"""

from __future__ import annotations

from dataclasses import dataclass

from advisor.core.estimate import Estimate, LayerRow
from advisor.recommend.devices import Device


@dataclass(frozen=True)
class Efficiency:
    tensor: float  # share of the peak half-precision tensor-core rate that conv/linear layers reach
    tf32: float  # share of the peak TF32 rate that fp32 convolutions reach (cuDNN allows TF32 by default)
    cuda_core: float  # share of the peak FP32 rate (fp32 matmuls, elementwise arithmetic)
    shallow: float  # share of the peak FP32 rate that depthwise/grouped convolutions reach
    memory: float  # share of the peak bandwidth layers stream at
    seconds_per_kernel: float  # launch and dispatch cost of one kernel


# Fitted by benchmarks/time.py on the H200 rows (its output shows the fit and the error per row).
# Median |error| 13.6% over 68 rows; inference rows are over-predicted most (up to +120%).
FITTED = Efficiency(tensor=0.4, tf32=0.45, cuda_core=0.7, shallow=0.07, memory=0.4, seconds_per_kernel=30e-6)
# cuDNN runs convolutions with a shallow reduction (depthwise: 9 multiply-adds per output) on CUDA cores.
MIN_MACS_PER_OUTPUT_FOR_TENSOR_CORES = 64

# Layer kinds of the analytic graph, and the nn.Module class names a simulated estimate reports
# (HF's Conv1D is a linear layer).
_CONV_KINDS = frozenset({"conv", "conv_transpose", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d",
                         "ConvTranspose2d", "ConvTranspose3d"})
_MATMUL_KINDS = frozenset({"linear", "attention", "lstm", "gru", "window_attention", "Linear", "Conv1D",
                           "NonDynamicallyQuantizableLinear", "LSTM", "GRU", "RNN"})


@dataclass(frozen=True)
class LayerWork:
    """Card-independent work of one layer over a whole step (forward, and backward when training)."""

    conv_flops: float
    shallow_flops: float  # depthwise/grouped convolutions: CUDA cores whatever the precision
    matmul_flops: float
    other_flops: float
    bytes_moved: float
    kernels: int


@dataclass(frozen=True)
class StepWork:
    layers: tuple[LayerWork, ...]
    optimizer_bytes: float  # the optimizer step streams parameters, gradients and state once
    samples: int
    tokens_per_sample: int


def _layer_work(row: LayerRow, training: bool, dtype: int, amp: bool) -> LayerWork:
    flops = row.forward_flops + row.backward_flops
    mac_flops = min(2 * row.forward_macs * (3 if training and row.backward_flops else 1), flops)
    passes = 3 if training else 1  # backward reads and writes about twice what forward does
    moved = passes * (2 * row.output_bytes + row.param_count * dtype)
    outputs = max(row.batch_outputs, 1)
    shallow = row.kind in _CONV_KINDS and row.forward_macs / outputs < MIN_MACS_PER_OUTPUT_FOR_TENSOR_CORES
    kind = ("shallow" if shallow else "conv" if row.kind in _CONV_KINDS
            else "matmul" if row.kind in _MATMUL_KINDS else "")
    # autocast launches casts of the input and the weight, and in backward of the weight's gradient
    casts = (3 if training else 2) if amp and kind in ("conv", "matmul", "shallow") else 0
    return LayerWork(mac_flops if kind == "conv" else 0.0, mac_flops if kind == "shallow" else 0.0,
                     mac_flops if kind == "matmul" else 0.0, flops - (mac_flops if kind else 0.0), moved,
                     passes + casts)


def step_work(e: Estimate, tokens_per_sample: int = 1) -> StepWork:
    training = e.workload.training
    dtype = 4 if e.workload.param_dtype_bytes == 4 and not e.workload.amp else 2
    layers = tuple(_layer_work(row, training, dtype, e.workload.amp) for row in e.layers
                   if row.output_bytes or row.forward_flops)  # views launch no kernel
    states = {"sgd": 0, "sgd_momentum": 1, "adam": 2, "adamw": 2}[e.workload.optimizer] if training else 0
    optimizer = (3 + 2 * states) * e.param_count * e.workload.param_dtype_bytes if training else 0
    return StepWork(layers, optimizer, e.workload.batch, tokens_per_sample)


def step_seconds(work: StepWork, card: Device, eff: Efficiency = FITTED) -> float:
    def rate(tflops: float, tensor_efficiency: float) -> float:
        return tflops * 1e12 * (tensor_efficiency if tflops > card.fp32_tflops else eff.cuda_core)

    half = card.matmul_tflops > card.fp32_tflops
    conv = rate(card.conv_tflops, eff.tensor if half else eff.tf32)
    matmul = rate(card.matmul_tflops, eff.tensor)
    shallow = card.fp32_tflops * 1e12 * eff.shallow
    other = card.fp32_tflops * 1e12 * eff.cuda_core
    bandwidth = card.bandwidth_gbs * 1e9 * eff.memory
    total = work.optimizer_bytes / bandwidth
    for layer in work.layers:
        compute = (layer.conv_flops / conv + layer.shallow_flops / shallow + layer.matmul_flops / matmul
                   + layer.other_flops / other)
        total += max(compute, layer.bytes_moved / bandwidth) + layer.kernels * eff.seconds_per_kernel
    return total
