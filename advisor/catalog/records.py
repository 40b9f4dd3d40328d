"""Plain records the catalog hands out. Nothing outside advisor/catalog sees an ORM object.

Field names carry their unit so that a reader of JSON, a chart or a report never has to guess:
memory in bytes, bandwidth in decimal GB/s, throughput in dense (non-sparse) TFLOPS / TOPS.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from datetime import date
from typing import Literal, get_args

Vendor = Literal["NVIDIA", "AMD", "Intel"]
Segment = Literal["consumer", "workstation", "datacenter"]
LinkKind = Literal["none", "sli", "nvlink", "infinity_fabric", "xe_link"]
Condition = Literal["new", "used", "refurbished"]

VENDORS: tuple[str, ...] = get_args(Vendor)
SEGMENTS: tuple[str, ...] = get_args(Segment)
LINK_KINDS: tuple[str, ...] = get_args(LinkKind)
CONDITIONS: tuple[str, ...] = get_args(Condition)
# What a price buys: the card itself, or one GPU for one hour from a cloud.
KINDS: tuple[str, ...] = ("purchase", "rent_hour")
# Where it was seen: the vendor's launch price, a shop, a used market, or a cloud's price list.
MARKETS: tuple[str, ...] = ("msrp", "retail", "used_market", "cloud_on_demand", "cloud_spot", "cloud_reserved")


@dataclass(frozen=True, slots=True)
class CardSpec:
    """Every figure of a card as the user or the bundled data states it (no identity, no ownership)."""

    name: str
    vendor: str
    architecture: str
    segment: str
    memory_bytes: int
    memory_type: str
    bandwidth_gbs: float
    fp32_tflops: float
    tdp_w: int
    source: str
    launch_date: date | None = None
    bus_width_bits: int | None = None
    tf32_tflops: float | None = None
    fp16_tflops: float | None = None
    bf16_tflops: float | None = None
    fp8_tflops: float | None = None
    int8_tops: float | None = None
    pcie_gen: int | None = None
    # GPUs on the board (K80, Titan Z, MI250X have two): the figures are board totals, and each GPU
    # sees memory_bytes / devices of memory, which is what decides whether a model fits.
    devices: int = 1
    link_kind: str = "none"
    link_detail: str = ""
    link_bandwidth_gbs: float | None = None
    msrp_usd: float | None = None
    aliases: tuple[str, ...] = ()
    # Unified-memory machines (GB10, Strix Halo, GH200): all the memory the GPU shares coherently with the
    # CPU, of which memory_bytes is the part the GPU may use for a model (advisor/data/README.md, "Unified
    # memory"). None for a card with its own memory only.
    unified_memory_bytes: int | None = None


def missing_figures(spec: CardSpec) -> tuple[str, ...]:
    """The figures a card must state for ranking (it divides by the rates and compares memory): a name, and
    memory, bandwidth, FP32 rate and TDP above zero. Empty for a complete card."""
    checks = (("name", bool(spec.name.strip())), ("memory_bytes", spec.memory_bytes > 0),
              ("bandwidth_gbs", spec.bandwidth_gbs > 0), ("fp32_tflops", spec.fp32_tflops > 0),
              ("tdp_w", spec.tdp_w > 0))
    return tuple(name for name, ok in checks if not ok)


@dataclass(frozen=True, slots=True)
class CardRecord(CardSpec):
    """A card as stored: its spec plus whose row it is. `name` is the canonical name reports print."""

    user_owned: bool = False


@dataclass(frozen=True, slots=True)
class PriceRecord:
    """One observed price. `amount` is in `currency`: per card for a purchase, per GPU-hour for rent_hour.

    `date` is when the price was observed; `source` is the title of where (`source_url`, read on
    `source_read_date`). `user_owned` prices are the user's and win over bundled ones.
    """

    card_name: str
    amount: float
    currency: str
    date: date
    condition: str
    source: str
    user_owned: bool
    kind: str = "purchase"
    market: str = "retail"
    source_url: str = ""
    source_read_date: _dt.date | None = None
