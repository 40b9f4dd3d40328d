"""The Recommendations tab under vLLM in bf16: a card vLLM cannot run (Pascal below its compute capability 7.0,
Turing below the 8.0 its bf16 needs) is no fitting configuration, its explanation says why in the user's
language, and the verdict's choices are cards vLLM runs (recommend/runtime_support.py)."""

from __future__ import annotations

from collections.abc import Callable

from pytestqt.qtbot import QtBot

from advisor.core.vocabulary import Runtime
from advisor.recommend.recommendation import Recommendation
from advisor.recommend.runtime_support import refused, runtime_refusal
from advisor.ui.i18n import set_language
from advisor.ui.main_window import QtMainWindow
from advisor.ui.make_it_fit import QtMakeItFit
from advisor.ui.recommend_model import explain
from advisor.ui.verdict import _nothing_fits, verdict_text

Ranked = Callable[[QtBot, QtMainWindow], None]


def choose(box: object, value: object) -> None:
    index = box.findData(value)  # type: ignore[attr-defined]
    assert index >= 0, value
    box.setCurrentIndex(index)  # type: ignore[attr-defined]


def test_vllm_in_bf16_ranks_no_card_it_cannot_run_as_fitting(
    qtbot: QtBot, window: QtMainWindow, wait_ranked: Ranked
) -> None:
    window.model_panel.load_zoo("llama-3.2-1b")
    panel, controls = window.recommendations, window.workload
    choose(controls.mode, "generate")
    choose(controls.precision, "bf16")
    choose(controls.llm.runtime, "vllm")
    controls.batch.setValue(8)
    window.state.recompute()
    panel.all_configs.setChecked(True)
    wait_ranked(qtbot, window)
    entries = panel.model.entries
    pascal = [e for e in entries if e.card == "GeForce GTX 1080 Ti"]
    turing = [e for e in entries if e.card == "GeForce RTX 2080 Ti"]
    assert pascal and turing and not any(e.fits for e in pascal + turing)
    assert all(refused(e.reasons) for e in pascal + turing)
    assert any(e.fits for e in entries if e.card == "GeForce RTX 3090")  # Ampere runs bf16
    assert not any(refused(e.reasons) for e in entries if e.fits)
    # the explanation leads with why, in English and in Chinese ("token" is 词元 elsewhere; none here)
    shown = explain(turing[0], 8)
    assert "Does not run" in shown and "vLLM runs bf16 only from compute capability 8.0 (Ampere)" in shown
    set_language("zh_CN")
    try:
        chinese = explain(turing[0], 8)
    finally:
        set_language("en")
    assert "无法运行" in chinese and "只在计算能力 8.0（Ampere）及以上运行 bf16" in chinese
    # the verdict reads the same ranking: its best value and fastest are cards vLLM runs
    verdict = verdict_text(window.state.result, window.state.model.shown_ranking())
    assert "1080 Ti" not in verdict and "2080 Ti" not in verdict and "best value" in verdict


def test_when_every_card_is_refused_the_verdict_says_why_not_how_short(qtbot: QtBot) -> None:
    """Pascal under vLLM: 20 GiB of 22 GiB would fit, so "is -2.00 GiB short" would be nonsense."""
    pascal = runtime_refusal(Runtime.VLLM, "bf16", "NVIDIA", "Pascal")
    assert pascal is not None
    entry = Recommendation(
        card="GeForce GTX 1080 Ti",
        count=1,
        plan="single",
        fits=False,
        reasons=(pascal,),
        required_bytes=20 * 2**30,
        usable_bytes=22 * 2**30,
        max_batch=0,
        step_time_s=0.05,
        throughput=20.0,
        throughput_unit="tokens/s",
        price_usd=None,
        price_date=None,
        price_condition=None,
        perf_per_dollar=None,
        perf_per_watt=0.1,
    )
    said = _nothing_fits([entry])
    assert "No card runs this workload" in said and "Pascal is 6.x" in said and "short" not in said
    set_language("zh_CN")
    try:  # a failed assertion must not leave the other tests in Chinese
        assert _nothing_fits([entry]).startswith("<b>没有显卡能运行此工作负载。</b>无法运行：vLLM 需要计算能力 7.0")
    finally:
        set_language("en")


def test_make_it_fit_on_a_card_vllm_refuses_says_no_change_runs_it(qtbot: QtBot, window: QtMainWindow) -> None:
    window.model_panel.load_zoo("llama-3.2-1b")
    choose(window.workload.mode, "generate")
    choose(window.workload.precision, "bf16")
    choose(window.workload.llm.runtime, "vllm")
    window.state.recompute()
    dialog = QtMakeItFit(window.state, window.catalog, window.runner, "RTX 2080 Ti", window)
    qtbot.addWidget(dialog)
    qtbot.waitUntil(lambda: dialog.report is not None, timeout=30000)
    said = dialog.verdict.text()
    assert "vLLM runs bf16 only from compute capability 8.0 (Ampere); Turing is 7.5" in said  # Turing: 7.5 < 8.0
    assert "no change below makes it run on this card" in said
