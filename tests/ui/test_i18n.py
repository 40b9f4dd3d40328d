"""Every tr("...") / t("...") literal of the app, the charts and the PDF report has a Chinese translation with
the same placeholders, and the engine words translated at run time do too."""

from __future__ import annotations

import ast
import re
import string
from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication

import advisor
from advisor.i18n.zh_CN import DYNAMIC
from advisor.i18n.zh_CN import MESSAGES as SHARED
from advisor.i18n.zh_CN_app import MESSAGES as APP
from advisor.i18n.zh_CN_fields import MESSAGES as FIELDS
from advisor.i18n.zh_CN_llm import MESSAGES as LLM
from advisor.i18n.zh_CN_open import MESSAGES as OPEN
from advisor.i18n.zh_CN_options import MESSAGES as OPTIONS
from advisor.i18n.zh_CN_prices import MESSAGES as PRICES
from advisor.i18n.zh_CN_report import MESSAGES as REPORT
from advisor.ui.i18n import AppLanguage, app_language, language, set_language, tr

MESSAGES = {**SHARED, **APP, **FIELDS, **LLM, **OPEN, **OPTIONS, **PRICES, **REPORT}

ROOT = Path(advisor.__file__).parent


def literals() -> list[str]:
    found: list[str] = []
    for folder in ("ui", "charts", "report"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Name)
                    and node.func.id in ("tr", "t")
                    and node.args
                    and isinstance(node.args[0], ast.Constant)
                    and isinstance(node.args[0].value, str)
                ):
                    found.append(node.args[0].value)
    return sorted(set(found))


def fields(text: str) -> set[str]:
    return {name for _lit, name, _spec, _conv in string.Formatter().parse(text) if name is not None}


def test_the_scan_finds_the_app_strings() -> None:
    assert {"Recommendations", "Batch size", "Reading the GPUs…", "Recommended cards"} <= set(literals())


@pytest.mark.parametrize("text", [*literals(), *DYNAMIC])
def test_every_string_has_a_chinese_translation(text: str) -> None:
    assert text in MESSAGES, f"no zh_CN entry for {text!r}"
    translated = MESSAGES[text]
    assert fields(translated) == fields(text)
    words = re.sub(r"\{[^}]*\}", "", text)  # placeholders are not words to translate
    if re.search(r"[A-Za-z]{4,}", words) and text not in ("FLOPs", "nvidia-smi", "FP32 TFLOPS", "MACs"):
        assert re.search(r"[\u4e00-\u9fff]", translated), f"{text!r} is not translated"


def test_tr_follows_the_language(qapp: QApplication) -> None:
    set_language("zh_CN")
    try:
        assert tr("Batch size") == "批大小"
        assert tr("batch {batch}").format(batch=8) == "批大小 8"
    finally:
        set_language("en")
    assert tr("Batch size") == "Batch size"
    assert tr("optimizer_state") == "optimizer state"


def test_the_language_is_state_of_the_application_not_of_a_module(qapp: QApplication) -> None:
    held = app_language()
    assert app_language() is held and qapp.findChild(AppLanguage) is held  # one, owned by the QApplication
    set_language("zh_CN")
    try:
        assert held.code == language() == "zh_CN"
        set_language("xx")  # an unshipped language falls back to English
        assert held.code == "en"
    finally:
        set_language("en")


def test_the_estimators_assumptions_are_translated() -> None:
    """The report quotes them; every sentence core and the simulator write has a Chinese entry."""
    from advisor.core import zoo
    from advisor.core.analytic import estimate
    from advisor.core.workload import Workload

    workloads = [Workload("train", 8, "amp_bf16", "adam", True), Workload("infer", 8)]
    sentences = {a for w in workloads for a in estimate(zoo.build("resnet18"), w).assumptions}
    torch = pytest.importorskip("torch")
    from advisor.importers.simulate import simulate_estimate

    model = torch.nn.Sequential(torch.nn.Linear(4, 2))
    simulated = simulate_estimate(model, lambda b: ((torch.randn(b, 4),), {}), Workload("train", 2, "amp_fp16"))
    sentences |= set(simulated.assumptions)
    missing = sorted(s for s in sentences if s not in MESSAGES)
    assert not missing, missing


def test_every_builder_field_label_and_tip_is_translated() -> None:
    from advisor.ui.field_labels import FIELDS as LABELS

    for label, tip in LABELS.values():
        assert label in MESSAGES and tip in MESSAGES
