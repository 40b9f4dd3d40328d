"""Issue 27's minor defects, each as the walk found it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QSettings, Qt
from pytestqt.qtbot import QtBot
from tests_ui_support import open_window

from advisor.ui.main_window import QtMainWindow
from tests.recommend.test_money import rec

Ranked = Callable[[QtBot, QtMainWindow], None]


def test_the_catalog_starts_sorted_a_to_z(qtbot: QtBot, window: QtMainWindow) -> None:
    editor = window.catalog_editor
    qtbot.waitUntil(lambda: editor.proxy.rowCount() > 10, timeout=10000)
    names = [editor.proxy.index(r, 0).data() for r in range(editor.proxy.rowCount())]
    assert names == sorted(names, key=str.lower) or names == sorted(names)  # Z to A before
    assert editor.table.horizontalHeader().sortIndicatorOrder() == Qt.SortOrder.AscendingOrder


def test_file_new_leaves_no_chart_and_no_ranking(qtbot: QtBot, window: QtMainWindow, wait_ranked: Ranked) -> None:
    wait_ranked(qtbot, window)
    assert window.breakdown.category.canvas is not None and window.recommendations.model.entries
    window.new_network()
    qtbot.waitUntil(lambda: window.state.result is None, timeout=5000)
    qtbot.waitUntil(lambda: not window.recommendations.model.entries, timeout=5000)
    assert all(
        chart.canvas is None
        for chart in (
            window.breakdown.category,
            window.breakdown.layer_chart,
            window.breakdown.timeline,
            window.breakdown.batch_chart,
        )
    )
    assert "No estimate yet" in window.verdict.text()


def test_a_job_size_in_scientific_notation_is_that_many_samples(qtbot: QtBot, window: QtMainWindow) -> None:
    box = window.recommendations.money.samples
    box.lineEdit().selectAll()
    qtbot.keyClicks(box.lineEdit(), "1.2e8")
    box.interpretText()
    assert box.value() == 120_000_000  # 1.2 x 10^8, not 1
    assert window.recommendations.money.options("new").samples == 120_000_000


def test_one_card_is_not_up_to_1_cards(window: QtMainWindow) -> None:
    box = window.recommendations.max_gpus
    labels = [box.itemText(i) for i in range(box.count())]
    assert labels[0] == "one card" and "up to 1 cards" not in labels and labels[-1] == "up to 8 cards"


def test_value_for_money_reads_without_scientific_notation() -> None:
    from advisor.ui.recommend_model import per_thousand_usd

    # perf/$ 8.862 -> 8,862 per $1k -> 8,860 to three figures; 0.8 per $ -> 800,000 per $1k -> "800,000"
    assert per_thousand_usd(rec(perf_per_dollar=8.862)) == "8,860 samples/s per $1k"
    assert per_thousand_usd(rec(perf_per_dollar=800.0)) == "800,000 samples/s per $1k"
    assert per_thousand_usd(rec(perf_per_dollar=0.0554)) == "55.4 samples/s per $1k"


def test_price_basis_and_job_size_survive_a_language_switch_and_a_restart(
    qtbot: QtBot, window: QtMainWindow, settings: QSettings, catalog_file: Path
) -> None:
    money = window.recommendations.money
    money.basis.setCurrentIndex(money.basis.findData("rent"))
    money.samples.setValue(1e8)
    window.switch_language("zh_CN")
    window.switch_language("en")
    assert window.recommendations.money.values() == {"basis": "rent", "software": None, "samples": 1e8}
    window.close()
    again = open_window(qtbot, settings, catalog_file)
    try:
        assert again.recommendations.money.values() == {"basis": "rent", "software": None, "samples": 1e8}
    finally:
        again.runner.cancel()
        again.runner.wait()
        again.catalog.close()


def test_lora_is_not_offered_for_a_cnn(qtbot: QtBot, window: QtMainWindow) -> None:
    box = window.workload.llm.finetune
    items = box.model()

    def offered(kind: str) -> bool:
        return bool(items.item(box.findData(kind)).isEnabled())  # type: ignore[attr-defined]

    window.model_panel.load_zoo("resnet18")
    qtbot.waitUntil(lambda: not offered("lora"), timeout=5000)
    assert not offered("qlora") and offered("full") and "has none" in items.item(box.findData("lora")).toolTip()  # type: ignore[attr-defined]
    window.model_panel.load_zoo("llama-3.2-1b")
    qtbot.waitUntil(lambda: offered("lora") and offered("qlora"), timeout=5000)


def test_the_verdict_says_qlora_and_checkpointing(qtbot: QtBot, window: QtMainWindow) -> None:
    window.model_panel.load_zoo("llama-3.2-1b")
    window.state.set_choice(mode="train", precision="amp_bf16", batch=2, finetune="qlora", lora_rank=8)
    qtbot.waitUntil(
        lambda: window.state.result is not None and window.state.result.estimate.workload.finetune == "qlora",
        timeout=10000,
    )
    # QLoRA checkpoints unless told not to (PEFT's recipe, as the command line's default)
    assert "(training, QLoRA rank 8, gradient checkpointing, batch 2," in window.verdict.text()
    assert "</b> on a single card (" in window.verdict.text()  # not "per card": a split plan needs less per card
    window.state.set_choice(checkpointing=False)
    unticked = "(training, QLoRA rank 8, no checkpointing, batch 2,"
    qtbot.waitUntil(lambda: unticked in window.verdict.text(), timeout=10000)
    window.state.set_choice(checkpointing=True, finetune="full")
    qtbot.waitUntil(lambda: "(training, gradient checkpointing, batch 2," in window.verdict.text(), timeout=10000)


def test_the_job_size_reads_with_group_separators(window: QtMainWindow) -> None:
    box = window.recommendations.money.samples
    box.setValue(1e8)
    assert box.text().startswith("100,000,000")


def test_a_pool_stride_of_zero_reads_as_the_kernel(qtbot: QtBot, window: QtMainWindow) -> None:
    window.new_network()
    builder = window.model_panel.builder
    builder.kind.setCurrentText("input")
    builder.add()  # 3x32x32, the builder's starting shape
    builder.kind.setCurrentText("maxpool")
    builder.add()
    stride = builder.form.editors["stride"]
    assert stride.text() == "" and stride.placeholderText() == "same as the kernel"  # it showed "0"
    assert window.state.draft.result.shapes[1] == (3, 16, 16)  # kernel 2, stride = kernel: 32 / 2 = 16
    stride.setText("1")
    stride.textEdited.emit("1")
    assert window.state.draft.result.shapes[1] == (3, 31, 31)  # (32 - 2) / 1 + 1 = 31
    stride.setText("")
    stride.textEdited.emit("")  # emptied again: the default, no error
    assert window.state.draft.result.errors == {} and window.state.draft.result.shapes[1] == (3, 16, 16)


def test_the_verdict_says_one_card_once(qtbot: QtBot, window: QtMainWindow, wait_ranked: Ranked) -> None:
    wait_ranked(qtbot, window)  # resnet50 at batch 32 fits one card: the best value is a single card
    # the verdict redraws from the ranking's result a moment later (a queued signal; slow under load)
    qtbot.waitUntil(lambda: "best value: <b>" in window.verdict.text(), timeout=15000)
    text = window.verdict.text()
    assert "1 × " not in text and "1 x " not in text and "one card" not in text


def test_chinese_says_ci_yuan_for_token_everywhere() -> None:
    from advisor.i18n import zh_CN, zh_CN_app, zh_CN_fields, zh_CN_llm

    texts = [t for m in (zh_CN, zh_CN_app, zh_CN_fields, zh_CN_llm) for t in m.MESSAGES.values()]
    mixed = [
        text
        for text in texts
        if "token" in text.replace("{tokens}", "").replace("{per_token}", "")
        and any("\u4e00" <= ch <= "\u9fff" for ch in text)
    ]
    assert mixed == []  # "token" and "词元" were mixed in the Chinese text


def test_a_rents_value_is_per_dollar_of_hourly_rent() -> None:
    from dataclasses import replace

    from advisor.ui.recommend_model import per_thousand_usd

    rent = rec(throughput=1372.0, price_usd=0.0556, perf_per_dollar=1372.0 / 0.0556, price_kind="rent_hour")
    # 1,372 samples/s for $0.0556 an hour: 24,676 samples/s per $1/h -> 24,700 (it read 24,700,000 "per $1k")
    assert per_thousand_usd(rent) == "24,700 samples/s per $1/h of rent"
    assert per_thousand_usd(replace(rent, price_kind="purchase")) == "24,700,000 samples/s per $1k"


def test_the_headline_says_how_many_parameters_train_with_qlora(qtbot: QtBot, window: QtMainWindow) -> None:
    window.model_panel.load_zoo("llama-3.2-1b")
    window.state.set_choice(mode="train", batch=1, finetune="qlora", lora_rank=8)
    qtbot.waitUntil(
        lambda: window.state.result is not None and window.state.result.estimate.workload.finetune == "qlora",
        timeout=10000,
    )
    # 16 layers x 8 x 44,032 = 5,636,096 adapter parameters (tests/appstate/test_model.py)
    assert "(5.64M train)" in window.breakdown.summary.values["Parameters"].text()


def test_the_software_path_is_said_once_in_the_explanation() -> None:
    from advisor.recommend.reasons import ReasonCode, reason
    from advisor.ui.recommend_model import explain

    xpu = rec(card="Arc A580", software="XPU", reasons=(reason(ReasonCode.NOT_CUDA, software="XPU"),))
    assert explain(xpu, 32).count("PyTorch runs this card through XPU") == 1  # it was said twice


def test_the_verdict_says_when_the_best_value_rests_on_an_old_price() -> None:
    from dataclasses import replace

    from advisor.appstate import RankingRequest, RankingResult, ShownEstimate
    from advisor.core import zoo
    from advisor.core.workload import Workload
    from advisor.recommend.prepare import prepare_graph
    from advisor.recommend.ranking import RankingOptions
    from advisor.recommend.service import CardFilter
    from advisor.ui.verdict import verdict_text

    graph = zoo.build("alexnet")
    job = prepare_graph(graph, Workload(batch=4))
    card = rec(card="Arc A580", price_usd=179.0, perf_per_dollar=100 / 179, price_old=True)
    ranking = RankingResult(RankingRequest(CardFilter(), RankingOptions()), job, (card,))
    assert "price over a year old" in verdict_text(ShownEstimate(job, graph), ranking)
    fresh = replace(ranking, entries=(replace(card, price_old=False),))
    assert "price over a year old" not in verdict_text(ShownEstimate(job, graph), fresh)


def test_a_long_price_source_is_cut_in_the_explanation() -> None:
    from advisor.ui.money_text import SOURCE_CHARS, short_source

    long = "SiliconValueIndex data/processed/prices_history.csv (commit 2bc8877): " * 6  # 426 characters
    assert len(short_source(long)) == SOURCE_CHARS and short_source(long).endswith("…")
    assert short_source("Lambda, 2026-05-01") == "Lambda, 2026-05-01"


def test_chinese_names_the_links_in_chinese(tmp_path: Path) -> None:
    import re

    from advisor.catalog import list_cards, open_catalog
    from advisor.recommend.devices import link
    from advisor.recommend.reasons import ReasonCode, reason, reason_text
    from advisor.ui.i18n import set_language, tr

    catalog = open_catalog(tmp_path / "c.sqlite3")
    try:
        with catalog.read() as session:
            names = {link(card)[1] for card in list_cards(session)}
    finally:
        catalog.close()
    worded = sorted(n for n in names if re.search(r"\b(bridges?|links?|carries)\b", n))
    assert "NVLink 3 bridge" in worded
    set_language("zh_CN")
    try:
        assert [n for n in worded if tr(n) == n] == []  # every such name has a Chinese one
        assert "NVLink 3 桥接器" in reason_text(
            reason(ReasonCode.ZERO, stage="ZERO2", count=2, link="NVLink 3 bridge"), tr
        )
    finally:
        set_language("en")


def test_card_counts_read_with_a_times_sign_everywhere() -> None:
    from advisor.appstate import RankingRequest, RankingResult, ShownEstimate
    from advisor.core import zoo
    from advisor.core.workload import Workload
    from advisor.recommend.prepare import prepare_graph
    from advisor.recommend.ranking import RankingOptions
    from advisor.recommend.service import CardFilter
    from advisor.ui.recommend_model import explain
    from advisor.ui.verdict import verdict_text

    graph = zoo.build("alexnet")
    job = prepare_graph(graph, Workload(batch=4))
    two = rec(card="RTX 3090", count=2, plan="data_parallel")
    text = verdict_text(
        ShownEstimate(job, graph), RankingResult(RankingRequest(CardFilter(), RankingOptions()), job, (two,))
    )
    assert "2 × RTX 3090, data parallel" in text and "2 x " not in text  # "8 x" here, "8 ×" in the table
    assert explain(two, 4).startswith("<b>2 × RTX 3090, data parallel: Fits</b>")


def test_the_verdicts_fastest_is_recommend_fastest_over_every_configuration() -> None:
    """The verdict took the fastest of each card's best-value row: '8 × Arc Pro B60, tensor parallel (15
    tokens/s)' for Llama 70B where `recommend --objective fastest` puts 8 × MI300X data parallel (119) first."""
    from advisor.appstate import RankingRequest, RankingResult, ShownEstimate
    from advisor.core import zoo
    from advisor.core.workload import Workload
    from advisor.recommend.objectives import Objective, ordered
    from advisor.recommend.prepare import prepare_graph
    from advisor.recommend.ranking import RankingOptions
    from advisor.recommend.service import CardFilter
    from advisor.ui.verdict import verdict_text

    graph = zoo.build("alexnet")
    job = prepare_graph(graph, Workload(batch=4))
    one_b60 = rec(card="Arc Pro B60", throughput=15.0, perf_per_dollar=15 / 499)
    eight_b60 = rec(card="Arc Pro B60", count=8, plan="tensor_parallel", throughput=15.0, perf_per_dollar=15 / 3992)
    eight_mi300x = rec(card="Instinct MI300X", count=8, plan="data_parallel", throughput=119.0, perf_per_dollar=1e-3)
    one_mi300x = rec(card="Instinct MI300X", throughput=15.0, perf_per_dollar=15 / 15000)  # its best-value row
    entries = (one_b60, eight_b60, one_mi300x, eight_mi300x)  # the perf-per-dollar order
    ranking = RankingResult(RankingRequest(CardFilter(), RankingOptions()), job, entries)
    text = verdict_text(ShownEstimate(job, graph), ranking)
    assert ordered(list(entries), Objective.FASTEST)[0] is eight_mi300x
    assert "fastest: <b>8 × Instinct MI300X, data parallel</b> (119 samples/s)" in text, text
