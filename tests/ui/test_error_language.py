"""The importers' and the builder's errors in Chinese where the app shows them (issue 27), the command line's
in English; the catalogue's templates keep every placeholder of their English."""

from __future__ import annotations

import re
import string
from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot
from tests_ui_support import dialogs

from advisor.cli import main
from advisor.core import zoo
from advisor.core.workload import Workload
from advisor.i18n.errors import pattern
from advisor.i18n.zh_CN_errors import MESSAGES
from advisor.i18n.zh_CN_sentences import MESSAGES as SENTENCES
from advisor.recommend.prepare import prepare_spec
from advisor.report.card_pages import plain_words
from advisor.ui import draft_edits
from advisor.ui.i18n import set_language, tr
from advisor.ui.i18n.errors import error_text
from advisor.ui.main_window import QtMainWindow

BROKEN = "def build_model():\n    return missing_name\n\n\ndef example_inputs(batch_size):\n    return ()\n"
ENGLISH_CLAUSE = re.compile(r"\b[a-z]{2,} [a-z]{2,} [a-z]{2,}\b")  # three English words in a row


def _names(template: str) -> set[str]:
    return {name for _text, name, _spec, _conv in string.Formatter().parse(template) if name}


def test_every_translation_keeps_the_placeholders() -> None:
    for english, chinese in MESSAGES.items():
        assert _names(english) == _names(chinese), english
        assert pattern(english).fullmatch(english.replace("{", "<").replace("}", ">")) is not None, english


def test_messages_are_translated_part_by_part(qapp: QApplication) -> None:
    set_language("zh_CN")
    try:
        assert error_text("conv3: kernel 7x7 larger than padded input 5x5") == "conv3：卷积核 7x7 大于填充后的输入 5x5"
        # the place, the frame, then Python's own words, which stay as Python wrote them
        assert (
            error_text("/m.py: build_model() failed: NameError: name 'x' is not defined (line 3)")
            == "/m.py：build_model() 失败：NameError: name 'x' is not defined (line 3)"
        )
        assert error_text("zoo:x: nothing we catalogued") == "zoo:x: nothing we catalogued"  # not half translated
    finally:
        set_language("en")
    assert error_text("conv3: kernel 7x7 larger than padded input 5x5").startswith("conv3: kernel")  # English


def test_the_builder_says_a_bad_layer_in_chinese(qtbot: QtBot, window: QtMainWindow) -> None:
    window.switch_language("zh_CN")
    draft = window.state.draft
    draft_edits.load_graph_into(draft, zoo.build("resnet18"), "zoo:resnet18")
    draft_edits.set_field(draft, 1, "kernel", 999)  # conv1 over a 224x224 input padded by 3
    qtbot.waitUntil(lambda: bool(draft.result.errors), timeout=5000)
    problem = window.model_panel.builder.table.model().index(1, 3).data()
    assert problem.startswith("conv1：卷积核 999x999 大于填充后的输入") and not ENGLISH_CLAUSE.search(problem)
    qtbot.waitUntil(lambda: "卷积核" in window.breakdown.error.text(), timeout=5000)


@pytest.mark.parametrize(
    ("content", "name", "said"),
    [
        (BROKEN, "broken.py", "build_model() 失败：NameError"),
        ("{not json", "net.json", "不是有效的 JSON"),
    ],
)
def test_an_import_error_in_chinese(
    qtbot: QtBot,
    window: QtMainWindow,
    tmp_path: Path,
    content: str,
    name: str,
    said: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = tmp_path / name
    path.write_text(content)
    window.switch_language("zh_CN")
    window.open_file(str(path))
    qtbot.waitUntil(lambda: bool(dialogs(window)), timeout=20000)
    text = dialogs(window)[0].text()
    assert text.startswith(f"{path}：") and said in text, text
    ours = re.split(r"NameError|（", text)[0]  # Python's and json's own words follow, as they wrote them
    assert not ENGLISH_CLAUSE.search(ours), text
    assert main(["estimate", str(path)]) == 2  # the command line keeps its English
    assert re.search(r"build_model\(\) failed|not valid JSON", capsys.readouterr().err)


def test_every_sentence_template_keeps_the_placeholders() -> None:
    for english, chinese in SENTENCES.items():
        assert _names(english) == _names(chinese), english


@pytest.mark.parametrize(
    "workload",
    [
        Workload("generate", 4, "bf16", weights="int4"),
        Workload("train", 4, "amp_bf16", "adamw", finetune="qlora", lora_rank=16),
    ],
    ids=["generate-int4", "qlora"],
)
def test_the_assumptions_of_a_language_model_read_in_chinese(workload: Workload) -> None:
    """The PDF printed the generation and QLoRA assumptions in English (they carry figures, so no exact entry
    matched); tr() falls back to their templates."""
    assumptions = prepare_spec("zoo:llama-3.2-1b", workload).estimate.assumptions
    set_language("zh_CN")
    try:
        shown = [plain_words(tr(a), tr) for a in assumptions]
    finally:
        set_language("en")
    english = [line for line in shown if ENGLISH_CLAUSE.search(re.sub(r"\([^)]*\)|（[^）]*）", "", line))]
    assert not english, english
    assert len(shown) >= 6


def test_chinese_is_punctuated_with_full_width_marks() -> None:
    """ASCII full stops and commas after Chinese (issue 27), in every catalogue, the errors' and sentences'
    too; "token" is 词元 in all of them."""
    from advisor.i18n import _CATALOGS

    texts = [*_CATALOGS["zh_CN"].values(), *MESSAGES.values(), *SENTENCES.values()]
    ascii_after = [t for t in texts if re.search(r"[\u4e00-\u9fff）][.,;:!?](\s|$)", t)]
    assert ascii_after == []
    assert [t for t in texts if re.search(r"(?<!\{)\btokens?\b(?!})", t) and re.search(r"[\u4e00-\u9fff]", t)] == []


def test_the_chinese_verdict_has_no_ascii_punctuation(qtbot: QtBot, window: QtMainWindow) -> None:
    """ "（每千美元 696 样本/秒; 价格已超过一年）": the old price's note was joined with an ASCII semicolon."""
    window.switch_language("zh_CN")
    with qtbot.waitSignal(window.recommendations.ranked, timeout=30000):
        window.recommendations.refresh()
    qtbot.waitUntil(lambda: "性价比最高" in window.verdict.text(), timeout=15000)
    text = re.sub(r"<[^>]+>", "", window.verdict.text())
    assert "价格已超过一年" in text  # the seeded catalog's best value rests on an old price
    assert not re.search(r"[\u4e00-\u9fff）/秒][.,;:!?](\s|$)", text), text


@pytest.mark.parametrize("language", ["en", "zh_CN"])
def test_a_word_typed_in_a_number_field_names_the_value_once(qtbot: QtBot, window: QtMainWindow, language: str) -> None:
    """`abc` in a layer's whole-number field: one line naming the layer and field, the value said once (it read
    'got abc, got "abc"'), in the user's language."""
    if language != "en":
        window.switch_language(language)
    window.model_panel.load_zoo("resnet18")
    qtbot.waitUntil(lambda: window.state.result is not None, timeout=10000)
    row = next(i for i, r in enumerate(window.state.draft.rows) if r.kind == "linear")
    window.model_panel.builder.select(row)
    editor = window.model_panel.builder.form.editors["out_features"]
    editor.setText("abc")
    editor.textEdited.emit("abc")
    qtbot.waitUntil(lambda: window.state.error != "", timeout=5000)
    assert window.state.error == 'fc: field out_features: expected a whole number of at most 2**31 in size, got "abc"'
    shown = error_text(window.state.error)
    assert shown.count("abc") == 1
    if language != "en":
        assert shown == 'fc：字段 out_features：应为不超过 2**31 的整数，实际为 "abc"'
