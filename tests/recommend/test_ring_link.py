"""A ring collective over N cards runs at its slowest hop: an NVLink bridge joins two boards, so over more of
them the ring's pace is PCIe's (advisor.recommend.devices Device.ring_gbs); NVLink on SXM boards (NVSwitch)
reaches every peer."""

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
