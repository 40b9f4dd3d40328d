"""Step-level arithmetic of the time model: the kernels of a layer row sorted into GEMMs and streams, host- and
launch-bound steps, bandwidth-bound layers, and the fixed host cost of a training step."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from advisor.core.estimate import LayerRow
from advisor.core.kernels import Convolution, Kernel, Matmul, Pass, Stream
from advisor.recommend.kernels import BANDWIDTH_CEILING, LAUNCH_DEVICE_SECONDS, LAUNCH_HOST_SECONDS
from advisor.recommend.optimizer_kernels import OptimizerWork
from advisor.recommend.step_layers import Gemm, LayerWork, layer_works
from advisor.recommend.timing import STEP_HOST_SECONDS, Efficiency, StepWork, step_seconds
from tests.recommend.test_timing_kernels import card

EFF = Efficiency(
    python_op_seconds=10e-6,
    backward_node_seconds=5e-6,
    tensor=1.0,
    unaligned=1.0,
    conv=1.0,
    attention=1.0,
    stream=1.0,
    sm_stream_bytes_per_cycle=math.inf,
    kernel_seconds=LAUNCH_DEVICE_SECONDS,
    backward=1.0,
)


def _work(
    gemms: tuple[Gemm, ...] = (),
    stream_bytes: float = 0.0,
    simt_flops: float = 0.0,
    kernels: int = 1,
    host_ops: int = 1,
) -> LayerWork:
    return LayerWork(
        gemms=gemms,
        attention_flops=0.0,
        stream_bytes=stream_bytes,
        simt_flops=simt_flops,
        kernels=kernels,
        host_ops=host_ops,
        param_tensors=0,
        untracked_ops=0,
    )


def _row(kernels: tuple[Kernel, ...], host_ops: int = 1, autograd_nodes: int = 1) -> LayerRow:
    return LayerRow(
        name="l",
        kind="anything",
        output_shape=(1,),
        param_count=0,
        forward_macs=0,
        forward_flops=0,
        backward_flops=0,
        output_bytes=0,
        kept_bytes=0,
        kernels=kernels,
        host_ops=host_ops,
        autograd_nodes=autograd_nodes,
        param_tensors=0,
    )


def test_the_time_model_reads_kernels_not_kinds() -> None:
    gemm = Matmul(m=8192, n=2304, k=768, batches=1, launches=1, dtype_bytes=2, pass_=Pass.FORWARD)
    dgrad = Matmul(m=8192, n=768, k=2304, batches=1, launches=1, dtype_bytes=2, pass_=Pass.INPUT_GRAD)
    (work,) = layer_works([_row((gemm, dgrad))], training=True)
    assert work.gemms == (Gemm(8192, 2304, 768, 2, False, False), Gemm(8192, 768, 2304, 2, False, True))
    (inference,) = layer_works([_row((gemm, dgrad))], training=False)
    assert inference.gemms == (Gemm(8192, 2304, 768, 2, False, False),)  # inference runs the forward kernels only


def test_a_batched_and_repeated_matmul() -> None:
    # 48 batches of 128 x 128 scores in one launch; a recurrent GEMM run 10 times in a row
    bmm = Matmul(m=128, n=128, k=64, batches=48, launches=1, dtype_bytes=2, pass_=Pass.FORWARD)
    steps = Matmul(m=4, n=64, k=16, batches=1, launches=10, dtype_bytes=2, pass_=Pass.FORWARD)
    (work,) = layer_works([_row((bmm, steps))], training=False)
    assert work.gemms == (Gemm(48 * 128, 128, 64, 2, False, False), *(Gemm(4, 64, 16, 2, False, False),) * 10)
    assert work.kernels == 11


def test_depthwise_convolution_streams_memory() -> None:
    # 32 channels of 112 x 112 at batch 2, 9 MACs per output (3 x 3 depthwise) < 64: no GEMM
    dw = Convolution(
        batch=2,
        in_channels=32,
        out_channels=32,
        groups=32,
        kernel_volume=9,
        input_pixels=112 * 112,
        output_pixels=112 * 112,
        dtype_bytes=4,
        pass_=Pass.FORWARD,
    )
    (work,) = layer_works([_row((dw,))], training=False)
    assert work.gemms == ()
    # reads the input and writes the output: 2 x 4 B x 802,816 elements, plus the 288 weights
    assert work.stream_bytes == 2 * 4 * 2 * 32 * 112 * 112 + 4 * 288
    assert work.simt_flops == 2 * 9 * 2 * 32 * 112 * 112


def test_autograd_nodes_and_untracked_ops() -> None:
    stream = Stream(read_bytes=10, written_bytes=10, flops=0, pass_=Pass.FORWARD)
    (work,) = layer_works([_row((stream, stream), host_ops=2, autograd_nodes=1)], training=True)
    assert (work.host_ops, work.untracked_ops, work.kernels) == (2, 1, 2)
    (inference,) = layer_works([_row((stream, stream), host_ops=2, autograd_nodes=0)], training=False)
    assert inference.untracked_ops == 0


def test_a_tiny_inference_step_is_launch_bound() -> None:
    tiny = _work(gemms=(Gemm(1, 16, 16, 2, False, False),))
    work = StepWork((tiny,) * 10, 0.0, 1, 1)
    # host: 10 ops x 10 us + 10 launches x 4.5 us = 145 us, far above the device's few microseconds
    assert step_seconds(work, card(), EFF) == pytest.approx(10 * 10e-6 + 10 * LAUNCH_HOST_SECONDS)


def test_a_bandwidth_bound_layer() -> None:
    layer = _work(stream_bytes=4e9, simt_flops=1e6)
    # 4 GB at 1000 GB/s x 0.87 = 4.6 ms plus one kernel's 2 us gap; the host's 14.5 us is hidden
    expected = 4e9 / (1000e9 * BANDWIDTH_CEILING) + LAUNCH_DEVICE_SECONDS
    assert step_seconds(StepWork((layer,), 0.0, 1, 1), card(bandwidth_gbs=1000.0), EFF) == pytest.approx(expected)


def test_training_step_pays_the_fixed_host_cost_and_the_optimizer() -> None:
    layer = _work(kernels=2)
    optimizer = OptimizerWork(moved_bytes=1000, kernels=3, host_seconds=50e-6)
    work = StepWork((layer,), 1000.0, 1, 1, optimizer, training=True)
    # host: 1 forward op x 10 us + 1 backward node x 5 us + (2 + 3) launches x 4.5 us + 100 us step
    # + 50 us optimizer
    expected = 10e-6 + 5e-6 + 5 * LAUNCH_HOST_SECONDS + STEP_HOST_SECONDS + 50e-6
    assert step_seconds(work, card(), EFF) == pytest.approx(expected)
    # without the optimizer (a gradient-accumulation micro-step) its kernels and host time go
    without = StepWork((layer,), 0.0, 1, 1, optimizer, training=True)
    assert step_seconds(without, card(), EFF) == pytest.approx(expected - 3 * LAUNCH_HOST_SECONDS - 50e-6)


def test_few_multiprocessors_cannot_keep_a_fast_memory_busy() -> None:
    layer = _work(stream_bytes=4e9)
    few_loads = replace(EFF, sm_stream_bytes_per_cycle=58.0)
    # 1000 GB/s x 0.87 over 4 SMs at 1.5 GHz = 145 bytes per SM cycle; at 58 a cycle each the bytes take
    # 1 + 145 / 58 = 3.5x the copy kernel's 4.6 ms
    copy = 4e9 / (1000e9 * BANDWIDTH_CEILING)
    seconds = step_seconds(StepWork((layer,), 0.0, 1, 1), card(sms=4, bandwidth_gbs=1000.0), few_loads)
    assert seconds == pytest.approx(copy * 3.5 + LAUNCH_DEVICE_SECONDS)


def _conv3x3(dtype_bytes: int, stride: int = 1) -> LayerRow:
    pixels = 32 * 32
    conv = Convolution(
        batch=8,
        in_channels=64,
        out_channels=64,
        groups=1,
        kernel_volume=9,
        input_pixels=pixels,
        output_pixels=pixels // stride**2,
        dtype_bytes=dtype_bytes,
        pass_=Pass.FORWARD,
    )
    return _row((conv,))


def test_winograd_runs_3x3_stride_1_convolutions_on_cuda_cores_only() -> None:
    (work,) = layer_works([_conv3x3(4)], training=False)
    (strided,) = layer_works([_conv3x3(4, stride=2)], training=False)
    assert work.gemms[0].winograd and not strided.gemms[0].winograd
    simt = replace(card(), tensor_cores=False)  # fp32 on a card without TF32 tensor cores (V100, Turing)
    tf32 = replace(simt, tf32_conv=True, conv_tflops=8.0)
    direct = replace(work, gemms=(replace(work.gemms[0], winograd=False),))
    step = StepWork((work,), 0.0, 1, 1)
    plain = StepWork((direct,), 0.0, 1, 1)
    # F(2x2, 3x3): 16 multiplies for 36, so the GEMM part takes 16 / 36 of its time on CUDA cores
    gemm = step_seconds(plain, simt, EFF) - LAUNCH_DEVICE_SECONDS
    assert step_seconds(step, simt, EFF) - LAUNCH_DEVICE_SECONDS == pytest.approx(gemm * 16 / 36)
    # on TF32 tensor cores cuDNN runs the implicit GEMM
    assert step_seconds(step, tf32, EFF) == pytest.approx(step_seconds(plain, tf32, EFF))
