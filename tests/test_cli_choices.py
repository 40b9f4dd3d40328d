"""Every option over a vocabulary (an enum) offers the same words in its help and names them all when a word
is wrong: one helper, commands/types.choices_of, spells the choices for every such option."""

from __future__ import annotations

import argparse
import contextlib
import io

import pytest

from advisor import cli
from advisor.commands.types import choices_of
from advisor.core.workload import Mode, Precision

ESTIMATING = ("estimate", "recommend", "fit", "report")


def subparser(name: str) -> argparse.ArgumentParser:
    parser = cli.build_parser([name])
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    chosen: argparse.ArgumentParser = sub.choices[name]
    return chosen


def choice_options(name: str) -> list[tuple[str, list[str]]]:
    return [(a.option_strings[-1], [str(c) for c in a.choices]) for a in subparser(name)._actions if a.choices]


def test_the_choices_are_the_enums_values_in_order() -> None:
    assert choices_of(Mode) == ["train", "infer", "generate"]
    assert choices_of(Precision)[0] == "fp32" and all(type(c) is str for c in choices_of(Precision))


@pytest.mark.parametrize("command", ESTIMATING)
def test_every_choice_option_lists_its_words_in_help_and_in_its_error(command: str) -> None:
    options = choice_options(command)
    assert {"--mode", "--precision", "--weights", "--attention"} <= {flag for flag, _ in options}
    shown = " ".join(subparser(command).format_help().split())
    for flag, words in options:
        assert f"{flag} {{{','.join(words)}}}" in shown, flag  # help: --mode {train,infer,generate}
        err = io.StringIO()
        with contextlib.redirect_stderr(err), pytest.raises(SystemExit) as stopped:
            cli.main([command, "zoo:mlp", flag, "no-such-word"])
        assert stopped.value.code == 2 and err.getvalue().count("\n") == 1, err.getvalue()
        named = ", ".join(repr(word) for word in words)  # every valid word, as text: 'train', 'infer', ...
        assert f"argument {flag}: invalid choice: 'no-such-word' (choose from {named})" in err.getvalue()
