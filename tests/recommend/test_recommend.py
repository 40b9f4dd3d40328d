"""Recommendations on the real bundled catalog (a fresh SQLite file per test session)."""

import dataclasses
from dataclasses import replace
from pathlib import Path

import pytest

from advisor.catalog import Catalog, find_card, open_catalog
from advisor.core import zoo
from advisor.core.workload import Workload
from advisor.recommend.devices import usable_bytes
from advisor.recommend.prepare import RankingInput, prepare_graph
from advisor.recommend.ranking import RankingOptions, rank
from advisor.recommend.reasons import ReasonCode, reasons_text
from advisor.recommend.recommendation import Recommendation
from advisor.recommend.service import best_price

CLASSIC = ("GTX 980 Ti", "Titan X (Maxwell)", "Titan X (Pascal)", "GTX 1060 6GB", "GTX 1070", "GTX 1080", "GTX 1080 Ti")
GIB = 2**30


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Catalog:
    return open_catalog(Path(tmp_path_factory.mktemp("catalog")) / "catalog.sqlite3")


def classic_cards(catalog: Catalog):  # type: ignore[no-untyped-def]
    with catalog.read() as s:
        cards = [find_card(s, name) for name in CLASSIC]
        return cards, {c.name: best_price(s, c.name, "new") for c in cards}


def job_needing(gigabytes: float) -> RankingInput:
    """ResNet-50, fp32, SGD with momentum, at the batch whose requirement is closest to `gigabytes`."""
    base = Workload("train", 1, "fp32", "sgd_momentum")
    graph = zoo.build("resnet50")
    probe = prepare_graph(graph, base)
    batch = min(range(1, 200), key=lambda b: abs(probe.required.peak_bytes(b) - gigabytes * 1e9))
    return prepare_graph(graph, replace(base, batch=batch))


def test_classic_case_only_11_and_12_gb_cards_fit_and_the_1080_ti_wins(catalog: Catalog) -> None:
    cards, prices = classic_cards(catalog)
    job = job_needing(9.5)
    entries = rank(job, cards, prices, RankingOptions(counts=(1, 2)))
    single = {e.card: e for e in entries if e.count == 1}
    assert 9.0e9 < single["GeForce GTX 1080 Ti"].required_bytes < 10.0e9
    fitting = {name for name, e in single.items() if e.fits}
    assert fitting == {"GeForce GTX 1080 Ti", "GeForce GTX Titan X", "Titan X (Pascal)"}
    best = next(e for e in entries if e.fits)
    assert (best.card, best.count) == ("GeForce GTX 1080 Ti", 1)
    # ranked on the card's current new price (the newest shop's, not the 2017 launch MSRP of $699)
    assert best.price_usd == prices["GeForce GTX 1080 Ti"].amount
    # SLI does not pool memory: two 980 Ti still hold the whole model each
    sli = [e for e in entries if e.card == "GeForce GTX 980 Ti" and e.count == 2]
    assert sli and not any(e.fits for e in sli)
    dp = next(e for e in sli if e.plan == "data_parallel")
    assert "memory does not pool" in reasons_text(dp.reasons) and "needs" in reasons_text(dp.reasons)
    assert [r.code for r in dp.reasons] == [ReasonCode.DOES_NOT_FIT, ReasonCode.DATA_PARALLEL]


def test_reason_states_the_numbers(catalog: Catalog) -> None:
    cards, prices = classic_cards(catalog)
    entries = rank(job_needing(9.5), cards, prices, RankingOptions(counts=(1,)))
    gtx1070 = next(e for e in entries if e.card == "GeForce GTX 1070")
    assert not gtx1070.fits
    words = reasons_text(gtx1070.reasons)
    assert words.startswith("does not fit: needs ")
    assert "8.00 GiB card has" in words and "usable after the CUDA context" in words
    verdict = dict(gtx1070.reasons[0].values)  # the numbers, as data for the views to word
    assert gtx1070.reasons[0].code is ReasonCode.DOES_NOT_FIT and verdict["memory_bytes"] == 8 * GIB
    assert verdict["required_bytes"] == gtx1070.required_bytes and verdict["usable_bytes"] == gtx1070.usable_bytes
    assert gtx1070.usable_bytes == usable_bytes(8 * GIB)
    assert gtx1070.max_batch < job_needing(9.5).estimate.workload.batch


def test_zero3_makes_a_model_fit_that_one_card_cannot(catalog: Catalog) -> None:
    # gpt2-xl, 1,557,611,200 parameters, Adam in fp32: weights + gradients + 2 states = 16 B x 1.56e9 = 24.9 GB
    job = prepare_graph(zoo.build("gpt2-xl", 128), Workload("train", 1, "fp32", "adam"))
    with catalog.read() as s:
        card = find_card(s, "RTX 4090")
    entries = rank(job, [card], {}, RankingOptions())
    by_config = {(e.count, e.plan): e for e in entries}
    assert not by_config[(1, "single")].fits
    assert not by_config[(8, "data_parallel")].fits  # replicas: every card holds it all
    sharded = by_config[(8, "zero3")]
    assert sharded.fits and "fits only because model state is sharded" in reasons_text(sharded.reasons)
    assert sharded.reasons[-1].code is ReasonCode.ONLY_SHARDED
    assert sharded.required_bytes < by_config[(8, "zero1")].required_bytes


def test_objectives_and_budget(catalog: Catalog) -> None:
    cards, prices = classic_cards(catalog)
    job = job_needing(5.0)
    cheapest = next(e for e in rank(job, cards, prices, RankingOptions("cheapest", counts=(1,))) if e.fits)
    assert cheapest.card == "GeForce GTX 1060 6GB"  # $249 launch price, 6 GB is enough
    fastest = rank(job, cards, prices, RankingOptions("fastest", budget_usd=700, counts=(1,)))
    assert all(e.price_usd is None or e.price_usd <= 700 for e in fastest)
    assert fastest[0].card == "GeForce GTX 1080 Ti"  # the most FP32 throughput under $700
    speeds = [e.throughput for e in fastest if e.fits]
    assert speeds == sorted(speeds, reverse=True)


def test_more_cards_more_throughput_but_communication_costs(catalog: Catalog) -> None:
    with catalog.read() as s:
        card = find_card(s, "RTX 3090")
    entries = rank(job_needing(5.0), [card], {}, RankingOptions(counts=(1, 2)))
    one = next(e for e in entries if e.count == 1)
    two = next(e for e in entries if e.count == 2 and e.plan == "data_parallel")
    assert one.throughput < two.throughput < 2 * one.throughput
    assert two.step_time_s > one.step_time_s


def test_mixed_precision_is_not_slower_than_fp32_on_pascal(catalog: Catalog) -> None:
    """GP102 runs FP16 arithmetic at 1/64 of FP32 (catalog: 11.34 / 64 = 0.177 TFLOPS on the 1080 Ti), but
    cuBLAS computes half inputs with FP32 arithmetic: AMP's matmuls run at the FP32 rate, not 64x slower."""
    from advisor.recommend.devices import matmul_rate

    with catalog.read() as s:
        card = find_card(s, "GTX 1080 Ti")
    assert card.fp16_tflops is not None and card.fp16_tflops < card.fp32_tflops / 32
    assert matmul_rate(card, Workload("train", 32, "amp_fp16")) == card.fp32_tflops
    assert matmul_rate(card, Workload("train", 32, "fp32")) == card.fp32_tflops


def test_a_recommendation_is_built_by_keyword_only() -> None:
    # 17+ fields of similar types: a positional call could swap two numbers silently
    assert all(f.kw_only for f in dataclasses.fields(Recommendation))
    with pytest.raises(TypeError):
        Recommendation("RTX 4090", 1, "single")  # type: ignore[misc]


@pytest.mark.parametrize(
    ("name", "software", "context"),
    [
        ("Gaudi 3", "Gaudi", "the driver's context"),
        ("Instinct MI300X", "ROCm", "the HIP context"),
        ("Arc B580", "XPU", "the Level Zero context"),
    ],
)
def test_a_card_off_cuda_says_which_software_path_runs_it(
    catalog: Catalog, name: str, software: str, context: str
) -> None:
    with catalog.read() as s:
        card = find_card(s, name)
    entry = rank(job_needing(1.0), [card], {}, RankingOptions(counts=(1,)))[0]
    assert entry.software == software
    assert dict(entry.reasons[1].values) == {"software": software}
    words = reasons_text(entry.reasons)
    assert f"PyTorch runs this card through {software})" in words
    # the memory the card loses before the allocator starts is named for the runtime that takes it, not CUDA's
    assert f"usable after {context};" in words and "CUDA context" not in words


def test_an_nvidia_card_gets_no_software_note(catalog: Catalog) -> None:
    cards, _ = classic_cards(catalog)
    entry = rank(job_needing(1.0), cards[:1], {}, RankingOptions(counts=(1,)))[0]
    assert entry.software == "CUDA" and ReasonCode.NOT_CUDA not in [r.code for r in entry.reasons]


def test_a_unified_memory_machine_is_ranked_one_to_a_plan(catalog: Catalog) -> None:
    """A GB10 or Strix Halo GPU is part of its processor: one box holds one, so no '4 x Radeon 8060S tensor
    parallel'; a GH200 names its NVLink and is offered on 1, 2, 4 and 8 like any data-centre GPU."""
    with catalog.read() as s:
        cards = [find_card(s, name) for name in ("GB10 (DGX Spark)", "Radeon 8060S", "GH200")]
    entries = rank(job_needing(2), cards, {}, RankingOptions(counts=(1, 2, 4, 8)))
    counts = {card.name: sorted({e.count for e in entries if e.card == card.name}) for card in cards}
    assert counts == {"GB10 (DGX Spark)": [1], "Radeon 8060S (Ryzen AI Max+ 395)": [1], "GH200": [1, 2, 4, 8]}
