"""A ring collective over N cards runs at its slowest hop: an NVLink bridge joins two boards, so over more of
them the ring's pace is PCIe's (advisor.recommend.devices Device.ring_gbs); NVLink on SXM boards (NVSwitch)
reaches every peer. A collective moves NCCL's share of that rate (Device.collective_gbs): what NCCL's topology
takes each link to carry, below its line rate."""

from __future__ import annotations

from dataclasses import fields

import pytest

from advisor.catalog.bundled import load_bundled
from advisor.catalog.records import CardRecord
from advisor.core.workload import Workload
from advisor.recommend.devices import device

WORKLOAD = Workload("train", 1, "bf16", "adamw")


@pytest.fixture(scope="module")
def cards() -> dict[str, CardRecord]:
    return {s.name: CardRecord(**{f.name: getattr(s, f.name) for f in fields(s)}) for s in load_bundled().cards}


def test_bridged_boards_ring_over_nvlink_in_pairs_and_over_pcie_beyond(cards: dict[str, CardRecord]) -> None:
    a5000 = device(cards["RTX A5000"], WORKLOAD)  # NVLink 3 bridge, 112.5 GB/s both ways; PCIe 4.0 x16
    assert a5000.ring_gbs(2) == pytest.approx(112.5 / 2)  # 56.25 GB/s each way between the pair
    assert a5000.ring_gbs(4) == a5000.ring_gbs(8) == pytest.approx(31.5)  # 16 GT/s x 16 lanes x 128/130 / 8
    assert "PCIe" in a5000.ring_name(4) and a5000.ring_name(2) == "NVLink 3 bridge"


def test_sxm_nvlink_and_pcie_only_boards_keep_one_rate_at_every_count(cards: dict[str, CardRecord]) -> None:
    a100 = device(cards["A100 SXM4 40GB"], WORKLOAD)  # NVLink 3 through NVSwitch: 600 GB/s both ways
    assert a100.ring_gbs(8) == a100.ring_gbs(2) == pytest.approx(300.0)
    rtx4090 = device(cards["GeForce RTX 4090"], WORKLOAD)  # no NVLink: PCIe 4.0 x16 at any count
    assert rtx4090.ring_gbs(8) == rtx4090.ring_gbs(2) == pytest.approx(31.5)


def test_a_collective_carries_nccls_share_of_the_ring_link(cards: dict[str, CardRecord]) -> None:
    """NCCL's topology rates (advisor.recommend.devices NCCL_PCIE_X16_GBS, LINK_COLLECTIVE_SHARES)."""
    a5000 = device(cards["RTX A5000"], WORKLOAD)
    assert a5000.collective_gbs(2) == pytest.approx(56.25 * 20 / 25)  # 45.0: the bridge at 20 GB/s a 25 GB/s link
    assert a5000.collective_gbs(4) == pytest.approx(16 * 120 / 80)  # 24.0: PCIe 4.0 x16, 120 (100 Mbps) a lane
    assert a5000.comm_seconds(57.9e9, 4) == pytest.approx(57.9 / 24)  # 2.41 s, at 31.5 GB/s it was 1.84
    a100 = device(cards["A100 SXM4 40GB"], WORKLOAD)
    assert a100.collective_gbs(8) == pytest.approx(12 * 20.0)  # 240: 12 NVLink 3 links at SM80_NVLINK_BW
    rtx4090 = device(cards["GeForce RTX 4090"], WORKLOAD)
    assert rtx4090.collective_gbs(2) == pytest.approx(24.0)  # 16 x 120 / 80, as the A5000's ring over PCIe
    mi300x = device(cards["Instinct MI300X"], WORKLOAD)
    assert mi300x.collective_gbs(8) == pytest.approx(896 / 2 * 48 / 64)  # 336: 7 links at GFX94X_XGMI_WIDTH 48
