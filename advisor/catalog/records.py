"""Plain records the catalog hands out. Nothing outside advisor/catalog sees an ORM object.

Field names carry their unit so that a reader of JSON, a chart or a report never has to guess:
memory in bytes, bandwidth in decimal GB/s, throughput in dense (non-sparse) TFLOPS / TOPS.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field
from datetime import date
from typing import Literal, get_args

from advisor.catalog.figures import Figure, Kind, declared, figure

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


_RATE_RULE = (
    "peak, dense (2:4 sparse datasheet figures halved), at the reference boost clock, tensor/matrix "
    "units with FP32 accumulate (GeForce: half the FP16-accumulate rate); empty: no such path"
)


@dataclass(frozen=True, slots=True)
class CardSpec:
    """Every figure of a card as the user or the bundled data states it (no identity, no ownership).

    Each field is one figure, declared once: its metadata (figures.figure) names the CSV column and option,
    the unit, the detail view's label, the help text and the source rule; the ORM column, the CSV reader and
    writer, the CLI options and the detail view are derived from it (figures.py), in field order (the CSV's).
    The figures with a default are keyword-only, so the ten without one stay positional in the same order."""

    name: str = field(
        metadata=figure(
            "name",
            Kind.TEXT,
            "",
            "name",
            "canonical name, e.g. 'GeForce RTX 4090'",
            "the name reports print",
            required=True,
            length=120,
            unique=True,
        )
    )
    aliases: tuple[str, ...] = field(
        default=(),
        kw_only=True,
        metadata=figure(
            "aliases",
            Kind.ALIASES,
            "",
            "also known as",
            "other names, separated by ';'",
            "names people use; short forms are derived (names.py)",
        ),
    )
    vendor: str = field(
        metadata=figure(
            "vendor",
            Kind.CHOICE,
            "",
            "vendor",
            "NVIDIA, AMD or Intel",
            "the chip's maker",
            required=True,
            choices=VENDORS,
            length=16,
        )
    )
    architecture: str = field(
        metadata=figure(
            "architecture",
            Kind.TEXT,
            "",
            "architecture",
            "e.g. Ada Lovelace",
            "the vendor's architecture name",
            required=True,
            length=40,
        )
    )
    segment: str = field(
        metadata=figure(
            "segment",
            Kind.CHOICE,
            "",
            "segment",
            "consumer, workstation or datacenter",
            "the vendor's product line",
            required=True,
            choices=SEGMENTS,
            length=16,
        )
    )
    launch_date: date | None = field(
        default=None,
        kw_only=True,
        metadata=figure(
            "launch_date",
            Kind.DATE,
            "",
            "launched",
            "YYYY-MM-DD",
            "release date (TechPowerUp or the vendor; datacenter: the announcement)",
        ),
    )
    memory_bytes: int = field(
        metadata=figure(
            "memory_gb",
            Kind.MEMORY,
            "GiB",
            "memory",
            "memory in the vendor's GB (= GiB)",
            "nominal capacity, the vendor's GB = GiB; unified memory: the part the GPU may use",
            required=True,
        )
    )
    memory_type: str = field(
        metadata=figure(
            "memory_type",
            Kind.TEXT,
            "",
            "memory type",
            "e.g. GDDR6X, HBM3",
            "the memory's generation",
            required=True,
            length=16,
        )
    )
    bus_width_bits: int | None = field(
        default=None,
        kw_only=True,
        metadata=figure(
            "bus_width_bits",
            Kind.WHOLE,
            "bit",
            "bus width",
            "memory bus width in bits",
            "board total (dual-GPU boards: both GPUs)",
            high=65_536,
        ),
    )
    bandwidth_gbs: float = field(
        metadata=figure(
            "bandwidth_gbs",
            Kind.RATE,
            "GB/s",
            "bandwidth",
            "memory bandwidth, decimal GB/s",
            "bus width / 8 x data rate, decimal GB/s",
            required=True,
        )
    )
    fp32_tflops: float = field(
        metadata=figure(
            "fp32_tflops",
            Kind.RATE,
            "TFLOPS",
            "FP32",
            "FP32 non-tensor TFLOPS",
            "FP32 on the ordinary units as the vendor counts it (RDNA 3/4: dual issue)",
            required=True,
        )
    )
    tf32_tflops: float | None = field(
        default=None,
        kw_only=True,
        metadata=figure("tf32_tflops", Kind.RATE, "TFLOPS", "TF32 tensor", "TF32 tensor TFLOPS, dense", _RATE_RULE),
    )
    fp16_tflops: float | None = field(
        default=None,
        kw_only=True,
        metadata=figure(
            "fp16_tflops", Kind.RATE, "TFLOPS", "FP16 tensor", "FP16 tensor TFLOPS (FP32 accumulate), dense", _RATE_RULE
        ),
    )
    bf16_tflops: float | None = field(
        default=None,
        kw_only=True,
        metadata=figure("bf16_tflops", Kind.RATE, "TFLOPS", "BF16 tensor", "BF16 tensor TFLOPS, dense", _RATE_RULE),
    )
    fp8_tflops: float | None = field(
        default=None,
        kw_only=True,
        metadata=figure("fp8_tflops", Kind.RATE, "TFLOPS", "FP8 tensor", "FP8 tensor TFLOPS, dense", _RATE_RULE),
    )
    int8_tops: float | None = field(
        default=None,
        kw_only=True,
        metadata=figure("int8_tops", Kind.RATE, "TOPS", "INT8 tensor", "INT8 tensor TOPS, dense", _RATE_RULE),
    )
    tdp_w: int = field(
        metadata=figure(
            "tdp_w",
            Kind.WHOLE,
            "W",
            "TDP",
            "board power in watts",
            "total board power of the reference board; datacenter: the SKU's configurable maximum",
            required=True,
            high=100_000,
        )
    )
    pcie_gen: int | None = field(
        default=None,
        kw_only=True,
        metadata=figure(
            "pcie_gen", Kind.WHOLE, "", "PCIe gen", "PCIe generation", "the host interface's generation", high=64
        ),
    )
    # GPUs on the board (K80, Titan Z, MI250X have two): the figures are board totals, and each GPU
    # sees memory_bytes / devices of memory, which is what decides whether a model fits.
    devices: int = field(
        default=1,
        kw_only=True,
        metadata=figure(
            "devices",
            Kind.WHOLE,
            "",
            "GPUs on the board",
            "GPUs on the board (default 1)",
            "GPUs sharing the board's figures",
            high=1024,
            since=2,
        ),
    )
    link_kind: str = field(
        default="none",
        kw_only=True,
        metadata=figure(
            "link_kind",
            Kind.CHOICE,
            "",
            "multi-card link",
            "none, sli, nvlink, infinity_fabric or xe_link",
            "the vendor's card-to-card link",
            choices=LINK_KINDS,
            length=16,
            since=2,
        ),
    )
    link_detail: str = field(
        default="",
        kw_only=True,
        metadata=figure(
            "link_detail",
            Kind.TEXT,
            "",
            "link detail",
            "bridge kind or link generation",
            "the bridge or link generation",
            length=60,
            since=2,
        ),
    )
    link_bandwidth_gbs: float | None = field(
        default=None,
        kw_only=True,
        metadata=figure(
            "link_bandwidth_gbs",
            Kind.RATE,
            "GB/s",
            "link bandwidth",
            "link bandwidth per card, GB/s",
            "both directions together per GPU, as the vendor quotes it",
            since=2,
        ),
    )
    msrp_usd: float | None = field(
        default=None,
        kw_only=True,
        metadata=figure(
            "msrp_usd",
            Kind.RATE,
            "USD",
            "launch MSRP",
            "launch price in USD",
            "the reference card's launch MSRP; becomes the first price, dated launch_date",
            high=1e9,
        ),
    )
    source: str = field(
        metadata=figure(
            "source",
            Kind.TEXT,
            "",
            "source",
            "where the figures come from",
            "keys of advisor/data/sources.csv, joined by '+'",
            required=True,
        )
    )
    # Unified-memory machines (GB10, Strix Halo, GH200): all the memory the GPU shares coherently with the
    # CPU, of which memory_bytes is the part the GPU may use for a model (advisor/data/README.md, "Unified
    # memory"). None for a card with its own memory only.
    unified_memory_bytes: int | None = field(
        default=None,
        kw_only=True,
        metadata=figure(
            "unified_memory_gb",
            Kind.MEMORY,
            "GiB",
            "unified memory",
            "unified-memory machines: all memory shared with the CPU (GiB)",
            "all memory shared coherently with the CPU; empty for a card with its own memory",
            since=4,
        ),
    )
    # Memory left for programs with ECC on, where the ECC bits take part of the memory itself: GDDR5/GDDR6
    # boards keep them in-band, 1/16 of the memory (NVIDIA, Tesla K40 board specification BD-06902-001_v05:
    # 12 GB, ~11.25 GB with ECC on). Empty where ECC costs no capacity (HBM's side-band ECC) or the card
    # has none. Which cards run with ECC on is ecc_on_by_default's rule.
    ecc_memory_bytes: int | None = field(
        default=None,
        kw_only=True,
        metadata=figure(
            "ecc_memory_gb",
            Kind.MEMORY,
            "GiB",
            "memory with ECC on",
            "memory usable with ECC on (GiB), where ECC takes memory",
            "15/16 of memory_gb for in-band ECC (GDDR5/GDDR6), the vendor's figure where it "
            "gives one; empty where ECC costs no memory",
            since=5,
        ),
    )


FIGURES: tuple[Figure, ...] = declared(CardSpec)


def ecc_on_by_default(spec: CardSpec) -> bool:
    """Datacenter boards ship with ECC on (NVIDIA's K40 board specification: "Tesla K40 boards ship with ECC
    enabled by default"); workstation and consumer boards with it off or without it, so their memory is the
    nominal figure unless the user turns ECC on."""
    return spec.segment == "datacenter"


def model_memory_bytes(spec: CardSpec) -> int:
    """The board memory a model may use as the card ships: with ECC on where it is on by default and its
    bits take memory (ecc_memory_bytes), else memory_bytes. Board total: each GPU gets / devices."""
    if spec.ecc_memory_bytes and ecc_on_by_default(spec):
        return min(spec.ecc_memory_bytes, spec.memory_bytes)  # a typed-in figure above the memory is not more
    return spec.memory_bytes


def missing_figures(spec: CardSpec) -> tuple[str, ...]:
    """The figures a card must state for ranking (it divides by the rates and compares memory): a name, and
    memory, bandwidth, FP32 rate and TDP above zero. Empty for a complete card."""
    checks = (
        ("name", bool(spec.name.strip())),
        ("memory_bytes", spec.memory_bytes > 0),
        ("bandwidth_gbs", spec.bandwidth_gbs > 0),
        ("fp32_tflops", spec.fp32_tflops > 0),
        ("tdp_w", spec.tdp_w > 0),
    )
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
