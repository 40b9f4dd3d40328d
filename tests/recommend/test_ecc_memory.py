"""The fit check reads a card's memory with ECC on where the card ships with ECC on (datacenter boards) and
the ECC bits take memory (records.model_memory_bytes); issue 28: a K40 has 11.25 of its 12 GB."""

from __future__ import annotations

from dataclasses import fields, replace

import pytest

from advisor.catalog.bundled import BundledData, load_bundled
from advisor.catalog.records import CardRecord, model_memory_bytes
from advisor.core.workload import Workload
from advisor.recommend.devices import device

GIB = 2**30
WORKLOAD = Workload("train", 1, "fp32", "adam")


@pytest.fixture(scope="module")
def cards() -> dict[str, CardRecord]:
    bundled: BundledData = load_bundled()
    return {s.name: CardRecord(**{f.name: getattr(s, f.name) for f in fields(s)}) for s in bundled.cards}


def test_a_datacenter_gddr_card_fits_against_its_memory_with_ecc_on(cards: dict[str, CardRecord]) -> None:
    assert device(cards["Tesla T4"], WORKLOAD).memory_bytes == 15 * GIB  # 16 x 15/16
    assert device(cards["Tesla K80"], WORKLOAD).memory_bytes == 11.25 * GIB  # 24 x 15/16 / 2 GPUs
    assert device(cards["L40S"], WORKLOAD).memory_bytes == 45 * GIB  # 48 x 15/16


def test_hbm_and_workstation_cards_keep_their_nominal_memory(cards: dict[str, CardRecord]) -> None:
    assert device(cards["H100 SXM5"], WORKLOAD).memory_bytes == 80 * GIB  # side-band ECC takes nothing
    # A workstation board ships with ECC off: its ECC figure, if stated, does not lower what fits.
    a6000 = replace(cards["RTX A6000"], ecc_memory_bytes=45 * GIB)
    assert model_memory_bytes(a6000) == device(a6000, WORKLOAD).memory_bytes == 48 * GIB


def test_an_ecc_figure_above_the_memory_does_not_add_memory(cards: dict[str, CardRecord]) -> None:
    typo = replace(cards["Tesla T4"], ecc_memory_bytes=160 * GIB)  # 160 for 16: the fit keeps the 16 GiB
    assert model_memory_bytes(typo) == 16 * GIB
