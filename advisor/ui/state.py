"""What the window shows, in one place: the network draft, the workload, and the estimate made from them.

The analytic estimate is fast (5-30 ms even for Llama-7B), so it runs on the UI thread, debounced, while
the batch slider moves; file imports and recommendations go to workers (workers.py). A PyTorch file opened
unchanged is estimated the way the command line does it (advisor/importers/spec_estimate.py: its real training step,
simulated) on a worker; the analytic figures stand, marked as such, until that arrives, and again as soon
as the user edits the imported graph (the simulation knows the file, not the edits).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from PySide6.QtCore import QObject, QTimer, Signal

from advisor.core import zoo
from advisor.core.curve import MemoryCurve
from advisor.core.errors import AdvisorError
from advisor.core.estimate import Estimate
from advisor.core.graph import Graph
from advisor.core.workload import Workload
from advisor.importers.spec_estimate import simulatable
from advisor.recommend.prepare import RankingInput, prepare_graph, prepare_spec
from advisor.recommend.rewrites import with_inplace_activations
from advisor.ui import draft_edits
from advisor.ui.draft import LayerDraft, NetworkDraft
from advisor.ui.i18n import tr
from advisor.ui.workers import TaskRunner

DEBOUNCE_MS = 40


@dataclass(frozen=True)
class WorkloadChoice:
    """The workload controls' values; `inplace` rewrites activations as their in-place variants. The
    language-model fields are kept whatever the mode (switching back restores them) and reach the Workload
    only where they apply: weights and KV cache in generation, fine-tuning in training; `lora_targets` is
    the text field's comma-separated names ("" = every projection, as the command line's default)."""

    mode: str = "train"
    batch: int = 32
    seq_len: int = 512
    precision: str = "fp32"
    optimizer: str = "adam"
    checkpointing: bool = False
    inplace: bool = False
    prompt_len: int = 512
    new_tokens: int = 128
    weights: str | None = None
    kv_cache: str | None = None
    finetune: str = "full"
    lora_rank: int = 16
    lora_targets: str = ""

    def workload(self) -> Workload:
        generating, training = self.mode == "generate", self.mode == "train"
        finetune = self.finetune if training else "full"
        targets = tuple(name.strip() for name in self.lora_targets.split(",") if name.strip())
        return Workload(self.mode, self.batch, self.precision, self.optimizer, self.checkpointing,  # type: ignore[arg-type]
                        prompt_len=self.prompt_len, new_tokens=self.new_tokens,
                        weights=self.weights if generating else None,  # type: ignore[arg-type]
                        kv_cache=self.kv_cache if generating else None,  # type: ignore[arg-type]
                        finetune=finetune, lora_rank=self.lora_rank,  # type: ignore[arg-type]
                        lora_targets=targets if finetune != "full" else ())


@dataclass(frozen=True)
class ShownEstimate:
    """One estimate and everything ranking needs (`job`): the breakdown, recommendations, make-it-fit and the
    PDF all read these same numbers. `pending`: a simulation of this workload is still running."""

    job: RankingInput
    graph: Graph
    pending: bool = False

    @property
    def estimate(self) -> Estimate:
        return self.job.estimate

    @property
    def curve(self) -> MemoryCurve:
        return self.job.curve

    @property
    def method(self) -> str:
        return self.job.estimate.method


class AppState(QObject):
    result_changed = Signal()
    workload_changed = Signal()
    error_changed = Signal(str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.draft = NetworkDraft(self)
        self.choice = WorkloadChoice()
        self.result: ShownEstimate | None = None
        self.error = ""
        self.runner: TaskRunner | None = None  # set by the window; without one, everything is analytic
        self._imported: tuple[str, list[LayerDraft]] | None = None  # a simulatable file, as opened
        self._simulated: dict[tuple[str, Workload], RankingInput] = {}
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

    def mark_imported(self, spec: str) -> None:
        """The draft now holds `spec` as opened: while it stays unedited, a PyTorch file is simulated."""
        self._imported = (spec, list(self.draft.rows)) if simulatable(spec) else None
        self._simulated.clear()

    def simulated_spec(self) -> str | None:
        """The file to simulate, or None once the user has edited the imported graph (or rewrites it)."""
        if self._imported is None or self.choice.inplace:
            return None
        spec, rows = self._imported
        return spec if self.draft.source == spec and self.draft.rows == rows else None

    def edited_import(self) -> bool:
        """A PyTorch file was opened and then edited here: its figures are analytic from now on."""
        return self._imported is not None and self.simulated_spec() is None

    def recompute(self) -> None:
        self._timer.stop()
        graph = self.graph()
        if graph is None:
            errors = self.draft.result.errors
            if not errors and self.result is not None:  # an empty network (File > New): nothing to show
                self.result = None
                self.result_changed.emit()
            self._set_error(next(iter(errors.values())) if errors else "")
            return
        spec = self.simulated_spec()
        try:
            workload = self.choice.workload()  # a LoRA target typed wrong is one line, like a bad layer
            job = self._simulated.get((spec, workload)) if spec else None
            job = job or prepare_graph(graph, workload)
        except AdvisorError as error:
            self._set_error(str(error))
            return
        pending = spec is not None and job.estimate.method != "simulated" and self.runner is not None
        self._publish(ShownEstimate(job, graph, pending))
        if pending and spec is not None:
            self._simulate(spec, workload, graph)

    def _publish(self, result: ShownEstimate) -> None:
        self.result = result
        self._set_error("")
        self.result_changed.emit()

    def _simulate(self, spec: str, workload: Workload, graph: Graph) -> None:
        """The command line's own path (prepare_spec, method auto) on a worker; a result that arrives after
        the workload or the graph changed is kept for later but not shown."""
        assert self.runner is not None

        def done(job: RankingInput) -> None:
            self._simulated[(spec, workload)] = job
            if self.simulated_spec() == spec and self.choice.workload() == workload:
                self._publish(ShownEstimate(job, graph))

        def failed(error: BaseException) -> None:
            if self.result is not None and self.result.pending:
                self.result = dataclasses.replace(self.result, pending=False)
                self.result_changed.emit()
            self._set_error(f"{spec}: {error}")

        self.runner.start("simulate", tr("Simulating {file}").format(file=spec),
                          lambda _cancelled: prepare_spec(spec, workload), done, failed)

    def _set_error(self, message: str) -> None:
        self.error = message
        self.error_changed.emit(message)
