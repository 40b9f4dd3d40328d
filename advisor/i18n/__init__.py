"""Every user-facing string goes through a translator: English is the key, other languages are dictionaries.

A plain Python catalogue (zh_CN*.py) rather than Qt's .ts/.qm files: it is testable without lrelease
(tests/ui/test_i18n.py checks that every tr("...") literal in the app and the charts has a translation),
and the chart builders and the PDF report, which know nothing of Qt, translate through the same lookup.
Placeholders use str.format names: t("batch {batch}").format(batch=32).

The language is always passed in: the command line's --lang, the app's setting (the running QApplication
owns it: advisor/ui/i18n AppLanguage), never a module's global.
"""

from __future__ import annotations

from collections.abc import Callable

from advisor.i18n.zh_CN import MESSAGES as ZH_CN
from advisor.i18n.zh_CN_app import MESSAGES as ZH_CN_APP
from advisor.i18n.zh_CN_fields import MESSAGES as ZH_CN_FIELDS
from advisor.i18n.zh_CN_llm import MESSAGES as ZH_CN_LLM
from advisor.i18n.zh_CN_open import MESSAGES as ZH_CN_OPEN
from advisor.i18n.zh_CN_options import MESSAGES as ZH_CN_OPTIONS
from advisor.i18n.zh_CN_prices import MESSAGES as ZH_CN_PRICES
from advisor.i18n.zh_CN_report import MESSAGES as ZH_CN_REPORT

Translate = Callable[[str], str]

LANGUAGES: dict[str, str] = {"en": "English", "zh_CN": "简体中文"}
# Fontconfig picks the Japanese variant for bare "Noto Sans CJK"; Chinese needs the SC family by name.
FONTS: dict[str, tuple[str, ...]] = {"en": ("DejaVu Sans",), "zh_CN": ("Noto Sans CJK SC", "DejaVu Sans")}
# English keys that read better differently on screen (engine vocabulary).
_EN: dict[str, str] = {
    "optimizer_state": "optimizer state",
    "infer": "inference",
    "train": "training",
    "kv_cache": "KV cache",
    "generate": "generation",
}
_CATALOGS: dict[str, dict[str, str]] = {
    "en": _EN,
    "zh_CN": {
        **ZH_CN,
        **ZH_CN_APP,
        **ZH_CN_FIELDS,
        **ZH_CN_LLM,
        **ZH_CN_OPEN,
        **ZH_CN_OPTIONS,
        **ZH_CN_PRICES,
        **ZH_CN_REPORT,
    },
}


def known_language(code: str) -> str:
    """`code` if it is a shipped language, else English."""
    return code if code in LANGUAGES else "en"


def locale_language(locale_name: str) -> str:
    """zh_CN for any Chinese locale (Simplified is what we ship; QLocale.name() spells it "zh_TW", "zh_CN"),
    English otherwise."""
    return "zh_CN" if locale_name.split("_")[0] == "zh" else "en"


def translate(text: str, language: str) -> str:
    code = known_language(language)
    found = _CATALOGS[code].get(text)
    if found is None and code != "en":  # a sentence with figures in it: its template (i18n/errors.py)
        from advisor.i18n.errors import sentence_text  # errors.py's catalogues import this package

        found = sentence_text(text, code)
    return text if found is None else found


def translator(language: str) -> Translate:
    """The lookup of one language, as the PDF report and the chart builders take it."""
    return lambda text: translate(text, language)


def fonts_for(language: str) -> tuple[str, ...]:
    return FONTS[known_language(language)]
