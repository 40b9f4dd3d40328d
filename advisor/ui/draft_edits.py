"""The edits the builder offers, each one undoable step on a NetworkDraft."""

from __future__ import annotations

import dataclasses
from typing import Any

from advisor.core.graph import Graph
from advisor.ui.draft import LayerDraft, NetworkDraft, default_params, drafts_from_graph
from advisor.ui.i18n import tr


def add_layer(draft: NetworkDraft, kind: str, at: int | None = None) -> int:
    rows = list(draft.rows)
    at = len(rows) if at is None else at
    rows.insert(at, LayerDraft(draft.unique_name(kind), kind, default_params(kind)))
    draft.push(tr("Add layer"), rows)
    return at


def remove_layer(draft: NetworkDraft, row: int) -> None:
    rows = list(draft.rows)
    del rows[row]
    draft.push(tr("Remove layer"), rows)


def move_layer(draft: NetworkDraft, row: int, offset: int) -> int:
    target = row + offset
    if not 0 <= target < len(draft.rows):
        return row
    rows = list(draft.rows)
    rows[row], rows[target] = rows[target], rows[row]
    draft.push(tr("Move layer"), rows)
    return target


def set_field(draft: NetworkDraft, row: int, name: str, value: Any) -> None:
    """Sets (value not None) or clears (None: back to the default) one field; typing merges into one step."""
    rows = list(draft.rows)
    params = dict(rows[row].params)
    if value is None:
        params.pop(name, None)
    else:
        params[name] = value
    rows[row] = dataclasses.replace(rows[row], params=params)
    draft.push(tr("Edit {field}").format(field=name), rows, merge_key=(row, name))


def rename_layer(draft: NetworkDraft, row: int, new_name: str) -> None:
    """Renames and updates the layers that read from it, so the network keeps its wiring."""
    old = draft.rows[row].name
    rows = []
    for r in draft.rows:
        inputs = tuple(new_name if n == old else n for n in r.inputs)
        rows.append(dataclasses.replace(r, inputs=inputs))
    rows[row] = dataclasses.replace(rows[row], name=new_name)
    draft.push(tr("Rename layer"), rows, merge_key=(row, "name"))


def set_inputs(draft: NetworkDraft, row: int, inputs: tuple[str, ...]) -> None:
    rows = list(draft.rows)
    rows[row] = dataclasses.replace(rows[row], inputs=inputs, reads_nothing=False)
    draft.push(tr("Edit inputs"), rows, merge_key=(row, "inputs"))


def load_graph_into(draft: NetworkDraft, graph: Graph, source: str) -> None:
    draft.task = graph.task  # what the loss head trains; follows the model, not an edit
    draft.push(
        tr("Load {model}").format(model=graph.name),
        drafts_from_graph(graph),
        name=graph.name,
        source=source,
        decoder=graph.decoder,
    )


def clear(draft: NetworkDraft) -> None:
    draft.push(tr("New network"), [], name="network", source="")
