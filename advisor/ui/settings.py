"""What persists between runs (QSettings): language, workload, the last model, window geometry.

The caller passes the QSettings, so tests use an .ini file in a temporary folder, never the user's.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from pathlib import Path

from PySide6.QtCore import QSettings

from advisor.core import zoo
from advisor.core.errors import AdvisorError
from advisor.core.graph import Graph
from advisor.importers.netfile import graph_from_json, graph_to_json
from advisor.ui import draft_edits
from advisor.ui.state import AppState, WorkloadChoice

log = logging.getLogger(__name__)


def default_settings() -> QSettings:
    return QSettings("advisor", "advisor")


def restore_state(settings: QSettings, state: AppState) -> bool:
    """Workload and last model from the settings; False if there was no model to restore."""
    stored = settings.value("workload")
    if isinstance(stored, str):
        try:
            values = json.loads(stored)
            known = {f.name for f in dataclasses.fields(WorkloadChoice)}
            state.choice = WorkloadChoice(**{k: v for k, v in values.items() if k in known})
            state.choice.workload()  # validates
        except (ValueError, TypeError, AdvisorError) as error:
            log.warning("ignoring stored workload: %s", error)
            state.choice = WorkloadChoice()
    model = settings.value("last_model")
    if not isinstance(model, str):
        return False
    try:
        graph = graph_from_json(json.loads(model))
    except (ValueError, AdvisorError) as error:
        log.warning("ignoring stored model: %s", error)
        return False
    source = str(settings.value("last_source", ""))
    draft_edits.load_graph_into(state.draft, _described(graph, source), source)
    state.draft.undo.clear()  # restoring is not an edit the user can undo
    if Path(source).is_file():
        state.mark_imported(source)  # an unedited PyTorch file is simulated again, as when it was opened
    return True


def _described(graph: Graph, source: str) -> Graph:
    """A zoo language model saved unedited comes back with its decoder description (generation needs it;
    the saved network file holds only the layers): rebuilt from the zoo, kept if it is the same graph."""
    name = source.removeprefix("zoo:")
    if source.startswith("zoo:") and name in zoo.zoo_names():
        built = zoo.build(name, graph.nodes[0].output.shape[0] if zoo.takes_seq_len(name) else None)
        if built == graph:
            return built
    return graph


def load_money(settings: QSettings) -> dict[str, object]:
    """The price basis, software path and job size of the last run ({} if none or unreadable)."""
    stored = settings.value("money")
    try:
        values = json.loads(stored) if isinstance(stored, str) else {}
    except ValueError:
        return {}
    return values if isinstance(values, dict) else {}


def save_money(settings: QSettings, values: dict[str, object]) -> None:
    settings.setValue("money", json.dumps(values))


def save_state(settings: QSettings, state: AppState) -> None:
    settings.setValue("workload", json.dumps(dataclasses.asdict(state.choice)))
    graph = state.draft.result.graph
    if graph is not None:
        settings.setValue("last_model", json.dumps(graph_to_json(graph)))
        settings.setValue("last_source", state.draft.source)
    settings.sync()
