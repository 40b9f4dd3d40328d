"""The report's assumptions in words (issue 27): no JSON field names, the multiplication sign, and no English
sentence left in the Chinese report's own text."""

from __future__ import annotations

import re
from pathlib import Path

from report_support import pdf_text, words

from advisor.recommend.present import three_figures
from advisor.report import Report
from advisor.report.card_pages import _ratio, plain_words
from advisor.ui.i18n import set_language, tr

Made = tuple[Report, Path, int]
FIELDS = re.compile(r"\b(peak|required|reserved|device_total)_bytes\b")


def test_field_names_become_the_words_of_the_memory_table() -> None:
    said = "cuDNN/cuBLAS workspaces are not in peak_bytes (they depend on the algorithm cuDNN picks)."
    assert plain_words(said, str) == (
        "cuDNN/cuBLAS workspaces are not in the peak allocated memory (they depend on the algorithm cuDNN picks)."
    )
    assert plain_words("required_bytes replays", str) == "The required memory replays"
    assert plain_words("FLOPs = 2 x MACs; seq x seq", str) == "FLOPs = 2 × MACs; seq × seq"
    set_language("zh_CN")
    try:  # no space is left between the Chinese words and what follows
        assert plain_words(tr(said), tr) == "峰值分配显存不含 cuDNN/cuBLAS 工作区（取决于 cuDNN 选择的算法）。"
    finally:
        set_language("en")


def test_the_english_report_names_no_field(english: Made) -> None:
    text = words(pdf_text(english[1]))
    assert not FIELDS.search(text), FIELDS.search(text)
    assert "cuDNN/cuBLAS workspaces are not in the peak allocated memory" in text


def test_the_chinese_report_says_its_assumptions_in_chinese(chinese: Made) -> None:
    text = words(pdf_text(chinese[1]))
    assert not FIELDS.search(text), FIELDS.search(text)
    assert "measured on an" not in text and "测自 NVIDIA H200，驱动 580.159" in text
    assert "USD (" not in text and re.search(r"\d 美元（全新）", text)  # a price's condition in Chinese brackets


def test_ratios_never_read_in_scientific_notation(english: Made) -> None:
    """A rent's throughput per dollar of hourly rent printed as 2.28e+04 in the PDF."""
    assert three_figures(22_812.4) == "22,800" and three_figures(462.2) == "462" and three_figures(0.9723) == "0.972"
    assert _ratio(22_812.4) == "22,800" and _ratio(None) == "n/a"
    # three figures shown even when the last is a zero (the app's per-$1k column read 1.24, 1.23, 1.1, 1.03)
    assert three_figures(1.1) == "1.10" and three_figures(0.0093) == "0.00930" and three_figures(99.96) == "100"
    assert not re.search(r"\d[eE][+-]\d", pdf_text(english[1]))
