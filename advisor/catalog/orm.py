"""SQLAlchemy 2.0 typed ORM tables of the catalog. Private to advisor/catalog: callers get records.

`origin` is "bundled" for rows that came from advisor/data/ and "user" for rows the user added or edited; a re-seed
from newer bundled data only ever touches bundled rows.
"""

from __future__ import annotations

import datetime as _dt
from datetime import date
from typing import Any

from sqlalchemy import BigInteger, Column, Date, Float, ForeignKey, Index, Integer, String, Table, Text
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship
from sqlalchemy.types import TypeEngine

from advisor.catalog.figures import Figure, Kind
from advisor.catalog.records import FIGURES

BUNDLED = "bundled"
USER = "user"


class Base(DeclarativeBase):
    pass


class Meta(Base):
    """Key/value facts about the database itself, e.g. the hash of the bundled data it was seeded from."""

    __tablename__ = "meta"
    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[str] = mapped_column(Text)


def _column_type(item: Figure) -> TypeEngine[Any]:
    match item.kind:
        case Kind.TEXT | Kind.CHOICE:
            return String(item.length) if item.length else Text()
        case Kind.DATE:
            return Date()
        case Kind.RATE:
            return Float()
        case Kind.WHOLE:
            return Integer()
        case Kind.MEMORY:
            # BigInteger: 80 GiB does not fit PostgreSQL's 32-bit INTEGER (SQLite's INTEGER is 64-bit).
            return BigInteger()
        case Kind.ALIASES:
            raise ValueError(f"{item.field} lives in the aliases table, not a column")


def figure_column(item: Figure) -> Column[Any]:
    """A card figure's column, derived from its declaration (records.CardSpec): NULL where the field's
    default is None, else NOT NULL with the default as the server default (what migrations add)."""
    default = None if item.default is None else str(item.default)
    return Column(
        item.field,
        _column_type(item),
        nullable=not item.required and default is None,
        unique=item.unique,
        default=item.default,
        server_default=default,
    )


FIGURE_COLUMNS: tuple[str, ...] = tuple(f.field for f in FIGURES if f.kind is not Kind.ALIASES)


class Card(Base):
    """The figure columns are derived from records.FIGURES; the annotations below only type the attributes
    that code names directly (a new figure needs none: it is read and written by name)."""

    __table__ = Table(
        "cards",
        Base.metadata,
        Column("id", Integer, primary_key=True),
        *(figure_column(f) for f in FIGURES if f.kind is not Kind.ALIASES),
        Column("origin", String(8), nullable=False, default=BUNDLED),
        Index("ix_cards_vendor_segment", "vendor", "segment"),
        Index("ix_cards_memory_bytes", "memory_bytes"),
    )

    id: Mapped[int]
    name: Mapped[str]
    vendor: Mapped[str]
    segment: Mapped[str]
    launch_date: Mapped[date | None]
    memory_bytes: Mapped[int]
    bandwidth_gbs: Mapped[float]
    fp32_tflops: Mapped[float]
    fp16_tflops: Mapped[float | None]
    bf16_tflops: Mapped[float | None]
    tdp_w: Mapped[int]
    msrp_usd: Mapped[float | None]
    source: Mapped[str]
    origin: Mapped[str]

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
