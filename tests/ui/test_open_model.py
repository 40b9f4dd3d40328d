"""The app opens every model form: File > Open of a transformers config.json, a .gguf and a .safetensors
file, and the Open-by-name dialog with a Hub id (the real huggingface_hub client against the local Hub of
tests/hub_server.py) or a library name, with progress, cancel and one-line errors."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from advisor.core.llm.decoder import DecoderSpec
from advisor.ui.main_window import QtMainWindow
from advisor.ui.open_model import (
    MAX_MATCHES,
    QtOpenModelDialog,
    ask_by_name,
    library_matches,
    spec_for_path,
    spec_from_query,
)
from tests.gguf_files import WEIGHT_BYTES, write_gguf
from tests.hub_server import CONFIG, PARAMS, HubServer, _ends, _layer, hub_env, safetensors_bytes

NAMES = ["llama-3.1-8b", "llama-3.2-1b", "qwen2.5-7b", "resnet50"]


@pytest.fixture()
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[HubServer]:
    pytest.importorskip("huggingface_hub")
    yield from hub_env(tmp_path, monkeypatch)


def _opened(qtbot: QtBot, window: QtMainWindow, source: str) -> None:
    qtbot.waitUntil(lambda: window.state.draft.source == source and bool(window.state.draft.rows), timeout=20000)


def _decoder(window: QtMainWindow) -> DecoderSpec | None:
    graph = window.state.draft.result.graph
    return graph.decoder if graph is not None else None


def test_queries_name_a_library_model_or_a_hub_id() -> None:
    assert library_matches("llama 8b", NAMES) == ["llama-3.1-8b"]
    assert library_matches("QWEN25", NAMES) == ["qwen2.5-7b"]  # case, '-' and '.' ignored
    assert spec_from_query("resnet50", NAMES) == "zoo:resnet50"
    assert spec_from_query("https://huggingface.co/Qwen/Qwen3-8B", NAMES) == "hf:Qwen/Qwen3-8B"
    assert spec_from_query("Qwen/Qwen3-8B@main", NAMES) == "hf:Qwen/Qwen3-8B@main"
    assert spec_from_query("not a model", NAMES) is None


def test_file_open_takes_a_transformers_config(qtbot: QtBot, window: QtMainWindow, tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(CONFIG))
    assert spec_for_path(str(path)) == f"hf:{path}"
    window.open_file(str(path))
    _opened(qtbot, window, f"hf:{path}")
    decoder = _decoder(window)
    assert decoder is not None and decoder.hidden == CONFIG["hidden_size"]


def test_file_open_takes_gguf_and_safetensors(qtbot: QtBot, window: QtMainWindow, tmp_path: Path) -> None:
    gguf_path = write_gguf(tmp_path / "tiny.gguf")
    window.open_file(str(gguf_path))
    _opened(qtbot, window, str(gguf_path))
    decoder = _decoder(window)
    stored = decoder.stored if decoder is not None else None
    assert stored is not None and stored.weight_bytes == WEIGHT_BYTES
    folder = tmp_path / "st"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(CONFIG))
    weights = folder / "model.safetensors"
    weights.write_bytes(safetensors_bytes({**_ends(), **_layer(0), **_layer(1)}))
    window.open_file(str(weights))
    _opened(qtbot, window, str(weights))
    assert _decoder(window) is not None


def test_dialog_imports_a_hub_id_with_progress(qtbot: QtBot, window: QtMainWindow, hub: HubServer) -> None:
    dialog = ask_by_name(window)
    seen: list[tuple[int, int]] = []
    dialog.relay.progressed.connect(lambda done, total, _what: seen.append((done, total)))
    dialog.query.setText("acme/tiny-llama")
    dialog.start()
    _opened(qtbot, window, "hf:acme/tiny-llama")
    assert not dialog.isVisible()
    assert (1, 1) in seen  # the one safetensors header of the single-file checkpoint
    # the estimate shown is of the checkpoint's layers: 106_816 parameters (tests/hub_server.py)
    qtbot.waitUntil(
        lambda: window.state.result is not None and window.state.result.graph.param_count == PARAMS, timeout=20000
    )


def test_dialog_says_why_a_hub_id_fails(qtbot: QtBot, window: QtMainWindow, hub: HubServer) -> None:
    dialog = ask_by_name(window)
    before = list(window.state.draft.rows)
    dialog.query.setText("acme/gated")
    dialog.start()
    qtbot.waitUntil(lambda: "gated repo" in dialog.status.text(), timeout=20000)
    assert dialog.isVisible() and "\n" not in dialog.status.text() and window.state.draft.rows == before


def test_dialog_cancel_drops_the_import(qtbot: QtBot, window: QtMainWindow, hub: HubServer) -> None:
    dialog = ask_by_name(window)
    before = window.state.draft.source
    dialog.query.setText("acme/slow")  # every answer of this repo takes 0.5 s
    dialog.start()
    assert dialog.cancel_button.isEnabled()
    dialog.cancel_button.click()
    assert dialog.status.text() == "Import cancelled." and not window.runner.running("import")
    window.runner.wait()
    qtbot.wait(100)  # the dropped result's queued signal
    assert window.state.draft.source == before


def test_dialog_opens_a_library_model(qtbot: QtBot, window: QtMainWindow) -> None:
    dialog = ask_by_name(window)
    assert isinstance(dialog, QtOpenModelDialog)
    dialog.query.setText("tinyllama")
    assert dialog.matches.count() == 1 and dialog.matches.currentItem().text() == "tinyllama-1.1b"
    dialog.query.setText("")  # every name again, up to the list's cap (the library holds more than it shows)
    assert dialog.matches.count() == min(MAX_MATCHES, len(dialog.names))
    dialog.query.setText("tinyllama")
    dialog.start()
    _opened(qtbot, window, "zoo:tinyllama-1.1b")


def test_file_menu_has_open_by_name(window: QtMainWindow) -> None:
    file_menu = window.menuBar().actions()[0].menu()
    actions = {a.text(): a for a in file_menu.actions()}  # type: ignore[union-attr]
    assert actions["Open by name…"].shortcut().toString() == "Ctrl+Shift+O"


def test_an_opened_gguf_runs_as_stored(qtbot: QtBot, window: QtMainWindow, tmp_path: Path) -> None:
    window.open_file(str(write_gguf(tmp_path / "tiny.gguf")))
    qtbot.waitUntil(
        lambda: (
            window.state.result is not None
            and window.state.result.graph.decoder is not None
            and window.state.result.graph.decoder.stored is not None
        ),
        timeout=20000,
    )
    window.workload.mode.setCurrentIndex(window.workload.mode.findData("generate"))
    qtbot.waitUntil(
        lambda: window.state.result is not None and window.state.result.estimate.workload.mode == "generate",
        timeout=20000,
    )
    estimate = window.state.result.estimate
    assert estimate.workload.weights == "q4_k_m"  # the file's general.file_type, not the precision's dtype
    assert estimate.generation is not None and estimate.generation.weight_bytes == WEIGHT_BYTES
