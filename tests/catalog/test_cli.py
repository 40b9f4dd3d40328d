"""`advisor catalog ...` through the real command-line frame (advisor.cli.main)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from advisor import cli

Run = tuple[int, str, str]
Runner = Callable[..., Run]


@pytest.fixture
def run(capsys: pytest.CaptureFixture[str], db_path: Path) -> Runner:
    def invoke(*argv: str) -> Run:
        try:
            code = cli.main(["catalog", "--catalog", str(db_path), *argv])
        except SystemExit as exit_:  # argparse errors
            code = int(exit_.code or 0)
        out, err = capsys.readouterr()
        return code, out, err

    return invoke


def test_list_json_has_unit_keys_and_canonical_names(run: Runner) -> None:
    code, out, _ = run("list", "--vendor", "NVIDIA", "--min-memory", "80", "--segment", "datacenter", "--json")
    cards = json.loads(out)["cards"]
    assert code == 0 and cards
    keys = {"name", "memory_bytes", "bandwidth_gbs", "fp32_tflops", "fp16_tflops", "msrp_usd", "tdp_w"}
    assert keys <= set(cards[0])
    assert all(c["memory_bytes"] >= 80 * 2**30 for c in cards)
    assert "H100 SXM5" in [c["name"] for c in cards]


def test_list_table_is_readable(run: Runner) -> None:
    code, out, _ = run("list", "--vendor", "intel")
    lines = out.splitlines()
    assert code == 0 and lines[0].split()[:3] == ["name", "vendor", "segment"]
    assert len(lines) == 2 + 15  # header, rule, the 8 Arc cards, Arc Pro B50 / B60 / B65 / B70, Gaudi 2, Gaudi 3 x 2


def test_show_accepts_any_alias(run: Runner) -> None:
    code, out, _ = run("show", "1080 ti", "--json")
    card = json.loads(out)
    assert code == 0 and card["name"] == "GeForce GTX 1080 Ti" and card["msrp_usd"] == 699
    assert card["prices"][0] == {**card["prices"][0], "amount": 699.0, "date": "2017-03-10"}
    code, out, _ = run("show", "Titan Xp")
    assert code == 0 and "12 GiB (12,884,901,888 bytes)" in out and "GDDR5X" in out  # 12 x 2**30
    assert re.search(r"^multi-card link +sli$", out, re.M) and re.search(r"^link detail +SLI HB bridge$", out, re.M)


def test_unknown_card_exits_2_with_one_line(run: Runner) -> None:
    code, out, err = run("show", "RTX 4099")
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "unknown card 'RTX 4099'" in err and "RTX 4090" in err


def test_add_set_price_and_show(run: Runner) -> None:
    code, _, _ = run(
        "add",
        "--name",
        "Lab GPU",
        "--vendor",
        "nvidia",
        "--architecture",
        "Hopper",
        "--segment",
        "datacenter",
        "--memory-gb",
        "96",
        "--memory-type",
        "HBM3",
        "--bandwidth-gbs",
        "4000",
        "--fp32-tflops",
        "60",
        "--tdp-w",
        "700",
    )
    assert code == 0
    code, out, _ = run("set-price", "lab gpu", "25000", "--date", "2024-06-01", "--used", "--json")
    assert code == 0 and json.loads(out)["condition"] == "used"
    code, out, _ = run("show", "Lab GPU", "--json")
    card = json.loads(out)
    assert card["memory_bytes"] == 96 * 2**30 and card["user_owned"] is True
    assert [(p["amount"], p["date"]) for p in card["prices"]] == [(25000.0, "2024-06-01")]


def test_add_with_a_bad_figure_exits_2(run: Runner) -> None:
    code, _, err = run(
        "add",
        "--name",
        "X",
        "--vendor",
        "nvidia",
        "--architecture",
        "A",
        "--segment",
        "consumer",
        "--memory-gb",
        "-4",
        "--memory-type",
        "G",
        "--bandwidth-gbs",
        "1",
        "--fp32-tflops",
        "1",
        "--tdp-w",
        "1",
    )
    assert code == 2 and "memory_gb" in err


def test_edit_marks_the_card_as_the_users(run: Runner) -> None:
    assert run("edit", "4090", "--tdp-w", "400", "--memory-gb", "48")[0] == 0
    card = json.loads(run("show", "4090", "--json")[1])
    assert (card["tdp_w"], card["memory_bytes"], card["user_owned"]) == (400, 48 * 2**30, True)


def test_export_then_import_round_trips(run: Runner, tmp_path: Path) -> None:
    exported = tmp_path / "all.csv"
    assert run("export", str(exported))[0] == 0
    code, out, _ = run("import", str(exported))
    cards = len(exported.read_text().splitlines()) - 1  # every bundled card, header excluded
    assert code == 0 and f"0 added, 0 changed, {cards} unchanged" in out and cards >= 150
    edited = exported.read_text().replace("GeForce RTX 4090,", "GeForce RTX 4090 (mine),", 1)
    (tmp_path / "one.csv").write_text(edited)
    code, _, err = run("import", str(tmp_path / "one.csv"))  # the copy still claims the 4090's aliases
    assert code == 2 and "already belongs to 'GeForce RTX 4090'" in err
    lines = edited.splitlines(keepends=True)
    mine = next(i for i, line in enumerate(lines) if line.startswith("GeForce RTX 4090 (mine),"))
    name, _aliases, rest = lines[mine].split(",", 2)
    lines[mine] = f"{name},,{rest}"  # without them it is a card of its own
    (tmp_path / "one.csv").write_text("".join(lines))
    code, out, _ = run("import", str(tmp_path / "one.csv"))
    assert code == 0 and "1 added" in out


def test_a_bad_import_reports_every_line_and_imports_nothing(run: Runner, tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text(
        "name,vendor,architecture,segment,memory_gb,memory_type,bandwidth_gbs,fp32_tflops,tdp_w,"
        "source\n"
        "Fine,NVIDIA,X,consumer,8,GDDR6,256,10,150,me\n"
        "Broken,NVIDIA,X,consumer,8,GDDR6,fast,10,150,me\n"
        "Also Broken,NVIDIA,X,tablet,8,GDDR6,256,10,150,me\n"
    )
    code, _, err = run("import", str(bad))
    assert code == 2 and "2 bad rows, nothing imported" in err
    assert "line 3: bandwidth_gbs" in err and "line 4: segment" in err
    assert run("show", "Fine")[0] == 2  # the good row was not imported either


def test_catalog_option_after_the_action_and_env_var(
    run: Runner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    other = tmp_path / "other.sqlite3"
    assert cli.main(["catalog", "list", "--catalog", str(other), "--json"]) == 0
    assert other.exists()
    env = tmp_path / "from-env.sqlite3"
    monkeypatch.setenv("ADVISOR_CATALOG", str(env))
    assert cli.main(["catalog", "show", "4090", "--json"]) == 0
    assert env.exists()
    capsys.readouterr()


def test_damage_message_goes_to_stderr(run: Runner, db_path: Path) -> None:
    with open(db_path, "r+b") as file:  # a damaged catalog of ours (its header, with the marker, is intact)
        file.truncate(db_path.stat().st_size // 2)
    code, out, err = run("list", "--json")
    assert code == 0 and json.loads(out)["cards"]
    assert "was damaged" in err and "kept it as" in err
