"""Opening every model the command line takes: File > Open of a transformers config.json, a .gguf or a
.safetensors file (besides the network files), and a dialog whose search box takes a Hub id (ORG/NAME) or a
library name and imports it on a worker, with a progress bar and Cancel."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, Signal, Slot
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QLineEdit,
    QListWidget,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from advisor.core import zoo
from advisor.core.graph import Graph
from advisor.importers.common import MAX_CONFIG_BYTES
from advisor.importers.hf_hub import HUB_ID, is_hub_spec
from advisor.importers.spec_graph import load_graph
from advisor.ui.i18n import tr

if TYPE_CHECKING:
    from advisor.ui.main_window import QtMainWindow

HUB_URL = "https://huggingface.co/"
MAX_MATCHES = 50


def spec_for_path(path: str) -> str:
    """A transformers config.json opens as hf:CONFIG.json (the network files keep their own loader)."""
    return f"hf:{path}" if path.lower().endswith(".json") and _is_hf_config(Path(path)) else path


def _is_hf_config(path: Path) -> bool:
    """An object naming a model_type or architectures and no advisor network "format"; anything else is left
    to the network loader, whose error says what is wrong."""
    try:
        if path.stat().st_size > MAX_CONFIG_BYTES:
            return False
        data = json.loads(path.read_bytes())
    except (OSError, ValueError, RecursionError):
        return False
    return isinstance(data, dict) and "format" not in data and ("model_type" in data or "architectures" in data)


def load_spec(
    spec: str,
    seq_len: int | None,
    progress: Callable[[int, int, str], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
    trust_pickle: bool = False,
) -> Graph:
    """The graph of a spec as the command line builds it; Hub ids report progress and stop on Cancel."""
    if is_hub_spec(spec):
        from advisor.importers.hf_hub_estimate import load_graph as load_hub

        return load_hub(spec, seq_len, progress, cancelled)
    network = spec.lower().endswith(".json") and not spec.startswith("hf:")
    return load_graph(spec, None if network else seq_len, trust_pickle=trust_pickle)  # a network keeps its shapes


def library_matches(query: str, names: list[str]) -> list[str]:
    """Library names holding every word of the query (case and '-' / '.' / '_' ignored)."""

    def fold(text: str) -> str:
        return text.lower().replace("-", "").replace("_", "").replace(".", "")

    words = [fold(w) for w in query.split()]
    return [n for n in names if all(w in fold(n) for w in words)][:MAX_MATCHES]


def spec_from_query(text: str, names: list[str]) -> str | None:
    """zoo:NAME for a library name, hf:ORG/NAME[@REV] for a Hub id or its huggingface.co address."""
    text = text.strip().removeprefix(HUB_URL).removeprefix("hf:").removeprefix("zoo:").strip("/")
    if text in names:
        return f"zoo:{text}"
    return f"hf:{text}" if HUB_ID.match(text) else None


class _Relay(QObject):
    """Carries the worker's progress to the dialog on the UI thread (a queued signal)."""

    progressed = Signal(int, int, str)


class QtOpenModelDialog(QDialog):
    def __init__(self, window: QtMainWindow, parent: QWidget | None = None) -> None:
        super().__init__(parent or window)
        self.window_ = window
        self.names = zoo.zoo_names()
        self.setWindowTitle(tr("Open a model by name"))
        self.query = QLineEdit()
        self.query.setPlaceholderText(tr("Hub id (Qwen/Qwen3-8B) or library name (llama 8b)"))
        self.matches = QListWidget()
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.progress = QProgressBar()
        self.progress.setVisible(False)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.open_button = QPushButton(tr("Open"))
        self.cancel_button = QPushButton(tr("Cancel import"))
        self.cancel_button.setEnabled(False)
        buttons.addButton(self.open_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.addButton(self.cancel_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        for widget in (self.query, self.matches, self.status, self.progress, buttons):
            layout.addWidget(widget)
        self.relay = _Relay(self)
        self.relay.progressed.connect(self.show_progress, Qt.ConnectionType.QueuedConnection)
        self.query.textChanged.connect(self.search)
        self.query.returnPressed.connect(self.start)
        self.matches.itemDoubleClicked.connect(lambda _item: self.start())
        self.open_button.clicked.connect(self.start)
        self.cancel_button.clicked.connect(self.cancel)
        self.search("")

    @Slot(str)
    def search(self, text: str) -> None:
        self.matches.clear()
        self.matches.addItems(library_matches(text, self.names))
        if self.matches.count():
            self.matches.setCurrentRow(0)

    def chosen_spec(self) -> str | None:
        typed = self.query.text().strip()
        spec = spec_from_query(typed, self.names) if typed else None
        if spec is None and self.matches.currentItem() is not None:
            spec = f"zoo:{self.matches.currentItem().text()}"
        return spec

    def start(self) -> None:
        spec = self.chosen_spec()
        if spec is None:
            self.status.setText(tr("Type a Hub id (ORG/NAME) or pick a library model."))
            return
        seq_len, relay = self.window_.state.choice.seq_len, self.relay

        def work(cancelled: threading.Event) -> Graph:
            return load_spec(spec, seq_len, relay.progressed.emit, cancelled.is_set)

        self.status.setText(tr("Importing {file}").format(file=spec))
        self.progress.setRange(0, 0)
        self.progress.setVisible(True)
        self.cancel_button.setEnabled(True)
        self.window_.runner.start(
            "import",
            tr("Importing {file}").format(file=spec),
            work,
            lambda graph: self._done(graph, spec),
            self._failed,
        )

    @Slot(int, int, str)
    def show_progress(self, done: int, total: int, what: str) -> None:
        self.progress.setRange(0, max(total, 1))
        self.progress.setValue(done)
        self.status.setText(what)

    def cancel(self) -> None:
        self.window_.runner.cancel("import")
        self._idle(tr("Import cancelled."))

    def _idle(self, message: str) -> None:
        self.progress.setVisible(False)
        self.cancel_button.setEnabled(False)
        self.status.setText(message)

    def _done(self, graph: Graph, spec: str) -> None:
        self._idle("")
        self.window_.opened(graph, spec)
        self.accept()

    def _failed(self, error: BaseException) -> None:
        self._idle(str(error))  # one line naming the model and what to do (hf_hub.hub_error)


def ask_by_name(window: QtMainWindow) -> QtOpenModelDialog:
    """File > Open by name: non-blocking, like the error dialogs."""
    dialog = QtOpenModelDialog(window)
    dialog.setObjectName("open_model_dialog")
    dialog.open()
    return dialog
