"""Every ranked row of the PDF says how PyTorch runs its card, as the command line's SW column and the app's
Software column do."""

from __future__ import annotations

from pathlib import Path

from report_support import make_report, pdf_text, words

from advisor.core.workload import Workload
from advisor.recommend.ranking import RankingOptions
from advisor.recommend.service import CardFilter
from advisor.report import write_pdf
from advisor.report.card_pages import _overheads
from advisor.ui.i18n import set_language, tr


def test_the_pdf_names_rocm_beside_an_amd_card(catalog_path: Path, tmp_path: Path) -> None:
    report = make_report(
        catalog_path,
        cards=CardFilter(vendor="AMD", segment="datacenter"),
        options=RankingOptions(counts=(1,)),
        gpus=False,
    )
    rows = report.ranking.rows
    assert rows and {r.software for r in rows} == {"ROCm"}
    path, _pages = write_pdf(tmp_path / "amd.pdf", report)
    text = words(pdf_text(path))
    assert text.count("one card, ROCm") == len(rows)  # one per row: "1 x one card, ROCm" below each card


def test_the_usable_memory_assumption_names_each_vendors_context_in_english_and_chinese() -> None:
    english = " ".join(_overheads(Workload(), str))
    # the CUDA context is what was measured; AMD's and Intel's cards lose the same to their own runtimes'
    assert "the CUDA context with cuBLAS/cuDNN" in english
    assert "the HIP context on AMD and Level Zero's on Intel included" in english
    set_language("zh_CN")
    try:
        chinese = " ".join(_overheads(Workload(), tr))
    finally:
        set_language("en")
    assert "AMD 上的 HIP 上下文和 Intel 上的 Level Zero 上下文" in chinese and "HIP context" not in chinese
