"""Bounded, checked catalog inputs and outputs (issue 29, items 3 and 5): no device or pipe read, no huge CSV
cell as a traceback, no absurd price, no formula cell in an export, no silent permission change on write."""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest

from advisor import cli
from advisor.catalog import CatalogError, list_cards, open_catalog
from advisor.catalog.bundled import BundledData
from advisor.catalog.csvio import read_cards, read_cards_file
from advisor.catalog.errors import CatalogDataError, PriceImportError
from advisor.catalog.exchange import bundled_rates, price_problems
from advisor.catalog.price_import import read_prices, read_prices_file
from advisor.catalog.repository import spec_of

HEADER = "card,amount,currency,date,condition,source\n"
CARD_HEADER = "name,vendor,architecture,segment,memory_gb,memory_type,bandwidth_gbs,fp32_tflops,tdp_w,source\n"
FIELD_LIMIT = 128 * 1024  # the csv module's default field_size_limit, 131072 characters


def _finishes(work: Any, seconds: float = 10.0) -> BaseException | None:
    """Run `work` in a thread; -> what it raised. A read that blocks (a pipe with no writer) fails the test
    after `seconds` instead of hanging it."""
    raised: list[BaseException] = []

    def run() -> None:
        try:
            work()
        except BaseException as error:  # handed to the test to check
            raised.append(error)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "the read did not finish"
    return raised[0] if raised else None


def test_import_prices_refuses_a_device_at_once() -> None:
    error = _finishes(lambda: read_prices_file(Path("/dev/zero")))  # it used to reach 17 GB in 20 s
    assert isinstance(error, CatalogError) and "not a regular file" in str(error)


def test_import_prices_refuses_a_pipe_with_no_writer(tmp_path: Path) -> None:
    pipe = tmp_path / "prices.csv"
    os.mkfifo(pipe)
    error = _finishes(lambda: read_prices_file(pipe))  # it used to wait forever
    assert isinstance(error, CatalogError) and "not a regular file" in str(error)


@pytest.mark.parametrize("read", [read_prices_file, read_cards_file], ids=["import-prices", "import"])
def test_a_folder_is_one_line_not_a_traceback(tmp_path: Path, read: Any) -> None:
    # `advisor catalog import FOLDER` printed IsADirectoryError's traceback: fdopen refuses a folder's handle
    error = _finishes(lambda: read(tmp_path))
    assert isinstance(error, CatalogError) and "not a regular file" in str(error)


def test_a_file_over_the_size_cap_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("advisor.catalog.price_import.MAX_CSV_BYTES", 1000)
    big = tmp_path / "prices.csv"
    big.write_text(HEADER + "4090,1000,USD,2024-01-01,new,shop\n" * 100)  # 36 + 34 x 100 = 3436 bytes > 1000
    with pytest.raises(CatalogError, match=r"larger than the 0\.000953674 MiB") as caught:  # 1000 / 2**20
        read_prices_file(big)
    assert "\n" not in str(caught.value)


def test_a_csv_cell_over_128_kib_is_a_bad_line_not_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prices = tmp_path / "prices.csv"
    prices.write_text(HEADER + "4090,1000,USD,2024-01-01,new," + "x" * (FIELD_LIMIT + 1) + "\n")
    cards = tmp_path / "cards.csv"
    cards.write_text(CARD_HEADER + "X" * (FIELD_LIMIT + 1) + ",NVIDIA,X,consumer,8,GDDR6,256,10,150,me\n")
    for action, path in (("import-prices", prices), ("import", cards)):
        code = cli.main(["catalog", "--catalog", str(tmp_path / "c.sqlite3"), action, str(path)])
        err = capsys.readouterr().err
        assert code == 2 and "line 2: field larger than field limit" in err and "Traceback" not in err, err


def _problems(rows: str) -> list[str]:
    with pytest.raises(PriceImportError) as caught:
        read_prices(HEADER + rows, "prices.csv")
    return list(caught.value.problems)


def test_import_prices_rejects_absurd_and_unknown_values_row_by_row() -> None:
    problems = _problems(
        "4090,1000,USD,2024-01-01,new,shop\n"  # line 2: fine
        "4090,1e308,USD,2024-01-01,new,shop\n"  # 3: far above any card
        "4090,1e-7,USD,2024-01-01,new,shop\n"  # 4: a ten-millionth of a cent
        "4090,inf,USD,2024-01-01,new,shop\n"  # 5
        "4090,nan,USD,2024-01-01,new,shop\n"  # 6
        "4090,1000,USD,0001-01-01,new,shop\n"  # 7
        "4090,1000,USD,2999-01-01,new,shop\n"  # 8
        "4090,1000,XYZ,2024-01-01,new,shop\n"
    )  # 9: no exchange rate
    assert [p.split(",")[0] for p in problems] == [f"line {n}" for n in range(3, 10)]
    assert "amount: 1e+308 USD" in problems[0] and "outside 1 to 1e+07 USD" in problems[0]
    assert "amount: 1e-07 USD" in problems[1]
    assert all("amount" in p for p in problems[2:4])
    assert "date: 0001-01-01 is before 1990-01-01" in problems[4] and "in the future" in problems[5]
    assert "currency: 'XYZ' is not one the exchange-rate table knows" in problems[6]


def test_a_price_in_another_currency_is_bounded_in_usd() -> None:
    # 1e9 JPY at 1.1761 / 184.37 USD per yen (the bundled ECB rates) = 6.38e6 USD: within 1e7, accepted;
    # 1e10 JPY = 6.38e7 USD is not.
    assert len(read_prices(HEADER + "4090,1e9,JPY,2024-01-01,new,shop\n", "prices.csv")) == 1
    assert "(= 6.38e+07 USD)" in _problems("4090,1e10,JPY,2024-01-01,new,shop\n")[0]


def test_set_price_refuses_an_absurd_amount(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.main(["catalog", "--catalog", str(tmp_path / "c.sqlite3"), "set-price", "4090", "1e-7"])
    assert code == 2 and "outside 1 to 1e+07 USD" in capsys.readouterr().err


def _strict(text: str) -> Any:
    def refuse(constant: str) -> None:
        raise AssertionError(f"not JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


def test_recommend_json_stays_json_with_an_absurd_price_in_an_old_catalog(
    db_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with sqlite3.connect(db_path) as conn:  # as a catalog that took 1e308 before the import checked it
        conn.execute(
            "UPDATE prices SET amount = 1e308 WHERE card_id = (SELECT id FROM cards WHERE name = 'GeForce RTX 4090')"
        )
    code = cli.main(
        [
            "recommend",
            "zoo:resnet18",
            "--vendor",
            "NVIDIA",
            "--segment",
            "consumer",
            "--max-gpus",
            "2",
            "--samples",
            "1e6",
            "--json",
            "--catalog",
            str(db_path),
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    entries = _strict(out)["recommendations"]  # 2 x 1e308 overflowed to Infinity, which json.dumps printed
    assert any(e["card"] == "GeForce RTX 4090" for e in entries)


def _specs(path: Path, bundled: BundledData) -> set[Any]:
    catalog = open_catalog(path, bundled=bundled)
    with catalog.read() as session:
        found = {spec_of(card) for card in list_cards(session)}
    catalog.close()
    return found


def test_an_export_escapes_formula_cells_and_reads_back_unchanged(
    db_path: Path, tmp_path: Path, bundled: BundledData
) -> None:
    hostile = ["=cmd|' /C calc'!A0", "+1+1", "-2+3", "@SUM(1)", "'quoted", "'=already quoted"]
    # In a file, a quote before a lead character is the escape (as a spreadsheet reads it): ''= is '=.
    written = [*hostile[:-1], "''=already quoted"]
    rows = "".join(f'"{name}",NVIDIA,X,consumer,8,GDDR6,256,10,150,"-me"\n' for name in written)
    source = tmp_path / "in.csv"
    source.write_text(CARD_HEADER + rows)
    assert cli.main(["catalog", "--catalog", str(db_path), "import", str(source)]) == 0
    out = tmp_path / "out.csv"
    assert cli.main(["catalog", "--catalog", str(db_path), "export", str(out)]) == 0
    text = out.read_text()
    cells = [cell for line in text.splitlines() for cell in line.split(",")]
    assert not [c for c in cells if c.lstrip('"').startswith(("=", "+", "-", "@", "\t", "\r"))]  # OWASP's list
    assert "'=cmd|' /C calc'!A0" in text and "''=already quoted" in text  # a leading quote gets one more
    copy = tmp_path / "copy.sqlite3"
    assert cli.main(["catalog", "--catalog", str(copy), "import", str(out)]) == 0
    exported = _specs(db_path, bundled)
    assert set(hostile) <= {spec.name for spec in exported}
    assert _specs(copy, bundled) == exported  # every figure and name of every card reads back unchanged


def test_an_overwritten_export_keeps_its_permissions(db_path: Path, tmp_path: Path) -> None:
    private = tmp_path / "cards.csv"
    private.write_text("old")
    private.chmod(0o600)
    assert cli.main(["catalog", "--catalog", str(db_path), "export", str(private)]) == 0
    assert private.stat().st_mode & 0o777 == 0o600 and private.read_text() != "old"  # it used to become 0644


def test_an_export_through_a_link_writes_its_target_in_place_and_says_so(
    db_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "real.csv"
    target.write_text("old")
    target.chmod(0o640)
    link = tmp_path / "link.csv"
    link.symlink_to(target)
    assert cli.main(["catalog", "--catalog", str(db_path), "export", str(link)]) == 0
    assert link.is_symlink() and target.read_text().startswith("name,")
    assert target.stat().st_mode & 0o777 == 0o640
    assert str(target) in capsys.readouterr().err  # the message names the file really written


def test_import_refuses_a_device_at_once() -> None:
    error = _finishes(lambda: read_cards_file(Path("/dev/zero")))
    assert isinstance(error, CatalogError) and "not a regular file" in str(error)
    with pytest.raises(CatalogDataError, match="line 2: field larger"):
        read_cards(CARD_HEADER + "y" * (FIELD_LIMIT + 1) + "\n", "cards.csv")


def test_every_bundled_price_passes_the_import_checks(bundled: BundledData) -> None:
    rates = bundled_rates()
    wrong = {
        (p.card_name, p.amount, p.currency): price_problems(p.amount, p.currency, p.kind, rates) for p in bundled.prices
    }
    assert bundled.prices and {key: why for key, why in wrong.items() if why} == {}
