"""`advisor fit SPEC --gpu NAME`: what to change so that the workload fits that card, each change measured."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable

from advisor.catalog import find_card, open_catalog
from advisor.catalog.records import CardRecord
from advisor.catalog.variants import variant_note
from advisor.commands.estimate import add_workload_options, workload_from
from advisor.core.errors import AdvisorError, SpecError
from advisor.core.graph import Graph
from advisor.importers.spec_estimate import choose_method, simulator
from advisor.importers.spec_graph import load_graph
from advisor.importers.stored_estimate import as_stored
from advisor.recommend.fit.measure import Subject, target
from advisor.recommend.fit.present import render_text, to_json
from advisor.recommend.fit.search import make_it_fit


def register(parser: argparse.ArgumentParser) -> None:
    """Configures the subcommand's parser, which advisor/cli.py made (with its one-line help)."""
    add_workload_options(parser)
    parser.add_argument("--gpu", required=True, metavar="NAME", help="the card, by name or alias")
    parser.add_argument(
        "--allow-8bit",
        action="store_true",
        help="consider 8-bit optimizer state (bitsandbytes); modelled, not simulated",
    )
    parser.add_argument("--catalog", metavar="PATH", default=None, help="catalog database to use")
    parser.set_defaults(func=run)


def _card(name: str, path: str | None) -> CardRecord:
    catalog = open_catalog(path)
    for message in catalog.messages:  # e.g. a damaged file rebuilt: said once, as recommend and catalog do
        print(f"advisor fit: {message}", file=sys.stderr)
    try:
        with catalog.read() as session:
            card = find_card(session, name)
            note = variant_note(session, name)
            if note:
                print(f"advisor fit: {note}", file=sys.stderr)
            return card
    finally:
        catalog.close()


def subject_for(spec: str, args: argparse.Namespace) -> Subject:
    """The graph for analytic changes; for PyTorch modules (unless --method analytic) also the simulator,
    which then measures every change of the workload itself (batch, precision, optimizer, checkpointing)."""
    trust = args.trust_pickle
    graph = load_graph(spec, args.seq_len, trust_pickle=trust)
    tokens = graph.tokens_per_sample
    seq_len = tokens if tokens > 1 else None
    # a GGUF file or a quantized Hub checkpoint runs as it is stored, as `estimate` and `recommend` run it
    # (spec_estimate.spec_estimator); fitting from the precision's dtype judged another workload (issue 27)
    workload = as_stored(workload_from(args), graph.decoder.stored if graph.decoder else None)[0]
    simulated = choose_method(spec, args.method, workload) == "simulated"
    simulate = simulator(spec, args.seq_len, trust) if simulated else None
    return Subject(graph, workload, seq_len, _rebuild(spec, trust) if seq_len else None, simulate)


def _rebuild(spec: str, trust: bool) -> Callable[[int], Graph]:
    def build(seq_len: int) -> Graph:
        graph = load_graph(spec, seq_len, trust_pickle=trust)
        if graph.tokens_per_sample != seq_len:  # a file with a fixed length (a saved network, an ONNX graph)
            raise AdvisorError(f"{spec}: its sequence length is fixed")
        return graph

    return build


def run(args: argparse.Namespace) -> int:
    if not args.spec:
        raise SpecError("a model SPEC is required (e.g. zoo:gpt2-medium)")
    card = _card(args.gpu, args.catalog)  # an unknown name fails here, before any estimate
    report = make_it_fit(subject_for(args.spec, args), target(card), allow_8bit=args.allow_8bit)
    if args.json:
        print(json.dumps(to_json(report), indent=1))
    else:
        print(render_text(report), end="")
    return 0
