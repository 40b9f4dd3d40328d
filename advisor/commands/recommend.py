"""`advisor recommend SPEC`: every card of the catalog (and 2, 4, 8 of it) ranked for this workload."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import TypeVar

from sqlalchemy.orm import Session

from advisor.catalog import SEGMENTS, VENDORS, open_catalog
from advisor.catalog.figures import choice
from advisor.commands import types
from advisor.commands.estimate import add_workload_options, workload_from
from advisor.commands.money_options import add_money_options, money_options
from advisor.core import jsontext
from advisor.core.errors import SpecError
from advisor.recommend.money import budget_caps
from advisor.recommend.objectives import Objective
from advisor.recommend.prepare import RankingInput, prepare_spec
from advisor.recommend.present import render_table, to_json
from advisor.recommend.ranking import RankingOptions
from advisor.recommend.service import CardFilter, recommend

T = TypeVar("T")


def add_ranking_options(parser: argparse.ArgumentParser, top: int = 25) -> None:
    """The filters and objective every command that ranks cards shares (recommend, report)."""
    parser.add_argument("--budget", type=types.money, default=None, metavar="USD", help="most you will pay in all")
    parser.add_argument("--max-gpus", type=types.gpu_count, default=8, metavar="N")
    parser.add_argument("--objective", choices=types.choices_of(Objective), default=Objective.PERF_PER_DOLLAR)
    parser.add_argument("--vendor", type=types.argument(choice(VENDORS)), default=None, help=", ".join(VENDORS))
    parser.add_argument("--segment", choices=SEGMENTS, default=None)
    parser.add_argument("--min-memory", type=types.memory_gib, default=None, metavar="GB", help="per card, GiB")
    parser.add_argument("--used", action="store_true", help="same as --price-basis lowest")
    add_money_options(parser)
    parser.add_argument("--top", type=types.row_count, default=top, help="rows in the table")
    parser.add_argument("--catalog", metavar="PATH", default=None, help="catalog database to use")


def ranking_request(args: argparse.Namespace) -> tuple[CardFilter, RankingOptions]:
    if not args.spec:
        raise SpecError("a model SPEC is required (e.g. zoo:resnet50)")
    cards = CardFilter(
        args.vendor,
        args.segment,
        int(args.min_memory * 2**30) if args.min_memory else None,
        args.used,
        args.price_basis,
        args.software,
    )
    money = money_options(args, cards.basis)
    if args.budget is not None and not budget_caps(money):
        # a rent has no total without a job size, so the budget capped nothing and was ignored without a word
        raise SpecError("--budget: with --price-basis rent it caps the job's cost; give --samples N or --tokens N")
    return cards, RankingOptions(args.objective, args.budget, args.max_gpus, money=money)


def ranked(
    args: argparse.Namespace, command: str, rank: Callable[[Session, RankingInput, CardFilter, RankingOptions], T]
) -> tuple[RankingInput, T]:
    """What `recommend` and `report` share: the job from the SPEC, then `rank` on the catalog's cards (the
    catalog's own messages, e.g. a repaired file, go to stderr)."""
    cards, options = ranking_request(args)
    job = prepare_spec(
        args.spec, workload_from(args), seq_len=args.seq_len, trust_pickle=args.trust_pickle, method=args.method
    )
    catalog = open_catalog(args.catalog)
    for message in catalog.messages:
        print(f"advisor {command}: {message}", file=sys.stderr)
    try:
        with catalog.read() as session:
            return job, rank(session, job, cards, options)
    finally:
        catalog.close()


def register(parser: argparse.ArgumentParser) -> None:
    """Configures the subcommand's parser, which advisor/cli.py made (with its one-line help)."""
    add_workload_options(parser)
    add_ranking_options(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    job, entries = ranked(args, "recommend", recommend)
    if args.json:
        # jsontext: a non-finite figure (a price of 1e308 in an old catalog) is null, never `Infinity`.
        print(
            jsontext.dumps(
                {"model": job.estimate.model, "objective": args.objective, "recommendations": to_json(entries)},
                indent=1,
            )
        )
    else:
        print(render_table(entries, args.top), end="")
    return 0
