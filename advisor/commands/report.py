"""`advisor report SPEC --out FILE.pdf`: the estimate, the ranked cards and the local GPUs as a PDF that
stands on its own (for whoever pays for the card).

Takes the options of `advisor recommend` (workload, filters, objective, --top), plus the language and paper.
The PDF is drawn with QtGui on an offscreen QGuiApplication; no window opens.
"""

from __future__ import annotations

import argparse
import json

from advisor.commands import types
from advisor.commands.estimate import add_workload_options
from advisor.commands.recommend import add_ranking_options, ranked
from advisor.report import DEFAULT_TOP, PAPERS, build_report, default_paper, rank_for_report, write_pdf
from advisor.report.pdf import ensure_gui_application
from advisor.telemetry.readings import Snapshot

LANGUAGES = ("en", "zh_CN")


def register(parser: argparse.ArgumentParser) -> None:
    """Configures the subcommand's parser, which advisor/cli.py made (with its one-line help)."""
    add_workload_options(parser)
    add_ranking_options(parser, top=DEFAULT_TOP)
    parser.add_argument("--out", required=True, type=types.pdf_file, metavar="FILE.pdf", help="where to write the PDF")
    parser.add_argument("--lang", choices=LANGUAGES, default=None, help="default: the system's language")
    parser.add_argument(
        "--paper", choices=tuple(PAPERS), default=None, help="default: letter in the US and Canada, else a4"
    )
    parser.add_argument(
        "--no-local-gpus",
        action="store_true",
        help="leave out this computer's GPUs (a report made on a server for someone else)",
    )
    parser.set_defaults(func=run)


def local_gpus() -> Snapshot:
    from advisor.telemetry.nvml import NvmlReader

    reader = NvmlReader()
    try:
        return reader.read()  # never raises: no driver or no card gives a snapshot that says so
    finally:
        reader.close()


def run(args: argparse.Namespace) -> int:
    job, ranking = ranked(
        args, "report", lambda session, job, cards, options: rank_for_report(session, job, cards, options, args.top)
    )
    report = build_report(job, ranking, None if args.no_local_gpus else local_gpus(), args.spec)
    ensure_gui_application()
    from PySide6.QtCore import QLocale

    from advisor.i18n import fonts_for, locale_language, translator

    language = args.lang or locale_language(QLocale.system().name())
    paper = args.paper or default_paper()
    path, pages = write_pdf(args.out, report, paper, translator(language), fonts_for(language))
    if args.json:
        print(json.dumps({"path": str(path), "pages": pages, "language": language, "paper": paper}))
    else:
        print(f"wrote {path} ({pages} pages, {paper}, {language})")
    return 0
