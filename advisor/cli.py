"""Which GPU to buy or rent for your neural network: does it fit, how fast, and the best value for money.

The `advisor` command: each subcommand lives in advisor/commands/<name>.py and configures its own parser.

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
# One line of help per subcommand. Each lives in advisor/commands/<name>.py, imported only when it is the
# one being run: importing them all (the estimator, the catalog, the PDF report, matplotlib) took 1.6 s.
SUBCOMMANDS: dict[str, str] = {
    "estimate": "memory and compute of one step",
    "recommend": "rank GPUs for a workload",
    "fit": "what to change so that a workload fits a GPU",
    "report": "write the recommendation as a PDF report",
    "catalog": "list, show and edit the GPU catalog",
    "monitor": "live readings of the local NVIDIA GPUs",
}


class OneLineParser(argparse.ArgumentParser):
    """argparse prints the whole usage on a mistake; we print the one line that says what is wrong."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def _asked_for(argv: Sequence[str]) -> str | None:
    """The subcommand the command line names: the first word that is not an option."""
    return next((word for word in argv if not word.startswith("-")), None)


def build_parser(argv: Sequence[str] = ()) -> argparse.ArgumentParser:
    """The whole command line; only the subcommand `argv` names gets its options (the others are listed)."""
    parser = OneLineParser(prog="advisor", description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--version", action="version", version=f"advisor {__version__}")
    parser.add_argument(
        "--self-check",
        action="store_true",
        help="check this installation (bundled catalog, one estimate, the window offscreen) and exit",
    )
    sub = parser.add_subparsers(dest="command", parser_class=OneLineParser)
    asked = _asked_for(argv)
    for name, help_text in SUBCOMMANDS.items():
        command = sub.add_parser(name, help=help_text)
        if name == asked:
            importlib.import_module(f"advisor.commands.{name}").register(command)
    gui = sub.add_parser("gui", help="open the desktop app (the same as `advisor` with no arguments)")
    gui.add_argument("--startup-time", action="store_true", help="print the time to the first window and exit")
    gui.set_defaults(func=run_gui)
    return parser


def run_gui(args: argparse.Namespace) -> int:
    from advisor.ui.app import main as app_main  # Qt is imported only when the app is opened

    return app_main(["advisor", "--startup-time"] if getattr(args, "startup_time", False) else ["advisor"])


def main(argv: Sequence[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(words)
    args, extra = parser.parse_known_args(words)
    if extra:  # parse_args let the top parser say it, as "advisor: error: ...", whichever subcommand it was
        where = f"advisor {args.command}" if args.command else "advisor"
        parser.exit(EXIT_USAGE, f"{where}: error: unrecognized arguments: {' '.join(extra)}\n")
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
