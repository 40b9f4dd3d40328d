"""Step-level arithmetic of the time model: GEMM shapes from a layer row, host- and launch-bound steps,
bandwidth-bound layers, and the fixed host cost of a training step."""

from __future__ import annotations

import pytest

from advisor.core.estimate import LayerRow
from advisor.recommend.kernels import BANDWIDTH_CEILING, LAUNCH_DEVICE_SECONDS, LAUNCH_HOST_SECONDS
from advisor.recommend.optimizer_kernels import OptimizerWork
from advisor.recommend.step_layers import Gemm, LayerWork, layer_works
from advisor.recommend.timing import STEP_HOST_SECONDS, Efficiency, StepWork, step_seconds
from tests.recommend.test_timing_kernels import card

EFF = Efficiency(python_op_seconds=10e-6, backward_node_seconds=5e-6, tensor=1.0, unaligned=1.0, conv=1.0,
                 attention=1.0, stream=1.0)


def _linear_row(batch: int) -> LayerRow:
    outputs = batch * 1024 * 2304
    macs = outputs * 768
    return LayerRow("c_attn", "linear", (1024, 2304), 768 * 2304 + 2304, macs, 2 * macs, 4 * macs,
                    outputs * 2, 0, outputs)


def test_linear_layer_is_one_gemm_forward_and_two_backward() -> None:
    (work,) = layer_works([_linear_row(8)], training=True, act_bytes=2, amp=False)
    # M = 8 x 1024 tokens, N = 2304 features, K = 8 x 1024 x 2304 x 768 MACs / outputs = 768;
    # input gradient GEMM(M, K, N), weight gradient GEMM(N, K, M)
    assert work.gemms == (Gemm(8192, 2304, 768, 2, False), Gemm(8192, 768, 2304, 2, False),
                          Gemm(2304, 768, 8192, 2, False))
    assert work.kernels == 3
    assert work.param_tensors == 2  # 768 x 2304 weight + a 2304 bias


def test_depthwise_convolution_streams_memory() -> None:
    # 32 channels of 112 x 112 at batch 2, 9 MACs per output (3 x 3 depthwise) < 64: no GEMM
    outputs = 2 * 32 * 112 * 112
    row = LayerRow("dw", "conv", (32, 112, 112), 288, 9 * outputs, 18 * outputs, 0, 4 * outputs, 0, outputs)
    (work,) = layer_works([row], training=False, act_bytes=4, amp=False)
    assert work.gemms == ()
    # reads the input (taken as the same size, no earlier row) and writes the output: 2 x 4 B x outputs
    assert work.stream_bytes == 2 * 4 * outputs


def test_a_tiny_inference_step_is_launch_bound() -> None:
    tiny = LayerWork((Gemm(1, 16, 16, 2, False),), 0.0, 0.0, 0.0, kernels=1, host_ops=1)
    work = StepWork((tiny,) * 10, 0.0, 1, 1)
    # host: 10 ops x 10 us + 10 launches x 4.5 us = 145 us, far above the device's few microseconds
    assert step_seconds(work, card(), EFF) == pytest.approx(10 * 10e-6 + 10 * LAUNCH_HOST_SECONDS)


def test_a_bandwidth_bound_layer() -> None:
    layer = LayerWork((), 0.0, 4e9, 1e6, kernels=1, host_ops=1)
    # 4 GB at 1000 GB/s x 0.87 = 4.6 ms plus one kernel's 2 us gap; the host's 14.5 us is hidden
    expected = 4e9 / (1000e9 * BANDWIDTH_CEILING) + LAUNCH_DEVICE_SECONDS
    assert step_seconds(StepWork((layer,), 0.0, 1, 1), card(bandwidth_gbs=1000.0), EFF) == pytest.approx(expected)


def test_training_step_pays_the_fixed_host_cost_and_the_optimizer() -> None:
    layer = LayerWork((), 0.0, 0.0, 0.0, kernels=2, host_ops=1)
    optimizer = OptimizerWork(moved_bytes=1000, kernels=3, host_seconds=50e-6)
    work = StepWork((layer,), 1000.0, 1, 1, optimizer, training=True)
    # host: 1 forward op x 10 us + 1 backward node x 5 us + (2 + 3) launches x 4.5 us + 100 us step
    # + 50 us optimizer
    expected = 10e-6 + 5e-6 + 5 * LAUNCH_HOST_SECONDS + STEP_HOST_SECONDS + 50e-6
    assert step_seconds(work, card(), EFF) == pytest.approx(expected)
    # without the optimizer (a gradient-accumulation micro-step) its kernels and host time go
    without = StepWork((layer,), 0.0, 1, 1, optimizer, training=True)
    assert step_seconds(without, card(), EFF) == pytest.approx(expected - 3 * LAUNCH_HOST_SECONDS - 50e-6)


def _elementwise_row(kind: str, elements: int) -> LayerRow:
    return LayerRow(kind, kind, (elements,), 0, 0, elements, 2 * elements, 2 * elements, 0, elements)


def test_composite_gelu_launches_one_kernel_per_op() -> None:
    (work,) = layer_works([_elementwise_row("gelu_tanh_composite", 1000)], training=True, act_bytes=2, amp=False)
    # 8 ops (pow, mul, add, mul, tanh, add, mul, mul), each forward and backward: 16 kernels;
    # forward 8 x (2000 B read + 2000 B written), backward 8 x 3 x 2000 B
    assert work.kernels == 16
    assert work.host_ops == 8
    assert work.stream_bytes == 8 * (2000 + 2000) + 8 * 3 * 2000


def test_training_batch_norm_reads_its_input_twice() -> None:
    (plain,) = layer_works([_elementwise_row("relu", 1000)], training=True, act_bytes=2, amp=False)
    (norm,) = layer_works([_elementwise_row("batchnorm", 1000)], training=True, act_bytes=2, amp=False)
    # relu: forward 2000 + 2000 B, backward 3 x 2000 B = 10,000 B
    assert plain.stream_bytes == 10_000
    # batch norm: forward 2 x 2000 + 2000 B, backward 5 x 2000 B = 16,000 B
    assert norm.stream_bytes == 16_000


def test_autocast_casts_weight_and_bias_each_way() -> None:
    (work,) = layer_works([_linear_row(8)], training=True, act_bytes=2, amp=True)
    params = 768 * 2304 + 2304
    # 3 GEMMs + weight and bias cast to half in forward + their gradients cast back in backward = 7
    assert work.kernels == 3 + 2 + 2
    assert work.host_ops == 1 + 2  # the linear and its two casts
    # each cast reads 4 B and writes 2 B per parameter, forward and backward
    assert work.stream_bytes == 2 * 6 * params


def _loss_rows(elements: int, act_bytes: int) -> list[LayerRow]:
    logits = LayerRow("lm_head", "linear", (elements,), 0, 0, 0, 0, act_bytes * elements, 0, elements)
    loss = LayerRow("loss", "cross_entropy", (), 0, 0, 4 * elements, 4 * elements, 4, 0, 1)
    return [logits, loss]


def test_half_precision_cross_entropy_upcasts_its_logits() -> None:
    (_, work) = layer_works(_loss_rows(1000, 2), training=True, act_bytes=2, amp=True)
    # forward: cast 2000 B read + 4000 B written, log_softmax 4000 B read + 4000 B written = 14,000 B;
    # backward: nll_loss_backward writes 4000 B, log_softmax_backward reads 2 x 4000 B and writes 4000 B,
    # the cast back reads 4000 B and writes 2000 B = 22,000 B
    assert work.stream_bytes == 14_000 + 22_000
    assert work.kernels == 3 + 4  # cast, log_softmax, nll_loss; fill, nll backward, softmax backward, cast
    assert work.host_ops == 2  # .float() and F.cross_entropy


def test_fp32_cross_entropy_needs_no_cast() -> None:
    (_, work) = layer_works(_loss_rows(1000, 4), training=False, act_bytes=4, amp=False)
    # log_softmax reads the 4000 B of logits and writes 4000 B of log-probabilities
    assert work.stream_bytes == 8000
    assert work.kernels == 2


def test_training_batch_norm_counts_its_batch_without_an_autograd_node() -> None:
    layers = layer_works([_elementwise_row("batchnorm", 1000)], training=True, act_bytes=2, amp=False)
    (norm,) = layers
    # forward: num_batches_tracked.add_(1) and the normalisation; backward: one kernel
    assert (norm.host_ops, norm.kernels, norm.untracked_ops) == (2, 3, 1)
    work = StepWork(layers, 0.0, 1, 1, training=True)
    # 2 forward ops, of which 1 records an autograd node
    assert work.totals[2:] == (2, 1)
    (inference,) = layer_works([_elementwise_row("batchnorm", 1000)], training=False, act_bytes=2, amp=False)
    assert (inference.host_ops, inference.kernels) == (1, 1)
