"""JSON text that every JSON parser reads: a non-finite float (infinity, NaN) becomes null.

Python's json.dumps writes `Infinity` and `NaN` by default, which RFC 8259 (section 6) does not allow and
strict parsers (JavaScript's JSON.parse, jq) reject: a price of 1e308 made `recommend --json` print
`"price_usd": Infinity`. null says "no meaningful figure", which is what such a value is.
"""

from __future__ import annotations

import json
import math
from typing import Any


def finite(value: Any) -> Any:
    """`value` with every non-finite float inside dicts, lists and tuples replaced by None."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: finite(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [finite(item) for item in value]
    return value


def dumps(value: Any, **options: Any) -> str:
    """json.dumps of finite(value); allow_nan=False makes a missed case an error, never invalid JSON."""
    return json.dumps(finite(value), allow_nan=False, **options)
