"""`advisor monitor [--json] [--watch SECONDS]`: what the NVIDIA cards in this machine are doing now.

One gpustat-like line a card, or one JSON object ({"devices": [...], "message": ...}). Without an NVIDIA GPU
the list is empty, the message says why, and the exit code is still 0: no GPU is a fact, not a mistake.
With --watch the readings repeat every SECONDS until Ctrl-C (with --json: one object a line, JSON Lines).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from datetime import datetime

from advisor.commands import types
from advisor.telemetry.nvml import NvmlReader
from advisor.telemetry.present import gpustat_line
from advisor.telemetry.readings import Reader, Snapshot

CLEAR_SCREEN = "\x1b[H\x1b[2J"


def positive_count(text: str) -> int:
    value = int(text) if text.isdigit() else 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number of at least 1, got {text!r}")
    return value


def register(parser: argparse.ArgumentParser) -> None:
    """Configures the subcommand's parser, which advisor/cli.py made (with its one-line help)."""
    parser.add_argument("--json", action="store_true", help="print JSON (one object a line with --watch)")
    parser.add_argument("--watch", type=types.seconds, metavar="SECONDS", help="repeat every SECONDS")
    # Bounds --watch for tests and scripts; not shown in --help.
    parser.add_argument("--count", type=positive_count, default=None, help=argparse.SUPPRESS)
    parser.set_defaults(func=run)


def open_reader() -> Reader:
    """The reader `run` uses; tests replace it with a FakeReader."""
    return NvmlReader()


def render(snapshot: Snapshot, as_json: bool, watching: bool) -> str:
    if as_json:
        # One line per object while watching, so that a consumer can read it line by line.
        return json.dumps(snapshot.to_json(), indent=None if watching else 1)
    stamp = datetime.fromtimestamp(snapshot.timestamp or time.time()).strftime("%Y-%m-%d %H:%M:%S")
    header = f"{stamp}  driver {snapshot.driver_version or 'n/a'}"
    lines = [gpustat_line(device) for device in snapshot.devices]
    if snapshot.message:
        lines.append(snapshot.message)
    return "\n".join([header, *lines])


def run(args: argparse.Namespace) -> int:
    reader = open_reader()
    watching = args.watch is not None
    count = args.count if watching else 1
    clear = watching and not args.json and sys.stdout.isatty()
    shown = 0
    try:
        while count is None or shown < count:
            if shown:
                time.sleep(args.watch)
            text = render(reader.read(), args.json, watching)
            print(f"{CLEAR_SCREEN}{text}" if clear else text, flush=True)
            shown += 1
    except KeyboardInterrupt:
        pass  # Ctrl-C is how --watch is meant to end
    finally:
        reader.close()
    return 0
