"""Bad input on the command line: exit code 2 and exactly one line on stderr, never a traceback (issue 16).

The CLI runs in-process (advisor.cli.main with argv, stderr captured), so each case costs milliseconds."""

from __future__ import annotations

from pathlib import Path

import pytest

from advisor import cli

Outcome = tuple[int, str]


@pytest.fixture(autouse=True)
def _private_catalog(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ADVISOR_CATALOG", str(tmp_path / "catalog.sqlite3"))


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> Outcome:
    try:
        code = cli.main(argv)
    except SystemExit as exit_:  # argparse's own errors
        code = exit_.code if isinstance(exit_.code, int) else 1
    return code, capsys.readouterr().err


def assert_one_line_error(outcome: Outcome) -> None:
    code, err = outcome
    assert code == 2, err
    assert err.count("\n") == 1 and "Traceback" not in err, err


def test_estimate_without_spec_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    outcome = run(["estimate"], capsys)
    assert_one_line_error(outcome)
    assert "SPEC is required" in outcome[1]
