"""Records as JSON-ready dicts and as readable text tables (the CLI's output; the UI can reuse the dicts).

JSON keys are the record field names, so every figure's key carries its unit (`memory_bytes`,
`bandwidth_gbs`, `fp32_tflops`, `msrp_usd`); dates are ISO 8601 strings.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict
from datetime import date
from typing import Any

from advisor.catalog.figures import shown
from advisor.catalog.records import FIGURES, CardRecord, PriceRecord
from advisor.core.units import GIB


def _jsonable(value: Any) -> Any:
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, tuple):
        return list(value)
    return value


def card_json(card: CardRecord) -> dict[str, Any]:
    return {key: _jsonable(value) for key, value in asdict(card).items()}


def price_json(price: PriceRecord) -> dict[str, Any]:
    return {key: _jsonable(value) for key, value in asdict(price).items()}


def amount_text(amount: float) -> str:
    """A price as people write it: cents from one unit up ("1,499.00", "2.49"), and below one unit three
    significant digits, at least two decimals ("0.0556", "0.799", "0.33"), where cents would round a
    marketplace rent of 0.0556 per hour by 8%."""
    if amount >= 1:
        return f"{amount:,.2f}"
    whole, _, decimals = f"{float(f'{amount:.3g}'):.4f}".partition(".")
    return f"{whole}.{decimals.rstrip('0').ljust(2, '0')}"


def _figure(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


Column = tuple[str, Callable[[CardRecord], str]]
LIST_COLUMNS: tuple[Column, ...] = (
    ("name", lambda c: c.name),
    ("vendor", lambda c: c.vendor),
    ("segment", lambda c: c.segment),
    ("memory GiB", lambda c: f"{c.memory_bytes / GIB:g}"),
    ("GB/s", lambda c: _figure(c.bandwidth_gbs, 0)),
    ("FP32 TFLOPS", lambda c: _figure(c.fp32_tflops)),
    ("FP16 TFLOPS", lambda c: _figure(c.fp16_tflops)),
    ("TDP W", lambda c: str(c.tdp_w)),
    ("MSRP $", lambda c: _figure(c.msrp_usd, 0)),
)


def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Left-aligned text, right-aligned numbers, columns as wide as their widest cell."""
    widths = [max([len(h), *(len(r[i]) for r in rows)]) for i, h in enumerate(headers)]
    numeric = [all(_looks_numeric(r[i]) for r in rows) and bool(rows) for i in range(len(headers))]

    def line(cells: Sequence[str]) -> str:
        parts = [c.rjust(w) if n else c.ljust(w) for c, w, n in zip(cells, widths, numeric, strict=True)]
        return "  ".join(parts).rstrip()

    return "\n".join([line(headers), line(["-" * w for w in widths]), *(line(r) for r in rows)])


def _looks_numeric(cell: str) -> bool:
    return cell == "-" or cell.replace(",", "").replace(".", "", 1).isdigit()


def cards_table(cards: Sequence[CardRecord]) -> str:
    return table([h for h, _ in LIST_COLUMNS], [[cell(c) for _, cell in LIST_COLUMNS] for c in cards])


def card_detail(card: CardRecord, prices: Sequence[PriceRecord]) -> str:
    """Every declared figure (records.FIGURES) under its label, then whose row it is and its prices."""
    facts = [(f.label, shown(f, getattr(card, f.field))) for f in FIGURES]
    facts.append(("row", "yours (never overwritten by bundled updates)" if card.user_owned else "bundled data"))
    width = max(len(k) for k, _ in facts)
    text = [f"{k.ljust(width)}  {v}" for k, v in facts]
    if prices:
        text += ["", "prices:", prices_table(prices)]
    return "\n".join(text)


def age_text(day: date, today: date) -> str:
    """How old a price is, as a person says it: "today", "12 days", "3 months", "2.5 years" (30.44-day
    months, 365.25-day years)."""
    days = (today - day).days
    if days <= 0:
        return "today"
    if days < 61:
        return f"{days} day{'s' if days != 1 else ''}"
    if days < 730:
        return f"{days / 30.44:.0f} months"
    return f"{days / 365.25:.1f} years"


def prices_table(prices: Sequence[PriceRecord], today: date | None = None) -> str:
    """A card's price history: per card for a purchase, per GPU-hour for rent; "yours" marks the user's."""
    now = today or date.today()
    rows = [
        [
            p.date.isoformat(),
            age_text(p.date, now),
            amount_text(p.amount),
            p.currency,
            p.condition,
            p.kind,
            p.market,
            "yours" if p.user_owned else "bundled",
            p.source
            + (f" <{p.source_url}>" if p.source_url else "")
            + (f" (read {p.source_read_date})" if p.source_read_date else ""),
        ]
        for p in prices
    ]
    return table(["date", "age", "amount", "currency", "condition", "kind", "market", "row", "source"], rows)
