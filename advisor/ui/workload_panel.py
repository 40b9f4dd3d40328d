"""Workload controls: mode, batch (slider and box), sequence length, precision, optimizer, checkpointing,
in-place activations. They show AppState.choice and write every change back to it."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QCheckBox, QFormLayout, QHBoxLayout, QSlider, QSpinBox, QWidget

from advisor.core import zoo
from advisor.core.workload import Mode
from advisor.recommend.rewrites import with_inplace_activations
from advisor.ui.controls import combo
from advisor.ui.i18n import tr
from advisor.ui.state import AppState
from advisor.ui.workload_llm import LanguageModelControls, applies, offer_generation
from advisor.ui.workload_options import QtMoreOptions

SLIDER_MAX = 1024


class QtWorkloadControls(QWidget):
    def __init__(self, state: AppState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.state = state
        self.mode = combo(
            [("train", tr("Training step")), ("infer", tr("Inference")), ("generate", tr("Generation"))],
            tr(
                "Training keeps activations, gradients and optimizer state; inference only the "
                "forward pass; generation prefills a prompt, then decodes tokens with a KV cache"
            ),
        )
        self.batch_slider = QSlider(Qt.Orientation.Horizontal)
        self.batch_slider.setRange(1, SLIDER_MAX)
        self.batch_slider.setToolTip(tr("Samples per step on one card; the breakdown follows as you drag"))
        self.batch = QSpinBox()
        self.batch.setRange(1, 1 << 20)
        self.seq_len = QSpinBox()
        self.seq_len.setRange(1, 1 << 20)
        self.precision = combo(
            [
                ("fp32", "fp32"),
                ("amp_bf16", tr("AMP bf16")),
                ("amp_fp16", tr("AMP fp16")),
                ("bf16", tr("pure bf16")),
                ("fp16", tr("pure fp16")),
            ],
            tr("AMP keeps fp32 weights and computes matmuls in half precision"),
        )
        self.optimizer = combo(
            [
                ("sgd", "SGD"),
                ("sgd_momentum", tr("SGD with momentum")),
                ("adam", "Adam"),
                ("adamw", "AdamW"),
                # as --optimizer: bitsandbytes' 8-bit AdamW (paged: its state in unified memory), transformers'
                # Adafactor, Lion (core/optimizers.py); the app offered only the four torch.optim ones (issue 25)
                ("adamw8bit", tr("AdamW 8-bit")),
                ("paged_adamw8bit", tr("paged AdamW 8-bit")),
                ("adafactor", "Adafactor"),
                ("lion", "Lion"),
            ],
            "",
        )  # its tooltip: refresh()
        self.checkpointing = QCheckBox(tr("Gradient checkpointing"))
        self.inplace = QCheckBox(tr("In-place activations"))
        batch_row = QHBoxLayout()
        batch_row.addWidget(self.batch_slider, 1)
        batch_row.addWidget(self.batch)
        form = self.form = QFormLayout(self)
        form.addRow(tr("Mode"), self.mode)
        form.addRow(tr("Batch"), batch_row)
        form.addRow(tr("Sequence length"), self.seq_len)
        form.addRow(tr("Precision"), self.precision)
        form.addRow(tr("Optimizer"), self.optimizer)
        form.addRow(self.checkpointing)
        form.addRow(self.inplace)
        self.llm = LanguageModelControls(state, form)
        self.more = QtMoreOptions(state, form)
        self.refresh()
        self._connect()
        state.workload_changed.connect(self.refresh)
        state.draft.changed.connect(self.refresh)

    def _connect(self) -> None:
        s = self.state
        self.mode.currentIndexChanged.connect(lambda: s.set_choice(mode=self.mode.currentData()))
        self.batch_slider.valueChanged.connect(lambda v: s.set_choice(batch=v))
        self.batch.valueChanged.connect(lambda v: s.set_choice(batch=v))
        self.seq_len.editingFinished.connect(lambda: s.set_choice(seq_len=self.seq_len.value()))
        self.precision.currentIndexChanged.connect(lambda: s.set_choice(precision=self.precision.currentData()))
        self.optimizer.currentIndexChanged.connect(lambda: s.set_choice(optimizer=self.optimizer.currentData()))
        self.checkpointing.toggled.connect(lambda on: s.set_choice(checkpointing=on))
        self.inplace.toggled.connect(lambda on: s.set_choice(inplace=on))

    def refresh(self) -> None:
        c = self.state.choice
        precision, checkpointing, _ = c.effective()
        combos = ((self.mode, c.mode), (self.precision, precision), (self.optimizer, c.optimizer))
        for widget, value in combos:
            widget.blockSignals(True)
            widget.setCurrentIndex(max(0, widget.findData(value)))
            widget.blockSignals(False)
        for spin, number in (
            (self.batch_slider, min(c.batch, SLIDER_MAX)),
            (self.batch, c.batch),
            (self.seq_len, c.seq_len),
        ):
            spin.blockSignals(True)
            spin.setValue(number)
            spin.blockSignals(False)
        graph = self.state.draft.result.graph
        built_in_place = graph is not None and with_inplace_activations(graph) == graph
        for box, on in ((self.checkpointing, checkpointing), (self.inplace, c.inplace or built_in_place)):
            box.blockSignals(True)
            box.setChecked(on)
            box.blockSignals(False)
        # a model whose activations already work in place (the zoo's ReLU(inplace=True)): ticked, nothing to add
        applies(
            self.inplace,
            not built_in_place and c.mode != Mode.GENERATE,
            tr("ReLU(inplace=True) and friends write into their input"),
            tr("This model's activations already work in place")
            if built_in_place
            else tr("Generation rebuilds the prefill from the model's configuration, not from these layers"),
        )
        source = self.state.draft.source  # only the zoo's sequence models are rebuilt at another length
        name = source.removeprefix("zoo:")
        rebuilt = source.startswith("zoo:") and name in zoo.zoo_names() and zoo.takes_seq_len(name)
        applies(
            self.seq_len,
            rebuilt and c.mode != Mode.GENERATE,
            tr("Tokens per sample for sequence models of the zoo"),
            tr("Generation uses the prompt length and new tokens")
            if c.mode == Mode.GENERATE
            else tr("Only the zoo's sequence models are rebuilt at another length"),
        )
        only_training = tr("Applies to training only")
        applies(
            self.optimizer,
            c.mode == Mode.TRAIN,
            tr(
                "Adam keeps two states per parameter, momentum one; 8-bit AdamW two of one byte (paged: in "
                "unified memory, off the card's peak), Adafactor a factored second moment, Lion one fp32 state"
            ),
            only_training,
        )
        applies(
            self.checkpointing,
            c.mode == Mode.TRAIN,
            tr("Recompute each block in backward: less memory, about one more forward"),
            only_training,
        )
        # a row that does not apply to the mode is hidden, not only greyed: at 1280x720 every row of the mode
        # chosen, the language-model ones included, is then in view without scrolling (issue 27)
        rows: tuple[tuple[QWidget, bool], ...] = (
            (self.seq_len, c.mode != Mode.GENERATE),
            (self.optimizer, c.mode == Mode.TRAIN),
            (self.checkpointing, c.mode == Mode.TRAIN),
            (self.inplace, c.mode != Mode.GENERATE),
        )
        for row_widget, shown in rows:
            self.form.setRowVisible(row_widget, shown)
        self.llm.refresh(c)
        self.more.refresh(c)
        offer_generation(self.mode, graph, c.mode)
