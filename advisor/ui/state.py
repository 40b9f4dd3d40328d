"""The Qt side of the app's state: the model (advisor/appstate, no Qt) plus the network draft's undo stack, the
debounce timer and the workers. Its Qt signals relay the model's, connected once here.

The analytic estimate is fast (5-30 ms even for Llama-7B), so it runs on the UI thread, debounced, while
the batch slider moves; file imports and recommendations go to workers (workers.py). A PyTorch file opened
unchanged is estimated the way the command line does it (advisor/importers/spec_estimate.py: its real training step,
simulated) on a worker; the analytic figures stand, marked as such, until that arrives, and again as soon
as the user edits the imported graph (the simulation knows the file, not the edits).
"""

from __future__ import annotations

from PySide6.QtCore import QObject, QTimer, Signal

from advisor.appstate import AppModel, ShownEstimate, WorkloadChoice
from advisor.core import zoo
from advisor.core.errors import AdvisorError
from advisor.core.graph import Graph
from advisor.core.workload import Workload
from advisor.importers.spec_estimate import simulatable
from advisor.recommend.prepare import RankingInput, prepare_graph, prepare_spec
from advisor.recommend.rewrites import with_inplace_activations
from advisor.ui import draft_edits
from advisor.ui.draft import NetworkDraft
from advisor.ui.i18n import tr
from advisor.ui.workers import TaskRunner

DEBOUNCE_MS = 40

__all__ = ["AppState", "ShownEstimate", "WorkloadChoice"]


class AppState(QObject):
    result_changed = Signal()
    workload_changed = Signal()
    error_changed = Signal(str)
    ranking_changed = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.model = AppModel()
        self.draft = NetworkDraft(self)
        self.runner: TaskRunner | None = None  # set by the window; without one, everything is analytic
        self._timer = QTimer(self, singleShot=True, interval=DEBOUNCE_MS)
        self._timer.timeout.connect(self.recompute)
        self.draft.changed.connect(self.schedule)
        for mine, theirs in (
            (self.result_changed, self.model.result_changed),
            (self.workload_changed, self.model.workload_changed),
            (self.error_changed, self.model.error_changed),
            (self.ranking_changed, self.model.ranking_changed),
        ):
            theirs.connect(mine.emit)

    @property
    def choice(self) -> WorkloadChoice:
        return self.model.choice

    @choice.setter
    def choice(self, choice: WorkloadChoice) -> None:  # a restored choice, before any widget shows it
        self.model.choice = choice

    @property
    def result(self) -> ShownEstimate | None:
        return self.model.result

    @property
    def error(self) -> str:
        return self.model.error

    def set_choice(self, **changes: object) -> None:
        old = self.model.set_choice(**changes)
        if old is not None:
            if self.choice.graph_length != old.graph_length:
                self._rebuild_for_seq_len()
            self.schedule()

    def _rebuild_for_seq_len(self) -> None:
        """A zoo sequence model is rebuilt at the new length (one undo step), a built network is left alone."""
        source = self.draft.source
        if source.startswith("zoo:") and zoo.takes_seq_len(source[4:]):
            draft_edits.load_graph_into(self.draft, zoo.build(source[4:], self.choice.graph_length), source)

    def schedule(self) -> None:
        self._timer.start()

    def graph(self) -> Graph | None:
        graph = self.draft.result.graph
        if graph is not None and self.choice.inplace:
            graph = with_inplace_activations(graph)
        return graph

    def mark_imported(self, spec: str) -> None:
        """The draft now holds `spec` as opened: while it stays unedited, a PyTorch file is simulated."""
        self.model.mark_imported(spec if simulatable(spec) else None, self.draft.rows)

    def simulated_spec(self) -> str | None:
        return self.model.simulated_spec(self.draft.source, self.draft.rows)

    def edited_import(self) -> bool:
        return self.model.edited_import(self.draft.source, self.draft.rows)

    def recompute(self) -> None:
        self._timer.stop()
        graph = self.graph()
        if graph is None:
            errors = self.draft.result.errors
            if errors:
                self.model.fail(next(iter(errors.values())))
            elif self.result is not None or self.error:  # an empty network (File > New): nothing to show
                self.model.clear()
            return
        spec = self.simulated_spec()
        try:
            workload = self.choice.workload()  # a LoRA target typed wrong is one line, like a bad layer
            job = self.model.simulated(spec, workload) if spec else None
            job = job or prepare_graph(graph, workload)
        except AdvisorError as error:
            self.model.fail(str(error))
            return
        pending = spec is not None and job.estimate.method != "simulated" and self.runner is not None
        self.model.publish(ShownEstimate(job, graph, pending))
        if pending and spec is not None:
            self._simulate(spec, workload, graph)

    def _simulate(self, spec: str, workload: Workload, graph: Graph) -> None:
        """The command line's own path (prepare_spec, method auto) on a worker; a result that arrives after
        the workload or the graph changed is kept for later but not shown."""
        assert self.runner is not None

        def done(job: RankingInput) -> None:
            self.model.keep_simulated(spec, workload, job)
            if self.simulated_spec() == spec and self.choice.workload() == workload:
                self.model.publish(ShownEstimate(job, graph))

        self.runner.start(
            "simulate",
            tr("Simulating {file}").format(file=spec),
            lambda _cancelled: prepare_spec(spec, workload),
            done,
            lambda error: self.model.simulation_failed(f"{spec}: {error}"),
        )

    def tasks_cancelled(self, names: list[str]) -> None:
        """The user pressed Cancel: nothing may still say it is simulating or ranking."""
        if "simulate" in names:
            self.model.cancel_simulation()
        if "recommend" in names:
            self.model.cancel_ranking()
