"""Lookups, filters, prices and user rows through the repository functions, on a real seeded database."""

from __future__ import annotations

from dataclasses import replace
from datetime import date
from pathlib import Path

import pytest

from advisor.catalog import (
    CardSpec,
    Catalog,
    CatalogError,
    DuplicateCardError,
    UnknownCardError,
    add_card,
    add_price,
    edit_card,
    find_card,
    latest_price,
    list_cards,
    open_catalog,
    price_history,
)
from advisor.catalog.bundled import BundledData

GIB = 2**30


@pytest.mark.parametrize("typed", ["4090", "RTX 4090", "GeForce RTX 4090", "nvidia geforce  rtx 4090"])
def test_every_usual_name_finds_the_card(catalog: Catalog, typed: str) -> None:
    with catalog.read() as session:
        card = find_card(session, typed)
    assert card.name == "GeForce RTX 4090"
    assert card.memory_bytes == 24 * GIB  # 24 GiB = 25,769,803,776 bytes
    assert {"RTX 4090", "4090"} <= set(card.aliases)


def test_classic_cards_are_told_apart(catalog: Catalog) -> None:
    with catalog.read() as session:
        assert find_card(session, "Titan X Maxwell").memory_bytes == 12 * GIB
        assert find_card(session, "Titan X (Pascal)").bandwidth_gbs == 480  # 384 bit / 8 x 10 Gbps
        assert find_card(session, "Titan Xp").bandwidth_gbs == 547.7  # 384 bit / 8 x 11.41 Gbps
        assert find_card(session, "a100 80 gb pcie").bandwidth_gbs == 1935


def test_unknown_card_names_close_matches(catalog: Catalog) -> None:
    with catalog.read() as session, pytest.raises(UnknownCardError) as caught:
        find_card(session, "RTX 4099")
    assert "unknown card 'RTX 4099'" in str(caught.value)
    assert "RTX 4090" in caught.value.suggestions


def test_list_filters_and_sorts(catalog: Catalog) -> None:
    with catalog.read() as session:
        cards = list_cards(session, vendor="nvidia", segment="datacenter", min_memory_bytes=80 * GIB, sort_by="memory")
    assert cards and all(c.vendor == "NVIDIA" and c.segment == "datacenter" for c in cards)
    assert all(c.memory_bytes >= 80 * GIB for c in cards)
    assert [c.memory_bytes for c in cards] == sorted((c.memory_bytes for c in cards), reverse=True)
    assert cards[0].name == "B300"  # 288 GiB, the largest NVIDIA datacenter memory bundled


def test_list_rejects_an_unknown_sort_key(catalog: Catalog) -> None:
    with catalog.read() as session, pytest.raises(CatalogError, match="cannot sort by 'colour'"):
        list_cards(session, sort_by="colour")


def test_latest_price_by_condition(catalog: Catalog) -> None:
    catalog.transact(lambda s: add_price(s, "1080 Ti", 350.0, on=date(2026, 10, 1), condition="used"))
    catalog.transact(lambda s: add_price(s, "1080 Ti", 280.0, on=date(2026, 11, 1), condition="used"))
    catalog.transact(lambda s: add_card(s, MINE))
    with catalog.read() as session:
        history = price_history(session, "1080 Ti")
        assert (history[0].amount, history[0].market) == (699, "msrp")  # the launch price opens the history
        newest_new = max((p for p in history if p.condition == "new"), key=lambda p: p.date)
        assert latest_price(session, "1080 Ti", condition="new") == newest_new
        used = latest_price(session, "1080 Ti", condition="used")
        assert used is not None
        assert (used.amount, used.date, used.user_owned) == (280.0, date(2026, 11, 1), True)
        assert latest_price(session, "1080 Ti").amount == 280.0  # type: ignore[union-attr]
        assert latest_price(session, "Lab Card X") is None  # a user's own card that nobody has priced


def test_a_bundled_price_cut_follows_the_msrp(catalog: Catalog) -> None:
    with catalog.read() as session:
        history = [(p.date, p.amount) for p in price_history(session, "GTX 1080") if p.kind == "purchase"]
    assert history == [(date(2016, 5, 27), 599.0), (date(2017, 3, 1), 499.0)]  # the rents of 2026 aside


def test_prices_must_be_positive_and_of_a_known_condition(catalog: Catalog) -> None:
    with pytest.raises(CatalogError, match="not a positive amount"):
        catalog.transact(lambda s: add_price(s, "4090", 0.0))
    with pytest.raises(CatalogError, match="condition 'broken'"):
        catalog.transact(lambda s: add_price(s, "4090", 10.0, condition="broken"))


MINE = CardSpec(
    name="Lab Card X",
    vendor="AMD",
    architecture="RDNA 3",
    segment="workstation",
    memory_bytes=32 * GIB,
    memory_type="GDDR6",
    bandwidth_gbs=576.0,
    fp32_tflops=45.0,
    tdp_w=260,
    source="our measurements",
    aliases=("labx",),
)


def test_user_cards_and_edits_survive_a_bundled_data_update(db_path: Path, bundled: BundledData) -> None:
    catalog = open_catalog(db_path, bundled=bundled)
    catalog.transact(lambda s: add_card(s, MINE))
    catalog.transact(lambda s: edit_card(s, "3090", tdp_w=280))
    catalog.transact(lambda s: add_price(s, "3090", 700.0, condition="used"))
    # A newer bundled release changes the 3090 and the 4090 and adds a card.
    newer = [
        replace(c, tdp_w=c.tdp_w + 1) if c.name in ("GeForce RTX 3090", "GeForce RTX 4090") else c
        for c in bundled.cards
    ]
    extra = replace(bundled.cards[0], name="Future Card", aliases=())
    update = BundledData((*newer, extra), bundled.prices, "newer digest")
    with open_catalog(db_path, bundled=update).read() as session:
        assert find_card(session, "labx").source == "our measurements"
        mine = find_card(session, "3090")
        assert (mine.tdp_w, mine.user_owned) == (280, True)  # the user's edit, not 350 + 1
        assert find_card(session, "4090").tdp_w == 450 + 1  # bundled rows do follow the update
        assert find_card(session, "Future Card").user_owned is False
        assert [p.amount for p in price_history(session, "3090") if p.user_owned] == [700.0]


def test_adding_a_card_twice_is_refused(catalog: Catalog) -> None:
    catalog.transact(lambda s: add_card(s, MINE))
    with pytest.raises(DuplicateCardError):
        catalog.transact(lambda s: add_card(s, replace(MINE, name="LABX", aliases=())))


def test_editing_notes_what_changed_in_the_source(catalog: Catalog) -> None:
    card = catalog.transact(lambda s: edit_card(s, "A6000", memory_bytes=48 * GIB, tdp_w=290))
    assert card.user_owned and card.tdp_w == 290
    assert card.source.startswith("edited by the user on") and "(memory_bytes, tdp_w)" in card.source
    with pytest.raises(CatalogError, match="not a card figure"):
        catalog.transact(lambda s: edit_card(s, "A6000", colour="green"))
