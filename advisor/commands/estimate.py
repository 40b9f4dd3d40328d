"""`advisor estimate SPEC`: memory and compute of one training step or inference pass."""

from __future__ import annotations

import argparse
import json
from typing import Any, get_args

from advisor.commands import types
from advisor.core import zoo
from advisor.core.errors import SpecError
from advisor.core.formatting import render_text, to_json
from advisor.core.workload import Mode, OptimizerName, Precision, Workload
from advisor.estimating import METHODS, estimate_spec


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def add_workload_options(parser: argparse.ArgumentParser) -> None:
    """The options every command that estimates shares (estimate, recommend, report)."""
    parser.add_argument("spec", nargs="?", help="zoo:NAME, or a model file (see DESIGN.md); a FILE.py is Python "
                        "code and runs, every other file is read as data")
    parser.add_argument("--mode", choices=get_args(Mode), default="train")
    parser.add_argument("--batch", type=types.batch_size, default=32, help="samples per step (per card)")
    parser.add_argument("--seq-len", type=types.sequence_length, default=None, help="tokens per sample")
    parser.add_argument("--precision", choices=get_args(Precision), default="fp32")
    parser.add_argument("--optimizer", choices=get_args(OptimizerName), default="adam")
    parser.add_argument("--checkpointing", action="store_true", help="gradient checkpointing per block")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--method", choices=METHODS, default="auto",
                        help="auto: simulate PyTorch modules (FILE.py, torchvision:, timm:, hf:), else analytic")
    parser.add_argument("--trust-pickle", action="store_true",
                        help="let a model file run the code it carries: a whole pickled model (.pt/.pth), the "
                        "pickled parts of a .pt2, TorchScript code that reaches files; only for files you trust")


def workload_from(args: argparse.Namespace) -> Workload:
    return Workload(args.mode, args.batch, args.precision, args.optimizer, args.checkpointing)


def register(sub: Any) -> None:
    parser = sub.add_parser("estimate", help="memory and compute of one step")
    add_workload_options(parser)
    parser.add_argument("--list", action="store_true", help="list the built-in zoo models")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.list:
        print("\n".join(f"zoo:{name}" for name in zoo.zoo_names()))
        return 0
    if not args.spec:
        raise SpecError("a model SPEC is required (e.g. zoo:resnet50)")
    result = estimate_spec(args.spec, workload_from(args), seq_len=args.seq_len, trust_pickle=args.trust_pickle,
                           method=args.method)
    if args.json:
        print(json.dumps(to_json(result), indent=1))
    else:
        print(render_text(result), end="")
    return 0
