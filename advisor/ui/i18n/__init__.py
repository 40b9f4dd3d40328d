"""The app's language: one at a time, chosen in the Language menu or from the system locale. The lookup and
the catalogues are in advisor/i18n (the command line's PDF report uses them without the app, passing its
--lang); `tr` is that lookup in the running app's language.

The language is state of the running application, not of this module: an AppLanguage object the
QApplication owns (its child, as Qt keeps its own translators on the application object), which the window
sets from the Language menu and every widget reads through `tr` when it is built. Before an application
exists, and in a process without one, the language is English.
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QLocale, QObject, QTranslator

from advisor.i18n import FONTS, LANGUAGES, fonts_for, known_language, locale_language, translate

__all__ = [
    "FONTS",
    "LANGUAGES",
    "AppLanguage",
    "app_language",
    "fonts",
    "language",
    "set_language",
    "system_language",
    "tr",
]

_NAME = "advisor-app-language"


class AppLanguage(QObject):
    """The running app's language, and the translator of Qt's own strings installed for it (app.py
    apply_font)."""

    def __init__(self, app: QCoreApplication) -> None:
        super().__init__(app)
        self.setObjectName(_NAME)
        self.code = "en"
        self.qt_translator: QTranslator | None = None

    def set(self, code: str) -> None:
        self.code = known_language(code)


def _held() -> AppLanguage | None:
    app = QCoreApplication.instance()
    return None if app is None else app.findChild(AppLanguage, _NAME)


def app_language() -> AppLanguage:
    """The running application's language object, made on first use (a RuntimeError without an application:
    there is nothing to hold the choice)."""
    app = QCoreApplication.instance()
    if app is None:
        raise RuntimeError("the app's language is held by its QApplication; none exists")
    held = _held()
    return held if held is not None else AppLanguage(app)


def language() -> str:
    held = _held()
    return "en" if held is None else held.code


def set_language(code: str) -> None:
    app_language().set(code)


def tr(text: str) -> str:
    return translate(text, language())


def system_language() -> str:
    return locale_language(QLocale.system().name())


def fonts() -> tuple[str, ...]:
    return fonts_for(language())
