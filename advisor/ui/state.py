"""What the window shows, in one place: the network draft, the workload, and the estimate made from them.

The estimate is analytic and fast (5-30 ms even for Llama-7B), so it runs on the UI thread, debounced, while
the batch slider moves; file imports and recommendations go to workers (workers.py).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from PySide6.QtCore import QObject, QTimer, Signal

from advisor.core import zoo
from advisor.core.curve import MemoryCurve, memory_curve
from advisor.core.errors import AdvisorError
from advisor.core.estimate import Estimate, estimate, with_loss_head
from advisor.core.graph import Graph
from advisor.core.workload import Workload
from advisor.recommend.rewrites import with_inplace_activations
from advisor.ui import draft_edits
from advisor.ui.draft import NetworkDraft

DEBOUNCE_MS = 40


@dataclass(frozen=True)
class WorkloadChoice:
    """The workload controls' values; `inplace` rewrites activations as their in-place variants."""

    mode: str = "train"
    batch: int = 32
    seq_len: int = 512
    precision: str = "fp32"
    optimizer: str = "adam"
    checkpointing: bool = False
    inplace: bool = False

    def workload(self) -> Workload:
        return Workload(self.mode, self.batch, self.precision, self.optimizer, self.checkpointing)  # type: ignore[arg-type]


@dataclass(frozen=True)
class Result:
    estimate: Estimate
    curve: MemoryCurve
    graph: Graph


class AppState(QObject):
    result_changed = Signal()
    workload_changed = Signal()
    error_changed = Signal(str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.draft = NetworkDraft(self)
        self.choice = WorkloadChoice()
        self.result: Result | None = None
        self.error = ""
        self._timer = QTimer(self, singleShot=True, interval=DEBOUNCE_MS)
        self._timer.timeout.connect(self.recompute)
        self.draft.changed.connect(self.schedule)

    def set_choice(self, **changes: object) -> None:
        new = dataclasses.replace(self.choice, **changes)  # type: ignore[arg-type]
        if new != self.choice:
            old, self.choice = self.choice, new
            if new.seq_len != old.seq_len:
                self._rebuild_for_seq_len()
            self.workload_changed.emit()
            self.schedule()

    def _rebuild_for_seq_len(self) -> None:
        """A zoo sequence model is rebuilt at the new length (one undo step), a built network is left alone."""
        source = self.draft.source
        if source.startswith("zoo:") and zoo.takes_seq_len(source[4:]):
            draft_edits.load_graph_into(self.draft, zoo.build(source[4:], self.choice.seq_len), source)

    def schedule(self) -> None:
        self._timer.start()

    def graph(self) -> Graph | None:
        graph = self.draft.result.graph
        if graph is not None and self.choice.inplace:
            graph = with_inplace_activations(graph)
        return graph

    def recompute(self) -> None:
        self._timer.stop()
        graph = self.graph()
        if graph is None:
            errors = self.draft.result.errors
            self._set_error(next(iter(errors.values())) if errors else "")
            return
        workload = self.choice.workload()
        try:
            result = estimate(graph, workload)
            curve = memory_curve(with_loss_head(graph) if workload.training else graph, workload)
        except AdvisorError as error:
            self._set_error(str(error))
            return
        self.result = Result(result, curve, graph)
        self._set_error("")
        self.result_changed.emit()

    def _set_error(self, message: str) -> None:
        self.error = message
        self.error_changed.emit(message)
