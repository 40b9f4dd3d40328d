"""The kernel model's arithmetic: waves of GEMM tiles over the SMs, split-K, bandwidth, launches,
the optimizer's foreach kernels and the SM count derived from a card's FP32 rate."""

from __future__ import annotations

import pytest

from advisor.catalog.records import CardRecord
from advisor.core.workload import Workload
from advisor.recommend.devices import Device, device
from advisor.recommend.kernels import (
    BANDWIDTH_CEILING,
    LAUNCH_DEVICE_SECONDS,
    LAUNCH_HOST_SECONDS,
    gemm_seconds,
    launch_seconds,
    stream_seconds,
    tensor_ceiling,
)
from advisor.recommend.multiprocessors import sm_count
from advisor.recommend.optimizer_kernels import optimizer_work


def card(sms: int = 4, tflops: float = 100.0, bandwidth_gbs: float = 1e6) -> Device:
    """A made-up card: `tflops` half-precision tensor rate, 1 FP32 TFLOPS, huge bandwidth unless given."""
    return Device(
        name="test",
        vendor="NVIDIA",
        memory_bytes=2**34,
        usable_bytes=2**33,
        bandwidth_gbs=bandwidth_gbs,
        matmul_tflops=tflops,
        conv_tflops=tflops,
        fp32_tflops=1.0,
        tdp_w=300.0,
        link_gbs=32.0,
        link_name="PCIe",
        sm_count=sms,
        tensor_cores=True,
    )


def per_sm_rate(dev: Device) -> float:
    return dev.matmul_tflops * 1e12 * tensor_ceiling(dev.matmul_tflops, dev.tdp_w) / dev.sm_count


def test_a_gemm_that_fills_exactly_one_wave() -> None:
    dev = card(sms=4)
    # 256 x 256 output = 2 x 2 = 4 tiles of 128 x 128 on 4 SMs: one wave, each tile 2*128*128*1024 FLOPs
    expected = 2 * 128 * 128 * 1024 / per_sm_rate(dev)
    assert gemm_seconds(256, 256, 1024, dev) == pytest.approx(expected)


def test_one_tile_more_than_the_card_holds_costs_a_second_wave() -> None:
    dev = card(sms=4)
    one_wave = gemm_seconds(256, 256, 1024, dev)
    # 256 x 384 = 2 x 3 = 6 tiles on 4 SMs: 2 waves, so twice the time for 1.5x the FLOPs
    assert gemm_seconds(256, 384, 1024, dev) == pytest.approx(2 * one_wave)
    # a ragged edge pads to whole tiles: 129 rows need 2 row-tiles, as 256 do
    assert gemm_seconds(129, 256, 1024, dev) == pytest.approx(one_wave)


def test_too_few_tiles_split_the_reduction_over_idle_sms() -> None:
    dev = card(sms=4)
    # 128 x 128 = 1 tile on 4 SMs; K = 1024 splits into min(4 // 1, 1024 // 256) = 4 parts of 256
    expected = 2 * 128 * 128 * 256 / per_sm_rate(dev)
    assert gemm_seconds(128, 128, 1024, dev) == pytest.approx(expected)


def test_a_thin_gemm_is_bound_by_memory() -> None:
    dev = card(sms=132, tflops=1000.0, bandwidth_gbs=1000.0)
    # arithmetic: 64 tiles, one wave of 2*128*128*8 FLOPs at 1000e12 * 0.79 / 132 per SM = 0.04 us;
    # 8192 x 8 x 8 in half precision: (8192*8 + 8*8 + 8192*8) * 2 bytes = 262,272 B at 1000 GB/s x 0.87
    moved = (8192 * 8 + 8 * 8 + 8192 * 8) * 2
    assert gemm_seconds(8192, 8, 8, dev) == pytest.approx(moved / (1000e9 * BANDWIDTH_CEILING))


def test_elementwise_kernel_streams_at_the_achievable_bandwidth() -> None:
    dev = card(bandwidth_gbs=2000.0)
    # 1 GB read + 1 GB written at 2000 GB/s x 0.87 = 1.149 ms; its 0.25 GFLOP on CUDA cores is far less
    assert stream_seconds(2e9, 0.25e9, dev) == pytest.approx(2e9 / (2000e9 * BANDWIDTH_CEILING))


def test_launches_cost_host_and_device_time() -> None:
    host, device = launch_seconds(10)
    assert (host, device) == pytest.approx((10 * LAUNCH_HOST_SECONDS, 10 * LAUNCH_DEVICE_SECONDS))


def test_adamw_foreach_step() -> None:
    work = optimizer_work("adamw", 1_000_000, 10, 4)
    # 8 foreach ops streaming 2+3+2+4+2+2+2+4 = 21 parameter-sized tensors of 4 MB
    assert work.moved_bytes == 21 * 1_000_000 * 4
    # each op: 10 tensors fit one launch, 1e6 / 65,536 + 10 / 2 = 20.3 chunks fit 320 blocks -> 8 launches
    assert work.kernels == 8
    # 8 calls x 20 us + 8 calls x 10 tensors x 1 us = 240 us
    assert work.host_seconds == pytest.approx(240e-6)


def test_many_tensors_need_several_launches() -> None:
    # SGD's _foreach_add_(params, grads) walks 2 lists: at most 64 tensors a launch; 200 tensors -> 4
    assert optimizer_work("sgd", 200_000, 200, 4).kernels == 4


def _record(name: str, architecture: str, fp32: float, tf32: float | None = None, memory: str = "HBM") -> CardRecord:
    return CardRecord(
        name, "NVIDIA", architecture, "datacenter", 2**36, memory, 2000.0, fp32, 400, "test", tf32_tflops=tf32
    )


@pytest.mark.parametrize(
    ("record", "expected"),
    [
        (_record("H200", "Hopper", 67.0, 494.5), 132),  # 67e12 / (2 x 128 x 1.98e9) = 132.2
        (_record("A100", "Ampere", 19.5, 156.0), 108),  # GA100: 19.5e12 / (2 x 64 x 1.41e9) = 108.0
        (_record("RTX 3090", "Ampere", 35.6, 35.6), 82),  # GA102: 35.6e12 / (2 x 128 x 1.70e9) = 81.8
        (_record("B200", "Blackwell", 75.0, 1125.0), 148),  # GB100 dies: 75e12 / (2 x 128 x 1.98e9) = 148.0
        (_record("RTX 5090", "Blackwell", 104.8, 104.8, "GDDR7"), 170),  # GB202: 104.8e12 / (2 x 128 x 2.41e9)
    ],
)
def test_sm_count_from_fp32_rate(record: CardRecord, expected: int) -> None:
    assert sm_count(record) == expected


def test_fp32_runs_on_tf32_tensor_cores_wherever_the_card_has_them() -> None:
    fp32, tf32 = Workload("train", 8, "fp32", "sgd"), Workload("train", 8, "fp32", "sgd", tf32=True)
    geforce = _record("RTX 3090", "Ampere", 35.6, 35.6, "GDDR6X")  # TF32 at the FP32 rate, still tensor cores
    volta = _record("V100", "Volta", 15.7)  # no TF32
    assert (device(geforce, fp32).tf32_conv, device(geforce, fp32).tf32_matmul) == (True, False)
    assert device(geforce, tf32).tf32_matmul
    assert not device(volta, tf32).tf32_conv and not device(volta, tf32).tf32_matmul
    assert not device(geforce, Workload("train", 8, "amp_bf16", "sgd")).tf32_conv  # half precision: not TF32
