"""How a typed card name is matched: normalized names and the short aliases people actually type.

"4090", "RTX 4090", "GeForce RTX 4090" and "nvidia geforce rtx 4090" must all find the same card.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

_VENDOR_PREFIX = re.compile(r"^(nvidia|amd|intel)\s+")
_SPACE = re.compile(r"\s+")
# "40 GB" and "40GB" are the same thing to a person; store the joined form.
_NUMBER_UNIT = re.compile(r"(\d)\s+(gb|tb)\b")


def normalize(name: str) -> str:
    """Lower case, single spaces, no vendor prefix, "40 GB" == "40GB"."""
    text = _SPACE.sub(" ", name.strip().lower())
    text = _VENDOR_PREFIX.sub("", text)
    return _NUMBER_UNIT.sub(r"\1\2", text)


def short_forms(name: str) -> list[str]:
    """Shorter names people use: drop the brand word, then everything before the model number.

    "GeForce RTX 4090" -> "RTX 4090", "4090"; "Radeon RX 7900 XTX" -> "RX 7900 XTX", "7900 XTX".
    A suffix is only offered from the first word that has a digit, so "Titan X (Pascal)" gives nothing
    ambiguous like "X (Pascal)".
    """
    words = name.split()
    forms: list[str] = []
    if len(words) > 2 and words[0].lower() in {"geforce", "radeon", "quadro", "tesla", "instinct", "arc"}:
        forms.append(" ".join(words[1:]))
    first_digit = next((i for i, word in enumerate(words) if any(c.isdigit() for c in word)), None)
    if first_digit is not None and first_digit > 0:
        forms.append(" ".join(words[first_digit:]))
    return [form for form in dict.fromkeys(forms) if normalize(form) != normalize(name)]


def unambiguous_aliases(names: Iterable[str], extra: dict[str, tuple[str, ...]]) -> dict[str, list[str]]:
    """Aliases per card name: explicit ones plus short forms, dropping any short form two cards share.

    Explicit aliases must be unique (checked by the data loader); a short form like "RTX 6000" that would
    point at two cards is simply not offered, so a lookup never silently picks the wrong one.
    """
    names = list(names)
    taken = {normalize(n) for n in names} | {normalize(a) for aliases in extra.values() for a in aliases}
    candidates = {name: short_forms(name) for name in names}
    counts = Counter(normalize(form) for forms in candidates.values() for form in forms)
    result: dict[str, list[str]] = {}
    for name in names:
        shorts = [f for f in candidates[name] if counts[normalize(f)] == 1 and normalize(f) not in taken]
        result[name] = [*extra.get(name, ()), *shorts]
    return result


_BOUNDARY = re.compile(r"(?<=[a-z])(?=\d)|(?<=\d)(?=[a-z])")
_SEPARATORS = re.compile(r"[\s\-_/(),+]+")
# Words that never tell two cards apart: the vendor, and the unit of a memory size ("80GB" -> 80, gb).
_NOISE = frozenset({"nvidia", "amd", "intel", "gb", "gib"})


def tokens(name: str) -> frozenset[str]:
    """The words of a name in any order and spelling: "sxm4 a100 80gb" and "A100 SXM4 80 GB" give the same
    set, and "rtx4090" the same as "RTX 4090" (letters and digits are split where they meet)."""
    words = _SEPARATORS.split(name.lower())
    return frozenset(t for w in words for t in _BOUNDARY.sub(" ", w).split() if t not in _NOISE)


def match(query: str, names: Iterable[tuple[str, str]]) -> list[str]:
    """Which cards `query` means, from (any name or alias, canonical name) pairs: the cards with a name of
    exactly the query's words if any, else those with a name that has all of the query's words. One card
    is an answer; several are the candidates of an ambiguous name; none: unknown."""
    wanted = tokens(query)
    if not wanted:
        return []
    pairs = [(tokens(alias), card) for alias, card in names]
    exact = sorted({card for words, card in pairs if words == wanted})
    return exact or sorted({card for words, card in pairs if wanted <= words})
