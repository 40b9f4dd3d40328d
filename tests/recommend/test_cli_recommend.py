"""`advisor recommend`: JSON entries per DESIGN/issue contract, one-line errors."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

KEYS = {
    "card",
    "count",
    "plan",
    "fits",
    "reason",
    "max_batch",
    "step_time_s",
    "throughput",
    "price_usd",
    "price_date",
    "perf_per_dollar",
    "perf_per_watt",
}


def run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "advisor", "recommend", *args, "--catalog", str(tmp_path / "c.sqlite3")],
        capture_output=True,
        text=True,
    )


def test_json_lists_every_card_that_passes_the_filters(tmp_path: Path) -> None:
    result = run(
        tmp_path,
        "zoo:resnet18",
        "--batch",
        "64",
        "--vendor",
        "NVIDIA",
        "--segment",
        "consumer",
        "--max-gpus",
        "2",
        "--json",
    )
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    entries = data["recommendations"]
    assert all(set(e) >= KEYS for e in entries)
    assert {e["count"] for e in entries} == {1, 2}
    cards = {e["card"] for e in entries}
    assert "GeForce RTX 4090" in cards and "GeForce GTX 1080 Ti" in cards
    assert not any("Radeon" in c or "Tesla" in c for c in cards)
    fitting = [e for e in entries if e["fits"]]
    assert fitting and entries[: len(fitting)] == fitting  # fitting configurations rank first
    # descending to 4 significant figures: within that a tie goes to fewer cards (money.ordered)
    ratios = [float(f"{e['perf_per_dollar']:.4g}") for e in fitting if e["perf_per_dollar"] is not None]
    assert ratios == sorted(ratios, reverse=True)


def test_table_shows_one_row_per_card(tmp_path: Path) -> None:
    result = run(tmp_path, "zoo:resnet18", "--batch", "64", "--top", "5")
    assert result.returncode == 0, result.stderr
    rows = [line for line in result.stdout.splitlines() if re.match(r"^\d+ {2,}\S", line)]
    assert len(rows) == 5
    assert "Best: " in result.stdout


@pytest.mark.parametrize(
    "args, message",
    [
        (["zoo:resnet18", "--budget", "-5"], "--budget: must be more than 0"),
        (["zoo:resnet18", "--objective", "vibes"], "argument --objective: invalid choice"),
        (["zoo:nope"], "unknown zoo model 'nope'"),
    ],
)
def test_bad_input(tmp_path: Path, args: list[str], message: str) -> None:
    result = run(tmp_path, *args)
    assert result.returncode == 2
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_llama_70b_at_4_bit_on_two_3090s_fits_only_when_split(tmp_path: Path) -> None:
    result = run(
        tmp_path,
        "zoo:llama-3.1-70b",
        "--mode",
        "generate",
        "--weights",
        "q4_k_m",
        "--precision",
        "bf16",
        "--batch",
        "1",
        "--vendor",
        "NVIDIA",
        "--max-gpus",
        "2",
        "--json",
    )
    assert result.returncode == 0, result.stderr
    entries = json.loads(result.stdout)["recommendations"]
    on_3090 = {(e["count"], e["plan"]): e for e in entries if e["card"] == "GeForce RTX 3090"}
    assert {plan for (count, plan), e in on_3090.items() if e["fits"]} == {"tensor_parallel", "layer_split"}
    assert all(e["decode_tokens_per_s"] > 0 and e["prefill_tokens_per_s"] > 0 for e in on_3090.values())
    assert "fits only because layers are split over 2 cards" in on_3090[(2, "layer_split")]["reason"]
