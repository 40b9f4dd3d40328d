"""Makes the PDF's Chinese text extract as the characters it shows.

When Qt writes a font's ToUnicode table (what copy, search and pdftotext read), it maps each glyph back to
the lowest code point the font gives that glyph. CJK fonts share one glyph between an ideograph and its
radical form: 比 U+6BD4 and the Kangxi radical ⽐ U+2F50, 页 U+9875 and the radical supplement ⻚ U+2EDA. So
copied Chinese came out with radicals in it. The report never writes radicals, so each radical in the table
is swapped for the ideograph that shares its glyph in the fonts used (for Kangxi radicals, their NFKC form
when the font says nothing). Both codes are four hex digits: the file's byte offsets stay valid.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from functools import cache

from PySide6.QtGui import QFont, QRawFont

RADICALS = range(0x2E80, 0x2FE0)  # CJK Radicals Supplement and Kangxi Radicals
IDEOGRAPHS = range(0x4E00, 0xA000)  # CJK Unified Ideographs
_CMAP = re.compile(rb"/CMapName /Adobe-Identity-UCS def.*?endcmap", re.S)
_CODE = re.compile(rb"<(2[EF][0-9A-F]{2})>")


def _from_font(family: str) -> dict[int, int]:
    raw = QRawFont.fromFont(QFont(family))
    if not raw.isValid():
        return {}
    ideograph_glyphs = raw.glyphIndexesForString("".join(map(chr, IDEOGRAPHS)))
    by_glyph: dict[int, int] = {}
    for code, glyph in zip(IDEOGRAPHS, ideograph_glyphs, strict=True):
        if glyph:
            by_glyph.setdefault(glyph, code)
    radical_glyphs = raw.glyphIndexesForString("".join(map(chr, RADICALS)))
    return {code: by_glyph[glyph] for code, glyph in zip(RADICALS, radical_glyphs, strict=True) if glyph in by_glyph}


@cache
def equivalents(families: tuple[str, ...]) -> dict[int, int]:
    """Radical code point -> the ideograph it stands for, in these fonts (the first font that knows wins)."""
    found: dict[int, int] = {}
    for code in RADICALS:
        normal = unicodedata.normalize("NFKC", chr(code))
        if len(normal) == 1 and ord(normal) in IDEOGRAPHS:
            found[code] = ord(normal)
    for family in reversed(families):
        found.update(_from_font(family))
    return found


def _fix_cmap(cmap: bytes, table: dict[int, int]) -> bytes:
    """Rewrites destination codes only: a bfrange line starts with two source codes (glyph ids), a bfchar
    line with one; each source code is 7 bytes ("<0012> ")."""

    def swap(match: re.Match[bytes]) -> bytes:
        code = table.get(int(match.group(1), 16))
        return match.group(0) if code is None else b"<%04X>" % code

    skip, lines = 0, []
    for line in cmap.split(b"\n"):
        if line.endswith((b"beginbfrange", b"beginbfchar")):
            skip = 14 if line.endswith(b"beginbfrange") else 7
        elif line.startswith(b"<") and skip:
            line = line[:skip] + _CODE.sub(swap, line[skip:])
        lines.append(line)
    return b"\n".join(lines)


def fix_to_unicode(pdf: bytes, families: Sequence[str]) -> bytes:
    table = equivalents(tuple(families))
    return _CMAP.sub(lambda match: _fix_cmap(match.group(0), table), pdf)
