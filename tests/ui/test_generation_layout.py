"""Generation at 1280x720, in English and Chinese (issue 27): the ranking's last shown column (the value for
money) is in view, as in training, and the layer shapes are the command line's, the prompt's prefill."""

from __future__ import annotations

import json
import re
from collections.abc import Callable

import pytest
from pytestqt.qtbot import QtBot

from advisor.cli import main
from advisor.ui.main_window import QtMainWindow

Ranked = Callable[[QtBot, QtMainWindow], None]
ASCII_AFTER_CHINESE = re.compile(r"[\u4e00-\u9fff）][:;,.!?](\s|<|$)")


def _generate(qtbot: QtBot, window: QtMainWindow, **choice: object) -> None:
    window.model_panel.load_zoo("llama-3.1-8b")
    window.state.set_choice(mode="generate", precision="bf16", batch=1, **choice)
    window.state.recompute()
    qtbot.waitUntil(
        lambda: window.state.result is not None and window.state.result.estimate.workload.mode == "generate",
        timeout=10000,
    )


@pytest.mark.parametrize("language", ["en", "zh_CN"])
def test_the_generation_table_is_in_view_at_1280x720(
    qtbot: QtBot, window: QtMainWindow, wait_ranked: Ranked, language: str
) -> None:
    if language != "en":
        window.switch_language(language)
    window.resize(1280, 720)
    window.tabs.setCurrentIndex(1)
    _generate(qtbot, window)
    wait_ranked(qtbot, window)
    qtbot.wait(50)
    table = window.recommendations.table
    header = table.horizontalHeader()
    shown = [c for c in range(header.count()) if not header.isSectionHidden(c)]
    sizes = {table.model().headerData(c, header.orientation()): header.sectionSize(c) for c in shown}
    last = shown[-1]
    assert header.sectionViewportPosition(last) + header.sectionSize(last) <= table.viewport().width(), sizes
    if language == "en":  # the generation columns are among those shown, on two lines, and the software too
        names = {str(table.model().headerData(c, header.orientation())).replace("\n", " ") for c in shown}
        assert {"Decode tok/s", "Prefill tok/s", "Plan", "Software", "tok/s per $1k"} <= names, names
    if language == "zh_CN":  # a row's explanation punctuates Chinese with full-width marks ("张量并行: 放得下")
        table.selectRow(0)
        detail = window.recommendations.detail.text()
        assert "张量并行" in detail and not ASCII_AFTER_CHINESE.search(detail), detail
    for column in shown:  # no header is cut: each section is as wide as its longest header line
        lines = str(table.model().headerData(column, header.orientation())).split("\n")
        assert header.sectionSize(column) >= max(map(header.fontMetrics().horizontalAdvance, lines)), lines


def test_generation_shows_the_prompts_layer_shapes(
    qtbot: QtBot, window: QtMainWindow, capsys: pytest.CaptureFixture[str]
) -> None:
    """The layer list showed the training sequence length (512) in generation; it shows the prompt's prefill,
    as `advisor estimate --mode generate` lists it, and the training length again in training."""
    _generate(qtbot, window, prompt_len=1000)
    assert (
        main(
            [
                "estimate",
                "zoo:llama-3.1-8b",
                "--mode",
                "generate",
                "--precision",
                "bf16",
                "--batch",
                "1",
                "--prompt-len",
                "1000",
                "--json",
            ]
        )
        == 0
    )
    cli = {row["name"]: tuple(row["output_shape"]) for row in json.loads(capsys.readouterr().out)["layers"]}
    shown = {node.name: node.output.shape for node in window.state.draft.result.graph.nodes}  # type: ignore[union-attr]
    assert shown["embed_tokens"] == cli["embed_tokens"] == (1000, 4096)  # 1000 prompt tokens x hidden 4096
    # every layer alike but the head: the prefill keeps the last token's logits only (core/llm/generate.py,
    # last_token_logits), the network as built computes them for every token
    assert {name for name, shape in cli.items() if name in shown and shown[name] != shape} == {"lm_head"}
    assert len(shown) > 200  # 32 decoder layers of ~10 rows
    window.state.set_choice(mode="train", seq_len=256)
    shown = {node.name: node.output.shape for node in window.state.draft.result.graph.nodes}  # type: ignore[union-attr]
    assert shown["embed_tokens"] == (256, 4096)


@pytest.mark.parametrize("language", ["en", "zh_CN"])
def test_the_rent_value_column_is_in_view_at_1280x720(
    qtbot: QtBot, window: QtMainWindow, wait_ranked: Ranked, language: str
) -> None:
    """Ranked on rent with a job size, every value cell said "... samples/s per $1/h of rent" and the column
    ran off the screen (the walk's restart shot): the header says per $1/h, the cells the figure."""
    if language != "en":
        window.switch_language(language)
    window.resize(1280, 720)
    window.tabs.setCurrentIndex(1)
    money = window.recommendations.money
    money.basis.setCurrentIndex(money.basis.findData("rent"))
    money.samples.setValue(1e8)
    wait_ranked(qtbot, window)
    qtbot.wait(50)
    table = window.recommendations.table
    header = table.horizontalHeader()
    shown = [c for c in range(header.count()) if not header.isSectionHidden(c)]
    last = shown[-1]
    assert header.sectionViewportPosition(last) + header.sectionSize(last) <= table.viewport().width()
    value = table.model().headerData(last, header.orientation())
    assert value == ("Per $1/h" if language == "en" else "每 1 美元/小时租金")
    cell = table.model().index(0, last).data()
    assert re.fullmatch(r"[\d,.]+ (samples/s|样本/秒)", cell), cell
