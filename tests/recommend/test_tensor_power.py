"""The die's energy rule: which share of its tensor peak a large GEMM holds under the board's power limit."""

from __future__ import annotations

import pytest

from advisor.catalog.records import CardRecord
from advisor.core.workload import Workload
from advisor.recommend.devices import device
from advisor.recommend.kernels import tensor_ceiling
from advisor.recommend.tensor_power import (
    GA100,
    GB100,
    GRAPHICS,
    GRAPHICS_SATURATION_W_PER_TFLOPS,
    HOPPER,
    TURING,
    TensorPower,
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


def test_a_graphics_die_holds_its_clock_only_with_the_power_for_it() -> None:
    # RTX 4090: 450 W / 165.2 TFLOPS = 2.72 W per TFLOPS, above the 2.25 saturation point: the maximum, 1.0
    assert GRAPHICS.ceiling(165.2, 450) == pytest.approx(1.0)
    # A10: 150 W / 125 TFLOPS = 1.2 W per TFLOPS: 1.0 x (1.2 / 2.25) ^ 0.75 = 0.6244
    assert GRAPHICS.ceiling(125, 150) == pytest.approx((1.2 / GRAPHICS_SATURATION_W_PER_TFLOPS) ** 0.75)
    assert GRAPHICS.ceiling(125, 150) == pytest.approx(0.624, abs=1e-3)
    # the same 150 W board on Hopper's energy per FLOP would hold 0.95: 1.2 W per TFLOPS > 0.905
    assert HOPPER.ceiling(125, 150) == pytest.approx(0.95)


def _card(architecture: str, memory: str, vendor: str = "NVIDIA") -> CardRecord:
    return CardRecord("test", vendor, architecture, "datacenter", 2**36, memory, 2000.0, 30.0, 400, "test")


@pytest.mark.parametrize(
    ("record", "rule"),
    [
        (_card("Hopper", "HBM3"), HOPPER),
        (_card("Ampere", "HBM2e"), GA100),  # A100, A30
        (_card("Ampere", "GDDR6"), GRAPHICS),  # A10, RTX A6000, GeForce RTX 30
        (_card("Ada Lovelace", "GDDR6"), GRAPHICS),
        (_card("Blackwell", "HBM3e"), GB100),
        (_card("Blackwell", "GDDR7"), GRAPHICS),  # RTX 5090, RTX PRO 6000
        (_card("Turing", "GDDR6"), TURING),
        (_card("CDNA 3", "HBM3", "AMD"), HOPPER),  # no measured rule of its own
    ],
)
def test_the_rule_follows_the_die(record: CardRecord, rule: TensorPower) -> None:
    assert tensor_power(record) == rule
    assert device(record, Workload("train", 8, "amp_bf16", "adamw")).tensor_power == rule
