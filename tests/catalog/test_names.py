"""Names in any word order and common spellings resolve; an ambiguous name lists its candidates (exit 2)."""

from __future__ import annotations

import pytest

from advisor.catalog import Catalog, find_card
from advisor.catalog.errors import AmbiguousCardError, UnknownCardError
from advisor.catalog.names import match, tokens
from tests.catalog.test_cli import Runner, run  # noqa: F401  (the fixture)


def test_tokens_ignore_order_case_spacing_and_units() -> None:
    assert tokens("A100 80GB SXM4") == tokens("sxm4 a100 80 gb") == frozenset({"a", "100", "sxm", "4", "80"})
    assert tokens("rtx4090") == tokens("NVIDIA RTX-4090") == frozenset({"rtx", "4090"})


def test_match_prefers_the_exact_words_then_a_unique_superset() -> None:
    names = [
        ("RX 7900 XT", "Radeon RX 7900 XT"),
        ("RX 7900 XTX", "Radeon RX 7900 XTX"),
        ("Radeon RX 7900 XT", "Radeon RX 7900 XT"),
    ]
    assert match("7900 xt rx", names) == ["Radeon RX 7900 XT"]  # "xt" is not "xtx"
    assert match("7900", names) == ["Radeon RX 7900 XT", "Radeon RX 7900 XTX"]
    assert match("", names) == [] and match("5090", names) == []


@pytest.mark.parametrize(
    ("typed", "card"),
    [
        ("A100 80GB SXM4", "A100 SXM4 80GB"),
        ("sxm4 a100 80gb", "A100 SXM4 80GB"),
        ("rtx4090", "GeForce RTX 4090"),
        ("geforce 4090 rtx", "GeForce RTX 4090"),
        ("80GB PCIe A100", "A100 PCIe 80GB"),
        ("h100 sxm", "H100 SXM5"),
    ],
)
def test_any_word_order_and_spelling_finds_the_card(catalog: Catalog, typed: str, card: str) -> None:
    with catalog.read() as session:
        assert find_card(session, typed).name == card


def test_an_ambiguous_name_lists_the_candidates(catalog: Catalog) -> None:
    with catalog.read() as session, pytest.raises(AmbiguousCardError) as caught:
        find_card(session, "a100 pcie")
    assert caught.value.candidates == ("A100 PCIe 40GB", "A100 PCIe 80GB")
    with catalog.read() as session, pytest.raises(UnknownCardError):
        find_card(session, "rtx 9999")


def test_the_command_line_exits_2_on_an_ambiguous_name(run: Runner) -> None:  # noqa: F811
    code, out, err = run("show", "a100 80gb pcie sxm4")  # words of two cards at once: neither
    assert code == 2 and "unknown card" in err
    code, out, err = run("show", "pcie a100")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "ambiguous" in err and "'A100 PCIe 40GB', 'A100 PCIe 80GB'" in err


@pytest.mark.parametrize(
    ("typed", "picked", "others"),
    [
        ("H100", "H100 SXM5", ["'H100 NVL'", "'H100 PCIe'"]),  # H100 is an alias of the SXM5 module
        ("A100 80GB", "A100 SXM4 80GB", ["'A100 PCIe 80GB'"]),
        ("H200", "H200 SXM", ["'H200 NVL'"]),
    ],
)
def test_a_short_name_of_several_variants_says_which_it_picked(
    run: Runner,  # noqa: F811
    typed: str,
    picked: str,
    others: list[str],
) -> None:
    code, out, err = run("show", typed, "--json")
    assert code == 0 and f'"name": "{picked}"' in out  # stdout stays one JSON object
    assert err.strip() == (
        f"advisor catalog: '{typed}' is taken to mean {picked}; for another variant give its name: {', '.join(others)}"
    )


def test_a_full_name_or_a_name_of_one_card_says_nothing(run: Runner) -> None:  # noqa: F811
    for typed in ("H100 PCIe", "H100 SXM5", "1080 ti"):
        code, _out, err = run("show", typed)
        assert code == 0 and err == "", typed
