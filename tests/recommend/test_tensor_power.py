"""The die's energy rule: which share of its tensor peak a large GEMM holds under the board's power limit."""

from __future__ import annotations

from dataclasses import replace

import pytest

from advisor.catalog.records import CardRecord
from advisor.core.workload import Workload
from advisor.recommend.devices import Device, device
from advisor.recommend.kernels import gemm_flops_per_s, tensor_ceiling
from advisor.recommend.tensor_power import (
    GA100,
    GB100,
    GRAPHICS_ENERGY_RATIO,
    HOPPER,
    TURING,
    TensorPower,
    graphics,
    tensor_power,
)


@pytest.mark.parametrize(
    ("rule", "watts", "tflops", "share"),
    [
        (HOPPER, 700, 989.5, 0.79),  # H200: 782.7 / 989.5 measured (the rule's anchor)
        (GA100, 250, 312, 0.811),  # A100 PCIe: 252.9 / 312 (MAMF table)
        (GA100, 400, 312, 0.869),  # A100 SXM: 271.2 / 312, power to spare
        (GB100, 1000, 2250, 0.776),  # B200: 1745 / 2250
        (TURING, 70, 65, 24 / 65),  # T4: ~24 of 65 TFLOPS under its 70 W cap
    ],
)
def test_each_rule_puts_its_measured_share_on_its_board(
    rule: TensorPower, watts: float, tflops: float, share: float
) -> None:
    assert tensor_ceiling(tflops, watts, rule) == pytest.approx(share)


def test_a_graphics_die_spends_a_fixed_multiple_of_its_data_centre_siblings_energy() -> None:
    assert GRAPHICS_ENERGY_RATIO == 3.0
    # Ada beside Hopper (TSMC 4N): 3.0 x 0.905 = 2.715 W per TFLOPS; Hopper's own point is 0.7074 / (0.79 /
    # 0.95) ^ (4/3) = 0.905
    ada = graphics("Ada Lovelace")
    assert ada.saturation_w_per_tflops == pytest.approx(3.0 * HOPPER.saturation_w_per_tflops)
    assert HOPPER.saturation_w_per_tflops == pytest.approx(0.905, abs=1e-3)
    # RTX 4090: 450 W / 165.2 TFLOPS = 2.724 W per TFLOPS, just past 2.715: the maximum, 1.0
    assert ada.ceiling(165.2, 450) == pytest.approx(1.0)
    # RTX 6000 Ada: 300 / 364.4 = 0.823 W per TFLOPS: (0.823 / 2.715) ^ 0.75 = 0.409
    assert ada.ceiling(364.4, 300) == pytest.approx(0.409, abs=1e-3)
    # A10 beside the A100: 3.0 x 0.878 = 2.63; 150 W / 125 TFLOPS = 1.2: (1.2 / 2.63) ^ 0.75 = 0.554
    assert graphics("Ampere").ceiling(125, 150) == pytest.approx(0.554, abs=1e-3)
    # the same 150 W board on Hopper's energy per FLOP would hold 0.95: 1.2 W per TFLOPS > 0.905
    assert HOPPER.ceiling(125, 150) == pytest.approx(0.95)


def _card(architecture: str, memory: str, vendor: str = "NVIDIA") -> CardRecord:
    return CardRecord("test", vendor, architecture, "datacenter", 2**36, memory, 2000.0, 30.0, 400, "test")


@pytest.mark.parametrize(
    ("record", "rule"),
    [
        (_card("Hopper", "HBM3"), HOPPER),
        (_card("Ampere", "HBM2e"), GA100),  # A100, A30
        (_card("Ampere", "GDDR6"), graphics("Ampere")),  # A10, RTX A6000, GeForce RTX 30
        (_card("Ada Lovelace", "GDDR6"), graphics("Ada Lovelace")),
        (_card("Blackwell", "HBM3e"), GB100),
        (_card("Blackwell", "GDDR7"), graphics("Blackwell")),  # RTX 5090, RTX PRO 6000
        (_card("Turing", "GDDR6"), TURING),
        (_card("Volta", "HBM2"), TURING),  # same 12 nm node
        (_card("CDNA 3", "HBM3", "AMD"), HOPPER),  # no measured rule of its own
    ],
)
def test_the_rule_follows_the_die(record: CardRecord, rule: TensorPower) -> None:
    assert tensor_power(record) == rule
    assert device(record, Workload("train", 8, "amp_bf16", "adamw")).tensor_power == rule


def test_a_tf32_gemm_throttles_like_the_half_precision_one_of_twice_its_rate() -> None:
    # 100 TFLOPS TF32 on 90.5 W: the power of 200 half-precision TFLOPS, 0.4525 W per TFLOPS on Hopper's rule
    # (saturation 0.905): 0.95 x (0.4525 / 0.905) ^ 0.75 = 0.95 x 0.5 ^ 0.75 = 0.565, under the 0.81 cap
    tf32 = Device(
        name="test",
        vendor="NVIDIA",
        memory_bytes=2**34,
        usable_bytes=2**33,
        bandwidth_gbs=1e9,
        matmul_tflops=100.0,
        conv_tflops=100.0,
        fp32_tflops=50.0,
        tdp_w=90.5,
        link_gbs=32.0,
        link_name="PCIe",
        sm_count=1,
        tf32_conv=True,
        tf32_matmul=True,
    )
    share = HOPPER.ceiling(200.0, 90.5)
    assert share == pytest.approx(0.95 * 0.5**0.75, rel=1e-3)
    # one 128 x 128 tile on the one SM: the GEMM runs at the ceiling rate
    assert gemm_flops_per_s(128, 128, 1024, tf32, dtype_bytes=4) == pytest.approx(100e12 * share)
    # with the power of a full-clock board the measured TF32 cap holds instead: 0.81
    assert gemm_flops_per_s(128, 128, 1024, replace(tf32, tdp_w=1000.0), dtype_bytes=4) == pytest.approx(81e12)
