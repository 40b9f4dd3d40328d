"""Argument types for the command line: a bad value stops at the parser with one line, exit code 2.

One definition per kind of value, shared by every subcommand (issue 16, item 9-10): NaN and infinity are
refused everywhere (`float("nan")` parses, and every comparison with it is False, so it slipped past `> 0`
checks), and each count has a ceiling well above any real workload, so a typo cannot start hours of work.
"""

from __future__ import annotations

import argparse
import math
import re
from collections.abc import Callable, Iterable
from enum import StrEnum
from typing import TypeVar

T = TypeVar("T")

# Ceilings, each far above what a real job asks for, far below what would make the arithmetic or the
# search unbounded: 2**24 samples per card per step, 2**22 tokens of context (4M, past every published
# context window), 64 cards (eight 8-GPU servers; the plans model data-parallel and sharded training on them).
MAX_BATCH = 2**24
MAX_SEQ_LEN = 2**22
MAX_GPUS = 64
ISO_CURRENCY = re.compile(r"[A-Z]{3}")


def whole_number(low: int, high: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be from {low} to {high:,}, got {text}")
        return value

    return parse


def positive_number(high: float, unit: str = "") -> Callable[[str], float]:
    """A finite number above 0 and at most `high` (NaN and infinity refused)."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number{unit}, got {text!r}") from None
        if not (math.isfinite(value) and 0 < value <= high):
            raise argparse.ArgumentTypeError(f"must be more than 0 and at most {high:,g}{unit}, got {text}")
        return value

    return parse


def argument(parse: Callable[[str], T]) -> Callable[[str], T]:
    """A parser of the layers below (ValueError says why not) as an argparse type: its reason becomes the
    one line "argument --x: why", where argparse would print "invalid parse value: 'y'"."""

    def checked(text: str) -> T:
        try:
            return parse(text)
        except ValueError as error:
            raise argparse.ArgumentTypeError(str(error)) from None

    return checked


def choices_of(vocabulary: Iterable[StrEnum]) -> list[str]:
    """The values an option over an enum takes, for argparse's `choices`: its help and usage show them as
    {a,b,c}, and a wrong value stops with "argument --x: invalid choice: 'y' (choose from 'a', 'b', 'c')",
    exit code 2. One spelling for every enum option, in the enum's order."""
    return [member.value for member in vocabulary]


def file_ending(suffix: str, what: str, dash: bool = False) -> Callable[[str], str]:
    """A file name that ends in `suffix` (any case), or '-' for stdout where `dash`: `report --out x.txt`
    wrote a PDF under a text file's name, and `catalog import cards.json` read JSON as CSV, which failed on
    its first row ("missing column(s) ...") rather than on the file's kind."""

    def parse(text: str) -> str:
        if (dash and text == "-") or text.lower().endswith(suffix):
            return text
        raise argparse.ArgumentTypeError(f"{text!r}: {what}; give a file name ending in {suffix}")

    return parse


def currency_code(text: str) -> str:
    code = text.strip().upper()
    if not ISO_CURRENCY.fullmatch(code):
        raise argparse.ArgumentTypeError(f"expected a three-letter ISO 4217 code such as USD or EUR, got {text!r}")
    return code


batch_size = whole_number(1, MAX_BATCH)
sequence_length = whole_number(1, MAX_SEQ_LEN)
gpu_count = whole_number(1, MAX_GPUS)
layer_count = whole_number(0, 10_000)  # llama.cpp -ngl: 0 keeps every layer on the CPU
row_count = whole_number(1, 100_000)
memory_gib = positive_number(2.0**20, " GiB")  # 1 PiB per card
money = positive_number(1e12)
seconds = positive_number(86_400.0, " s")  # a day between readings
pdf_file = file_ending(".pdf", "the report is a PDF")
csv_file = file_ending(".csv", "cards and prices are read as CSV")
csv_output = file_ending(".csv", "the catalog is written as CSV", dash=True)
