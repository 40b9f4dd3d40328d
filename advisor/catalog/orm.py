"""SQLAlchemy 2.0 typed ORM tables of the catalog. Private to advisor/catalog: callers get records.

`origin` is "bundled" for rows that came from advisor/data/ and "user" for rows the user added or edited; a re-seed
from newer bundled data only ever touches bundled rows.
"""

from __future__ import annotations

import datetime as _dt
from datetime import date

from sqlalchemy import BigInteger, Date, Float, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

BUNDLED = "bundled"
USER = "user"


class Base(DeclarativeBase):
    pass


class Meta(Base):
    """Key/value facts about the database itself, e.g. the hash of the bundled data it was seeded from."""

    __tablename__ = "meta"
    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[str] = mapped_column(Text)


class Card(Base):
    __tablename__ = "cards"
    __table_args__ = (
        Index("ix_cards_vendor_segment", "vendor", "segment"),
        Index("ix_cards_memory_bytes", "memory_bytes"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(120), unique=True)
    vendor: Mapped[str] = mapped_column(String(16))
    architecture: Mapped[str] = mapped_column(String(40))
    segment: Mapped[str] = mapped_column(String(16))
    launch_date: Mapped[date | None] = mapped_column(Date)
    # BigInteger: 80 GiB does not fit PostgreSQL's 32-bit INTEGER (SQLite's INTEGER is 64-bit either way).
    memory_bytes: Mapped[int] = mapped_column(BigInteger)
    memory_type: Mapped[str] = mapped_column(String(16))
    bus_width_bits: Mapped[int | None] = mapped_column(Integer)
    bandwidth_gbs: Mapped[float] = mapped_column(Float)
    fp32_tflops: Mapped[float] = mapped_column(Float)
    tf32_tflops: Mapped[float | None] = mapped_column(Float)
    fp16_tflops: Mapped[float | None] = mapped_column(Float)
    bf16_tflops: Mapped[float | None] = mapped_column(Float)
    fp8_tflops: Mapped[float | None] = mapped_column(Float)
    int8_tops: Mapped[float | None] = mapped_column(Float)
    tdp_w: Mapped[int] = mapped_column(Integer)
    pcie_gen: Mapped[int | None] = mapped_column(Integer)
    # Added in schema version 2 (see migrations.py): GPUs per board and the multi-card link.
    devices: Mapped[int] = mapped_column(Integer, default=1, server_default="1")
    link_kind: Mapped[str] = mapped_column(String(16), default="none", server_default="none")
    link_detail: Mapped[str] = mapped_column(String(60), default="", server_default="")
    link_bandwidth_gbs: Mapped[float | None] = mapped_column(Float)
    msrp_usd: Mapped[float | None] = mapped_column(Float)
    source: Mapped[str] = mapped_column(Text)
    # Added in schema version 4: the shared memory of a unified-memory machine (records.CardSpec).
    unified_memory_bytes: Mapped[int | None] = mapped_column(BigInteger)
    origin: Mapped[str] = mapped_column(String(8), default=BUNDLED)

    aliases: Mapped[list[Alias]] = relationship(back_populates="card", cascade="all, delete-orphan")
    prices: Mapped[list[Price]] = relationship(back_populates="card", cascade="all, delete-orphan")


class Alias(Base):
    """Another name a card is found by, stored normalized (see names.normalize)."""

    __tablename__ = "aliases"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    card_id: Mapped[int] = mapped_column(ForeignKey("cards.id", ondelete="CASCADE"), index=True)
    alias: Mapped[str] = mapped_column(String(120), unique=True)
    display: Mapped[str] = mapped_column(String(120))
    origin: Mapped[str] = mapped_column(String(8), default=BUNDLED)
    card: Mapped[Card] = relationship(back_populates="aliases")


class Price(Base):
    __tablename__ = "prices"
    __table_args__ = (Index("ix_prices_card_date", "card_id", "date"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    card_id: Mapped[int] = mapped_column(ForeignKey("cards.id", ondelete="CASCADE"))
    amount: Mapped[float] = mapped_column(Float)
    currency: Mapped[str] = mapped_column(String(3))
    date: Mapped[date] = mapped_column(Date)
    # Added in schema version 2: before it every price was a new-card price.
    condition: Mapped[str] = mapped_column(String(16), default="new", server_default="new")
    source: Mapped[str] = mapped_column(Text)
    # Added in schema version 3: what the price buys (purchase / rent_hour), where it was seen, and the
    # source's address and the day it was read (records.KINDS, records.MARKETS).
    kind: Mapped[str] = mapped_column(String(16), default="purchase", server_default="purchase")
    market: Mapped[str] = mapped_column(String(24), default="retail", server_default="retail")
    source_url: Mapped[str] = mapped_column(Text, default="", server_default="")
    source_read_date: Mapped[_dt.date | None] = mapped_column(Date)
    origin: Mapped[str] = mapped_column(String(8), default=BUNDLED)
    card: Mapped[Card] = relationship(back_populates="prices")
