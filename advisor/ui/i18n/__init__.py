"""The app's language: one at a time, chosen in the Language menu or from the system locale. The lookup and
the catalogues are in advisor/i18n (the command line's PDF report uses them without the app); `tr` is that
lookup in the app's current language.
"""

from __future__ import annotations

from PySide6.QtCore import QLocale

from advisor.i18n import FONTS, LANGUAGES, fonts_for, known_language, locale_language, translate

__all__ = ["FONTS", "LANGUAGES", "fonts", "language", "set_language", "system_language", "tr"]


# The running app's one current language (the window retranslates when it changes). Only the app's widgets
# read it: the command line and the PDF report pass their language to advisor/i18n.
_current = "en"


def tr(text: str) -> str:
    return translate(text, _current)


def set_language(code: str) -> None:
    global _current
    _current = known_language(code)


def language() -> str:
    return _current


def system_language() -> str:
    return locale_language(QLocale.system().name())


def fonts() -> tuple[str, ...]:
    return fonts_for(_current)
