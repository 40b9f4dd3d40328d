"""Records as JSON-ready dicts and as readable text tables (the CLI's output; the UI can reuse the dicts).

JSON keys are the record field names, so every figure's key carries its unit (`memory_bytes`,
`bandwidth_gbs`, `fp32_tflops`, `msrp_usd`); dates are ISO 8601 strings.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict
from datetime import date
from typing import Any

from advisor.catalog.records import CardRecord, PriceRecord
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


def _link(card: CardRecord) -> str:
    if card.link_kind == "none":
        return "none"
    speed = f", {card.link_bandwidth_gbs:g} GB/s" if card.link_bandwidth_gbs else ""
    detail = f" ({card.link_detail}{speed})" if card.link_detail or speed else ""
    return f"{card.link_kind}{detail}"


def card_detail(card: CardRecord, prices: Sequence[PriceRecord]) -> str:
    facts = [
        ("name", card.name), ("also known as", ", ".join(card.aliases) or "-"),
        ("vendor / segment", f"{card.vendor} / {card.segment}"), ("architecture", card.architecture),
        ("launched", card.launch_date.isoformat() if card.launch_date else "-"),
        ("memory", f"{card.memory_bytes / GIB:g} GiB {card.memory_type} ({card.memory_bytes:,} bytes)"),
        ("unified memory", f"{card.unified_memory_bytes / GIB:g} GiB shared with the CPU"
         if card.unified_memory_bytes else "-"),
        ("bus width", f"{card.bus_width_bits} bit" if card.bus_width_bits else "-"),
        ("bandwidth", f"{card.bandwidth_gbs:g} GB/s"), ("FP32", f"{card.fp32_tflops:g} TFLOPS"),
        ("TF32 tensor", _unit(card.tf32_tflops, "TFLOPS")),
        ("FP16 tensor", _unit(card.fp16_tflops, "TFLOPS")),
        ("BF16 tensor", _unit(card.bf16_tflops, "TFLOPS")), ("FP8 tensor", _unit(card.fp8_tflops, "TFLOPS")),
        ("INT8 tensor", _unit(card.int8_tops, "TOPS")), ("TDP", f"{card.tdp_w} W"),
        ("PCIe", f"gen {card.pcie_gen}" if card.pcie_gen else "-"), ("GPUs on the board", str(card.devices)),
        ("multi-card link", _link(card)),
        ("launch MSRP", _unit(card.msrp_usd, "USD")), ("source", card.source),
        ("row", "yours (never overwritten by bundled updates)" if card.user_owned else "bundled data"),
    ]  # fmt: skip
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
    rows = [[p.date.isoformat(), age_text(p.date, now), amount_text(p.amount), p.currency, p.condition, p.kind,
             p.market, "yours" if p.user_owned else "bundled", p.source + (f" <{p.source_url}>" if p.source_url else "")
             + (f" (read {p.source_read_date})" if p.source_read_date else "")] for p in prices]  # fmt: skip
    return table(["date", "age", "amount", "currency", "condition", "kind", "market", "row", "source"], rows)


def _unit(value: float | None, unit: str) -> str:
    return "-" if value is None else f"{value:g} {unit}"
