"""`advisor recommend SPEC`: every card of the catalog (and 2, 4, 8 of it) ranked for this workload."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import replace
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
from advisor.recommend.per_card import named_cost
from advisor.recommend.plans import Plan
from advisor.recommend.prepare import RankingInput, prepare_spec
from advisor.recommend.present import render_table, to_json
from advisor.recommend.ranking import RankingOptions
from advisor.recommend.recommendation import Recommendation
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
    options = RankingOptions(args.objective, args.budget, args.max_gpus, money=money)
    if getattr(args, "cards", None):  # recommend's --cards: that count only (report has no such option)
        options = replace(options, counts=(args.cards,))
    return cards, options


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
    parser.add_argument(
        "--cards", type=types.gpu_count, default=None, metavar="N", help="only configurations of N cards"
    )
    plans = [p.value for p in Plan if p is not Plan.INCOMPLETE]
    parser.add_argument(
        "--plan", choices=plans, default=None, help="only this plan; refused where it does not apply to the workload"
    )
    parser.set_defaults(func=run)


def _one_plan(args: argparse.Namespace, job: RankingInput, entries: list[Recommendation]) -> list[Recommendation]:
    """The entries of --cards N and --plan P; a plan that does not apply to this workload on those cards is
    refused as recommend.per_card.named_cost words it (exit 2), rather than answered by an empty table."""
    if args.plan is None:
        return [e for e in entries if args.cards is None or e.count == args.cards]
    counts = (args.cards,) if args.cards else tuple(c for c in RankingOptions().counts if c <= args.max_gpus)
    if not any(_applies(job, args.plan, count) for count in counts):
        named_cost(job.estimate, args.plan, counts[-1])  # raises the refusal (SpecError: exit 2)
    return [e for e in entries if e.plan == args.plan and (args.cards is None or e.count == args.cards)]


def _applies(job: RankingInput, plan: str, count: int) -> bool:
    try:
        named_cost(job.estimate, plan, count)
    except SpecError:
        return False
    return True


def run(args: argparse.Namespace) -> int:
    if args.cards is not None:
        args.max_gpus = max(args.max_gpus, args.cards)  # the card count asked for is ranked whatever --max-gpus says
    job, entries = ranked(args, "recommend", recommend)
    entries = _one_plan(args, job, entries)
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
