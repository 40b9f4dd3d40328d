"""The importers' and the builder's errors in the app's current language (the lookup: advisor/i18n/errors.py)."""

from __future__ import annotations

from advisor.i18n import errors
from advisor.ui.i18n import language


def error_text(message: str) -> str:
    """`message` in the app's language (English unchanged)."""
    return errors.error_text(message, language())
