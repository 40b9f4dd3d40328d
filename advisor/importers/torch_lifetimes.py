"""How long the model's own Python code keeps each traced tensor: the references a layer graph cannot show.

A layer graph frees a tensor after its last reader, but the forward code often holds one longer: a local
variable (BertModel.forward keeps `embedding_output` while the encoder runs; SwinLayer.forward keeps its
shortcut and window copies until it returns), or the output structure (a seq2seq model returns
encoder_last_hidden_state, so the caller holds it until the step ends). On the card those tensors are
allocated for that whole time.

So the forward pass runs a second time with a recorder that keeps no tensor alive: it makes the same
records as the first pass (torch_trace.Recorder's rules) and registers a weakref finalizer on each record's
storage, which runs when the last tensor using that storage dies (storages keep one Python object for
their life, as simulate/tracking.py relies on). A storage that dies once k records exist was alive through
record k - 1; one that outlives the forward pass is returned to the caller.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field

import torch

from advisor.core.graph import HELD_TO_END
from advisor.importers.torch_trace import Record, Recorder


@dataclass
class Deaths:
    """What the finalizers write: small on purpose, as a finalizer keeps its arguments alive until its object
    dies (one holding the recorder would keep the whole module alive through a parameter's storage)."""

    records: int = 0  # records made so far
    died: dict[int, int] = field(default_factory=dict)  # record index -> records made when its storage died
    ended: bool = False  # the forward pass has returned: what dies now was returned to the caller


def _died(deaths: Deaths, index: int) -> None:
    if not deaths.ended:
        deaths.died[index] = deaths.records


def _forget(producer: dict[int, int], key: int, index: int) -> None:
    if producer.get(key) == index:
        del producer[key]


@dataclass
class LifetimeRecorder(Recorder):
    """Records like Recorder, holding only each record's name and inputs: tensors die when the model's
    code drops them."""

    deaths: Deaths = field(default_factory=Deaths)

    def __post_init__(self) -> None:
        super().__post_init__()
        # a parameter's or buffer's storage outlives the pass (a view of one, like an expanded class token)
        self.state = {id(t.untyped_storage()) for t in (*self.module.parameters(), *self.module.buffers())}

    def _add(self, record: Record) -> None:
        index, out = len(self.records), record.output
        key = id(out)
        self.producer[key] = index
        # the id of a dead tensor may be reused: forget it as it dies so no later reader is matched to it
        weakref.finalize(out, _forget, self.producer, key, index)
        if isinstance(out, torch.Tensor) and not record.is_input and id(out.untyped_storage()) not in self.state:
            weakref.finalize(out.untyped_storage(), _died, self.deaths, index)
        self.records.append(
            Record(record.name, record.op_name, record.inputs, (), {}, None, part=record.part, is_input=record.is_input)
        )
        self.deaths.records = len(self.records)

    def returned(self) -> None:
        self.deaths.ended = True


def record_holds(first: list[Record], second: LifetimeRecorder) -> dict[int, int] | None:
    """Record index -> the last record during which the code still held its output (HELD_TO_END when it
    outlived the forward pass), for every non-input record; None when the second pass recorded other calls
    than the first (the model is not deterministic in what it calls), so its lifetimes do not apply."""
    if [(r.name, r.op_name) for r in first] != [(r.name, r.op_name) for r in second.records]:
        return None
    died = second.deaths.died
    return {i: died[i] - 1 if i in died else HELD_TO_END for i, r in enumerate(first) if not r.is_input}


def graph_holds(holds: dict[int, int], node_of: dict[int, int], consumers: list[list[int]]) -> list[tuple[int, int]]:
    """Graph.holds of the traced records: only the references that outlast a node's last reader."""
    result: list[tuple[int, int]] = []
    for record, until in holds.items():
        node = node_of[record]
        last_reader = max(consumers[node], default=node)
        if until == HELD_TO_END:
            if consumers[node]:  # a node nothing reads is the model's output, held by the caller anyway
                result.append((node, HELD_TO_END))
            continue
        target = node_of.get(until, node)
        if target > last_reader:
            result.append((node, target))
    return result


__all__ = ["LifetimeRecorder", "graph_holds", "record_holds"]
