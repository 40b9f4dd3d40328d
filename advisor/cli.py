"""The `advisor` command. Each subcommand lives in advisor/commands/<name>.py and registers itself here.

User mistakes (AdvisorError, bad options) print one line and exit with code 2; never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from typing import NoReturn

from advisor import __version__
from advisor.core.errors import AdvisorError

EXIT_USAGE = 2
SUBCOMMANDS = ("estimate", "recommend", "fit", "report", "catalog", "monitor")


class OneLineParser(argparse.ArgumentParser):
    """argparse prints the whole usage on a mistake; we print the one line that says what is wrong."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="advisor", description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--version", action="version", version=f"advisor {__version__}")
    parser.add_argument("--self-check", action="store_true",
                        help="check this installation (bundled catalog, one estimate, the window offscreen) and exit")
    sub = parser.add_subparsers(dest="command", parser_class=OneLineParser)
    for name in SUBCOMMANDS:
        importlib.import_module(f"advisor.commands.{name}").register(sub)
    gui = sub.add_parser("gui", help="open the desktop app (the same as `advisor` with no arguments)")
    gui.add_argument("--startup-time", action="store_true", help="print the time to the first window and exit")
    gui.set_defaults(func=run_gui)
    return parser


def run_gui(args: argparse.Namespace) -> int:
    from advisor.ui.app import main as app_main  # Qt is imported only when the app is opened

    return app_main(["advisor", "--startup-time"] if getattr(args, "startup_time", False) else ["advisor"])


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.self_check:
        from advisor.selfcheck import run

        return run()
    if args.command is None:
        return run_gui(args)
    try:
        result: int = args.func(args)
    except AdvisorError as error:
        print(f"advisor {args.command}: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        return 0
    return result


if __name__ == "__main__":
    raise SystemExit(main())
