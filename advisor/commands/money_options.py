"""The money options every ranking command shares: --price-basis, --software, --samples/--tokens, --kwh-usd."""

from __future__ import annotations

import argparse

from advisor.catalog.software import parse_software
from advisor.commands.types import argument, choices_of, positive_number
from advisor.recommend.money import BASES, DEFAULT_KWH_USD, MoneyOptions, PriceBasis

# A job of up to 10^18 samples or tokens (far past any training run); electricity up to 100 USD per kWh.
job_size = positive_number(1e18)
kwh_price = positive_number(100.0, " USD per kWh")


def add_money_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--price-basis",
        choices=choices_of(BASES),
        default=PriceBasis.NEW,
        help="rank on the price of a new card, a used one, rent per GPU-hour, or the lowest "
        "purchase price (default: new)",
    )
    parser.add_argument(
        "--software",
        type=argument(parse_software),
        default=None,
        metavar="cuda|rocm|xpu|gaudi",
        help="only cards PyTorch runs through this software path",
    )
    size = parser.add_mutually_exclusive_group()
    size.add_argument(
        "--samples",
        type=job_size,
        default=None,
        metavar="N",
        help="the whole job's samples: adds its hours, its cost and the buy-or-rent break-even",
    )
    size.add_argument(
        "--tokens",
        type=job_size,
        default=None,
        metavar="N",
        help="the whole job's tokens (sequence models), instead of --samples",
    )
    parser.add_argument(
        "--kwh-usd",
        type=kwh_price,
        default=DEFAULT_KWH_USD,
        metavar="USD",
        help=f"electricity price per kWh for bought cards (default {DEFAULT_KWH_USD}: U.S. "
        "average commercial price, EIA 2024)",
    )


def money_options(args: argparse.Namespace, basis: PriceBasis) -> MoneyOptions:
    """The options' money part (each value already checked by its argparse type)."""
    return MoneyOptions(basis, args.samples, args.tokens, args.kwh_usd)
