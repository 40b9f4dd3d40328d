"""`catalog import-prices`, `catalog prices NAME` and `set-price --kind rent_hour` through the command line."""

from __future__ import annotations

import json
from pathlib import Path

from tests.catalog.test_cli import Runner, run  # noqa: F401  (the fixture)

HEADER = "card,amount,currency,date,condition,kind,market,source\n"


def test_import_prices_adds_the_users_prices_and_summarises(run: Runner, tmp_path: Path) -> None:  # noqa: F811
    prices = tmp_path / "mine.csv"
    prices.write_text(
        HEADER + "rtx4090,1850,USD,2026-03-01,new,purchase,retail,https://shop.example/4090\n"
        "sxm4 a100 80gb,1.29,usd,2026-03-02,new,rent_hour,cloud_on_demand,a cloud\n"
        "3090,700,USD,2026-02-01,used,purchase,used_market,eBay sold listings\n",
        encoding="utf-8",
    )
    code, out, err = run("import-prices", str(prices))
    assert code == 0, err
    assert out.startswith(f"imported {prices}: 3 prices added for 3 cards (GeForce RTX 4090, A100 SXM4 80GB, ")
    assert out.rstrip().endswith("0 unchanged")
    code, out, _ = run("import-prices", str(prices))  # the same file again adds nothing
    assert code == 0 and "0 prices added" in out and "3 unchanged" in out
    code, out, _ = run("prices", "a100 80gb sxm4", "--json")
    history = json.loads(out)
    rent = [p for p in history["prices"] if p["kind"] == "rent_hour" and p["user_owned"]]
    assert history["card"] == "A100 SXM4 80GB"
    assert rent == [
        {
            **rent[0],
            "amount": 1.29,
            "currency": "USD",
            "market": "cloud_on_demand",
            "source": "a cloud",
            "user_owned": True,
            "date": "2026-03-02",
        }
    ]
    code, out, _ = run("show", "4090", "--json")
    mine = [p for p in json.loads(out)["prices"] if p["user_owned"]]
    assert [(p["amount"], p["source_url"]) for p in mine] == [(1850.0, "https://shop.example/4090")]
    assert {"amount", "currency", "date", "condition", "kind", "market", "source"} <= set(mine[0])


def test_bad_rows_are_listed_by_line_and_field_and_nothing_is_written(run: Runner, tmp_path: Path) -> None:  # noqa: F811
    prices = tmp_path / "bad.csv"
    prices.write_text(
        HEADER + "4090,1850,USD,2026-03-01,new,purchase,retail,shop\n"
        "4090,-3,USD,2026-03-01,new,purchase,retail,shop\n"
        "4090,10,US,2026-13-01,mint,purchase,retail,shop\n"
        "No Such Card,10,USD,2026-03-01,new,purchase,retail,shop\n",
        encoding="utf-8",
    )
    code, _, err = run("import-prices", str(prices))
    assert code == 2
    lines = err.splitlines()
    assert lines[0].endswith(f"{prices}: 2 bad rows, nothing imported:")  # fields are checked before cards
    assert lines[1] == "  line 3, amount: '-3' is not a positive amount"
    assert lines[2].startswith("  line 4, currency: 'US' is not a three-letter") and "date:" in lines[2]
    assert "condition: 'mint' is not one of new, used, refurbished" in lines[2]
    good = tmp_path / "unknown.csv"
    good.write_text(HEADER + "No Such Card,10,USD,2026-03-01,new,purchase,retail,shop\n", encoding="utf-8")
    code, _, err = run("import-prices", str(good))
    assert code == 2 and "line 2, card: 'No Such Card' is not in the catalog" in err
    _, out, _ = run("prices", "4090", "--json")
    assert not [p for p in json.loads(out)["prices"] if p["user_owned"]]


def test_many_bad_rows_give_a_capped_message(run: Runner, tmp_path: Path) -> None:  # noqa: F811
    prices = tmp_path / "many.csv"
    prices.write_text(HEADER + "4090,0,USD,2026-03-01,new,purchase,retail,shop\n" * 50, encoding="utf-8")
    code, _, err = run("import-prices", str(prices))
    lines = err.splitlines()
    assert code == 2 and len(lines) == 1 + 20 + 1  # the heading, 20 rows, the rest counted
    assert lines[-1] == "  ... and 30 more bad rows"  # 50 - 20 = 30


def test_set_price_records_a_rent_and_prices_shows_it(run: Runner) -> None:  # noqa: F811
    code, out, _ = run("set-price", "H100 SXM5", "2.99", "--kind", "rent_hour", "--date", "2026-04-01")
    assert code == 0 and out.strip() == "H100 SXM5: 2.99 USD per GPU-hour (new, cloud_on_demand) on 2026-04-01"
    code, out, _ = run("prices", "H100 SXM5")
    assert code == 0 and "2026-04-01" in out and "rent_hour" in out and "yours" in out


def test_set_price_refuses_a_day_not_yet_come_or_before_any_gpu(run: Runner) -> None:  # noqa: F811
    # --date 2099-01-01 was kept, shown as 'today' and ranked as the card's newest price
    for day, words in (("2099-01-01", "in the future"), ("1980-01-01", "before 1990-01-01")):
        code, _, err = run("set-price", "RTX 4090", "1500", "--date", day)
        assert code == 2 and words in err and err.count("\n") == 1, err
    code, out, _ = run("prices", "RTX 4090")
    assert code == 0 and "2099" not in out and "1980" not in out
