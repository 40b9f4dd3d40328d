"""The importers' and the builder's errors in the user's language, where the app shows them.

The layers below the UI raise English one-liners ("conv3: kernel 7x7 larger than padded input 5x5"): the
command line prints them as they are, and they know no Qt, so they cannot call tr(). The app translates them
on the way to the screen instead: each catalogued English message is a template whose {placeholders} match
any text, {reason} and {rest} being messages of their own (translated again: "{path}: build_model() failed:
{reason}"). A message no template matches is split at its first ": " (the place it names, then what is
wrong); one with no catalogued part at all stays as it is, rather than half translated.
"""

from __future__ import annotations

import re
from functools import cache

from advisor.i18n.zh_CN_errors import MESSAGES as ZH_CN_ERRORS
from advisor.i18n.zh_CN_sentences import MESSAGES as ZH_CN_SENTENCES

_CATALOGS: dict[str, dict[str, str]] = {"zh_CN": ZH_CN_ERRORS}
_SENTENCES: dict[str, dict[str, str]] = {"zh_CN": ZH_CN_SENTENCES}
_PLACEHOLDER = re.compile(r"\{(\w+)\}")
NESTED = ("reason", "rest")  # placeholders that hold another message, translated in turn
_COLON = {"zh_CN": "："}  # how the place and the problem are joined
_VALUE = r"(?:(?!: ).)+?"  # a value holds no ": ", so a template never swallows the message's place


def pattern(template: str) -> re.Pattern[str]:
    """The template as a regular expression: its text literally, each placeholder any text (a nested
    message greedily, to the end; other values as little as will do, and never across a ": ")."""
    parts, last = [], 0
    for match in _PLACEHOLDER.finditer(template):
        parts.append(re.escape(template[last : match.start()]))
        parts.append(f"(?P<{match.group(1)}>.+)" if match.group(1) in NESTED else f"(?P<{match.group(1)}>{_VALUE})")
        last = match.end()
    parts.append(re.escape(template[last:]))
    return re.compile("".join(parts), re.DOTALL)


@cache
def _compiled(code: str, sentences: bool = False) -> list[tuple[re.Pattern[str], str]]:
    """Longest templates first: "{layer}: field {name}: {reason}" before the bare "{where}: {rest}"."""
    catalog = (_SENTENCES if sentences else _CATALOGS).get(code, {})
    return [(pattern(english), catalog[english]) for english in sorted(catalog, key=len, reverse=True)]


def _filled(message: str, code: str, sentences: bool, depth: int) -> str | None:
    for regex, target in _compiled(code, sentences):
        match = regex.fullmatch(message)
        if match is None:
            continue
        values = match.groupdict()
        for name in NESTED:
            if name in values:
                inner = (
                    _filled(values[name], code, sentences, depth + 1)
                    if sentences
                    else _translate(values[name], code, depth + 1)
                )
                values[name] = inner or values[name]
        return target.format(**values)
    return None


def sentence_text(text: str, code: str) -> str | None:
    """A sentence built with figures (an estimate's assumption) in language `code`, or None: tr()'s fallback."""
    return _filled(text, code, True, 0) if code != "en" else None


def _translate(message: str, code: str, depth: int = 0) -> str | None:
    """The message in language `code`, or None when no part of it is catalogued."""
    if depth > 6:  # nesting this deep is not one of ours
        return None
    filled = _filled(message, code, False, depth)
    if filled is not None:
        return filled
    where, colon, rest = message.partition(": ")
    inner = _translate(rest, code, depth + 1) if colon else None
    return where + _COLON.get(code, ": ") + inner if inner is not None else None


def error_text(message: str, code: str) -> str:
    """`message` in language `code` (English unchanged)."""
    if code == "en" or not message:
        return message
    return _translate(message, code) or message
