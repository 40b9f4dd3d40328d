"""`advisor report SPEC --out FILE.pdf`: the options of recommend, --lang, --paper; errors as one line, exit 2."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from report_support import pdf_text, poppler, words

from advisor.cli import main
from advisor.report.tounicode import fix_to_unicode


def test_report_command_writes_a_letter_pdf(
    catalog_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "resnet.pdf"
    code = main(
        [
            "report",
            "zoo:resnet50",
            "--batch",
            "16",
            "--objective",
            "fastest",
            "--max-gpus",
            "2",
            "--top",
            "5",
            "--catalog",
            str(catalog_path),
            "--lang",
            "en",
            "--paper",
            "letter",
            "--no-local-gpus",
            "--out",
            str(out),
            "--json",
        ]
    )
    assert code == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == {"path": str(out), "pages": printed["pages"], "language": "en", "paper": "letter"}
    assert "612 x 792" in poppler("pdfinfo", out)
    text = words(pdf_text(out))
    assert "Ranked by highest throughput" in text and "1 to 2 cards" in text
    assert "The local GPUs were not read." in text


def test_report_command_looks_at_the_local_gpus(catalog_path: Path, tmp_path: Path) -> None:
    out = tmp_path / "mlp.pdf"
    assert main(["report", "zoo:resnet18", "--catalog", str(catalog_path), "--lang", "en", "--out", str(out)]) == 0
    text = words(pdf_text(out))
    assert "No NVIDIA GPU found" in text or "NVIDIA driver" in text  # whichever this machine has


def test_unwritable_path_is_one_line_and_exit_2(catalog_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        ["report", "zoo:resnet18", "--catalog", str(catalog_path), "--no-local-gpus", "--out", "/proc/report.pdf"]
    )
    assert code == 2
    err = capsys.readouterr().err
    assert err.startswith("advisor report: error: cannot write /proc/report.pdf") and err.count("\n") == 1


def test_missing_spec_and_bad_paper(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["report", "--out", str(tmp_path / "x.pdf")]) == 2
    assert "a model SPEC is required" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_info:
        main(["report", "zoo:resnet18", "--paper", "a3", "--out", str(tmp_path / "x.pdf")])
    assert exit_info.value.code == 2
    assert not os.listdir(tmp_path)


def test_radicals_in_the_to_unicode_table_become_ideographs() -> None:
    cmap = (
        b"/CMapName /Adobe-Identity-UCS def\n2 beginbfrange\n<0001> <0003> [<0048> <2F50> <2EDA> ]\n"
        b"<2F50> <2F50> <2F50>\nendbfrange\n1 beginbfchar\n<2F00> <2F00>\nendbfchar\nendcmap"
    )
    fixed = fix_to_unicode(b"%PDF " + cmap, ("Noto Sans CJK SC", "DejaVu Sans"))
    assert len(fixed) == len(cmap) + 5  # byte offsets of everything after stay valid
    assert b"[<0048> <6BD4> <9875> ]" in fixed  # 比 and 页, not the radicals ⽐ and ⻚
    assert b"<2F50> <2F50> <6BD4>" in fixed  # source codes (glyph ids) are left alone
    assert b"<2F00> <4E00>" in fixed  # ⼀ -> 一


def test_the_report_package_loads_no_widgets() -> None:
    """DESIGN: PySide6 widgets only in advisor/ui; the report uses QtGui and QtSvg (import-linter cannot name a
    subpackage of PySide6, so this checks it)."""
    code = (
        "import sys, advisor.report, advisor.report.pdf, advisor.commands.report; "
        "sys.exit('PySide6.QtWidgets' in sys.modules or 'advisor.ui.main_window' in sys.modules)"
    )
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0
