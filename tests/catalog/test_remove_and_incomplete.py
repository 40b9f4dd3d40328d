"""Cards without the figures ranking divides by are refused when added or edited, an incomplete card
already stored ranks as "incomplete" instead of breaking `advisor recommend`, and the user's own cards can
be removed (`advisor catalog remove NAME`); bundled ones are refused with one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from advisor import cli
from advisor.catalog import CardSpec, CatalogError, add_card, edit_card, find_card, open_catalog
from advisor.catalog.orm import USER
from advisor.catalog.repository import insert_card

LAB = CardSpec("Lab GPU", "NVIDIA", "Hopper", "datacenter", 96 * 2**30, "HBM3", 4000.0, 60.0, 700, "test")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = cli.main(list(argv))
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def test_a_card_without_rates_is_refused_and_an_edit_to_zero_rolls_back(db_path: Path) -> None:
    catalog = open_catalog(db_path)
    try:
        empty = CardSpec("", "NVIDIA", "x", "consumer", 0, "GDDR6", 0.0, 0.0, 1, "test")
        with pytest.raises(CatalogError, match="name, memory_bytes, bandwidth_gbs, fp32_tflops"):
            catalog.transact(lambda s: add_card(s, empty))
        catalog.transact(lambda s: add_card(s, LAB))
        with pytest.raises(CatalogError, match="fp32_tflops"):
            catalog.transact(lambda s: edit_card(s, "Lab GPU", fp32_tflops=0.0))
        with catalog.read() as session:
            assert find_card(session, "Lab GPU").fp32_tflops == 60.0  # the edit was rolled back
    finally:
        catalog.close()


def test_remove_the_users_card_and_refuse_a_bundled_one(db_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    catalog = open_catalog(db_path)
    catalog.transact(lambda s: add_card(s, LAB))
    catalog.close()
    code, out, _ = run(capsys, "catalog", "--catalog", str(db_path), "remove", "lab gpu", "--json")
    assert code == 0 and json.loads(out) == {"removed": "Lab GPU"}
    code, _, err = run(capsys, "catalog", "--catalog", str(db_path), "show", "Lab GPU")
    assert code == 2
    code, _, err = run(capsys, "catalog", "--catalog", str(db_path), "remove", "H100 SXM5")
    assert code == 2 and "bundled" in err and len(err.strip().splitlines()) == 1


def test_recommend_ranks_an_incomplete_card_last(db_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    catalog = open_catalog(db_path)
    empty = CardSpec("Empty", "NVIDIA", "unknown", "consumer", 0, "", 0.0, 0.0, 1, "entered by the user")
    with catalog.write() as session:  # as an older version stored an empty card from the app
        insert_card(session, empty, USER)
    catalog.close()
    code, out, err = run(capsys, "recommend", "zoo:resnet18", "--catalog", str(db_path), "--json")
    assert code == 0, err
    text = out + err
    assert "Traceback" not in text and "incomplete" in text
