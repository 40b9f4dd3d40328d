"""The money ranking on the real catalog: the GPT-2 case of issue 13, rent, the software filter, the CLI keys."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from datetime import date
from pathlib import Path

import pytest

from advisor.catalog import Catalog, add_price, open_catalog
from advisor.core import zoo
from advisor.core.workload import Workload
from advisor.recommend.money import MoneyOptions
from advisor.recommend.prepare import RankingInput, prepare_graph
from advisor.recommend.ranking import RankingOptions
from advisor.recommend.reasons import ReasonCode, reason_text
from advisor.recommend.recommendation import Recommendation
from advisor.recommend.service import CardFilter, recommend


@pytest.fixture(scope="module")
def gpt2() -> RankingInput:
    # The case: GPT-2, sequence 1024, batch 32, fp32, AdamW (about 72 GiB per card).
    return prepare_graph(zoo.build("gpt2", 1024), Workload("train", 32, "fp32", "adamw"))


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Catalog]:
    opened = open_catalog(tmp_path_factory.mktemp("money") / "c.sqlite3")
    opened.transact(lambda s: add_price(s, "H200 SXM", 31_000.0, on=date(2026, 5, 1)))
    opened.transact(lambda s: add_price(s, "H100 SXM5", 2.99, on=date(2026, 5, 1), kind="rent_hour"))
    yield opened
    opened.close()


def ranking(catalog: Catalog, job: RankingInput, cards: CardFilter, options: RankingOptions) -> list[Recommendation]:
    with catalog.read() as session:
        return recommend(session, job, cards, options)


def test_gpt2_perf_per_dollar_ranks_a_priced_fitting_configuration_first(catalog: Catalog, gpt2: RankingInput) -> None:
    entries = ranking(catalog, gpt2, CardFilter(), RankingOptions("perf_per_dollar"))
    assert entries[0].fits and entries[0].price_usd is not None
    fitting = [e for e in entries if e.fits]
    priced = [e.price_usd is not None for e in fitting]
    assert priced == sorted(priced, reverse=True)  # no unpriced fitting row above a priced one
    assert any(e.card == "H200 SXM" and e.count == 1 and e.fits for e in fitting)


def test_rent_basis_costs_the_job_per_gpu_hour(catalog: Catalog, gpt2: RankingInput) -> None:
    money = MoneyOptions(basis="rent", tokens=1e9)
    entries = ranking(catalog, gpt2, CardFilter(price_basis="rent"), RankingOptions("cheapest", money=money))
    rented = [e for e in entries if e.card == "H100 SXM5" and e.price_usd is not None]
    assert rented and all(e.price_kind == "rent_hour" for e in rented)
    for e in rented:
        assert e.price_usd == pytest.approx(2.99 * e.count)  # per GPU-hour x cards
        assert e.job_hours == pytest.approx(1e9 / e.throughput / 3600)  # tokens / (tokens/s) / 3600
        assert e.job_cost_usd == pytest.approx(e.job_hours * 2.99 * e.count)  # type: ignore[operator]


def test_software_filter_keeps_one_path(catalog: Catalog, gpt2: RankingInput) -> None:
    entries = ranking(catalog, gpt2, CardFilter(software="ROCm"), RankingOptions(max_gpus=1))
    assert entries and {e.software for e in entries} == {"ROCm"}
    assert all("Instinct" in e.card or "Radeon" in e.card for e in entries)


def test_cli_json_carries_the_price_and_job_keys(tmp_path: Path) -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "advisor",
            "recommend",
            "zoo:resnet18",
            "--vendor",
            "NVIDIA",
            "--segment",
            "consumer",
            "--max-gpus",
            "1",
            "--samples",
            "1e6",
            "--kwh-usd",
            "0.2",
            "--software",
            "cuda",
            "--json",
            "--catalog",
            str(tmp_path / "c.sqlite3"),
        ],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    entries = json.loads(result.stdout)["recommendations"]
    keys = {
        "price_usd",
        "price_date",
        "price_condition",
        "price_kind",
        "price_source",
        "job_hours",
        "job_cost_usd",
        "break_even_hours",
        "software",
        "price_old",
    }
    assert all(keys <= set(e) for e in entries)
    priced = [e for e in entries if e["price_usd"] is not None]
    assert priced and all(e["job_hours"] == pytest.approx(1e6 / e["throughput"] / 3600) for e in priced)
    for e in priced:  # bought: price + power x hours x 0.2 USD/kWh
        assert e["job_cost_usd"] == pytest.approx(e["price_usd"] + e["power_w"] / 1000 * e["job_hours"] * 0.2)


def test_cli_rejects_a_bad_money_option_in_one_line(tmp_path: Path) -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "advisor",
            "recommend",
            "zoo:resnet18",
            "--samples",
            "-5",
            "--catalog",
            str(tmp_path / "c.sqlite3"),
        ],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 2 and result.stderr.strip().count("\n") == 0 and "--samples" in result.stderr


def test_a_small_llm_best_value_is_one_card_and_eight_consumer_cards_say_they_need_more_than_a_desktop(
    catalog: Catalog,
) -> None:
    job = prepare_graph(zoo.build("llama-3.2-1b", 512), Workload("infer", 1, "bf16"))
    entries = ranking(catalog, job, CardFilter(), RankingOptions("perf_per_dollar"))
    assert entries[0].fits and entries[0].count == 1  # it fits one card: no 8 x Arc A580 headline
    eights = [e for e in entries if e.count == 8 and e.card == "GeForce RTX 4090"]
    assert eights and all(any("more than one desktop holds" in reason_text(r) for r in e.reasons) for e in eights)
    fours = [e for e in entries if e.count == 4 and e.card == "GeForce RTX 4090"]
    assert fours and not any(r.code == ReasonCode.BEYOND_DESKTOP for e in fours for r in e.reasons)
