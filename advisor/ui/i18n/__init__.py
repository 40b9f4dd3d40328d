"""Every user-facing string goes through tr(): English is the key, other languages are dictionaries.

A plain Python catalogue (zh_CN.py) rather than Qt's .ts/.qm files: it is testable without lrelease
(tests/ui/test_i18n.py checks that every tr("...") literal in the app and the charts has a translation),
and the chart builders, which know nothing of Qt, translate through the same function.
Placeholders use str.format names: tr("batch {batch}").format(batch=32).
"""

from __future__ import annotations

from PySide6.QtCore import QLocale

from advisor.ui.i18n.zh_CN import MESSAGES as ZH_CN
from advisor.ui.i18n.zh_CN_app import MESSAGES as ZH_CN_APP
from advisor.ui.i18n.zh_CN_fields import MESSAGES as ZH_CN_FIELDS
from advisor.ui.i18n.zh_CN_llm import MESSAGES as ZH_CN_LLM
from advisor.ui.i18n.zh_CN_open import MESSAGES as ZH_CN_OPEN
from advisor.ui.i18n.zh_CN_prices import MESSAGES as ZH_CN_PRICES
from advisor.ui.i18n.zh_CN_report import MESSAGES as ZH_CN_REPORT

LANGUAGES: dict[str, str] = {"en": "English", "zh_CN": "简体中文"}
# Fontconfig picks the Japanese variant for bare "Noto Sans CJK"; Chinese needs the SC family by name.
FONTS: dict[str, tuple[str, ...]] = {"en": ("DejaVu Sans",), "zh_CN": ("Noto Sans CJK SC", "DejaVu Sans")}
# English keys that read better differently on screen (engine vocabulary).
_EN: dict[str, str] = {"optimizer_state": "optimizer state", "infer": "inference", "train": "training",
                       "kv_cache": "KV cache", "generate": "generation",
                       "perf_per_dollar": "best value (speed per dollar)", "cheapest": "cheapest that fits",
                       "fastest": "fastest"}
_CATALOGS: dict[str, dict[str, str]] = {"en": _EN, "zh_CN": {**ZH_CN, **ZH_CN_APP, **ZH_CN_FIELDS, **ZH_CN_LLM,
                                                  **ZH_CN_OPEN, **ZH_CN_PRICES, **ZH_CN_REPORT}}
_current = "en"


def tr(text: str) -> str:
    found = _CATALOGS[_current].get(text)
    if found is None and _current != "en":  # a sentence with figures in it: its template (i18n/errors.py)
        from advisor.ui.i18n.errors import sentence_text  # errors.py reads language() from here

        found = sentence_text(text, _current)
    return text if found is None else found


def set_language(code: str) -> None:
    global _current
    _current = code if code in LANGUAGES else "en"


def language() -> str:
    return _current


def system_language() -> str:
    """zh_CN for any Chinese locale (Simplified is what we ship), English otherwise."""
    return "zh_CN" if QLocale.system().language() == QLocale.Language.Chinese else "en"


def fonts() -> tuple[str, ...]:
    return FONTS[_current]
