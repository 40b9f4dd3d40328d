"""The PDF report (File > Export PDF, `advisor report SPEC --out FILE.pdf`).

    ranking = rank_for_report(session, job, CardFilter(), RankingOptions(), top=10)   # content.py
    report = build_report(job, ranking, NvmlReader().read(), source="zoo:resnet50")
    path, pages = write_pdf("report.pdf", report, paper="a4", text=tr, fonts=fonts())   # pdf.py

Plain records in, a PDF out: the app's translation function and font families are passed in, so this
package uses QtGui and QtSvg but never the app's widgets or its catalogue (an import-linter contract).
"""

from advisor.report.content import DEFAULT_TOP, CardSource, Ranking, Report, build_report, rank_for_report
from advisor.report.output import ReportError, write_atomic
from advisor.report.pdf import PAPERS, default_paper, render_pdf, write_pdf

__all__ = [
    "DEFAULT_TOP",
    "PAPERS",
    "CardSource",
    "Ranking",
    "Report",
    "ReportError",
    "build_report",
    "default_paper",
    "rank_for_report",
    "render_pdf",
    "write_atomic",
    "write_pdf",
]
