"""The workload's "More options" rows, folded away by default: the attention kernel, TF32 and the allocator's
expandable segments; in training the loss, CPU offload, the loop dropping the logits and the transformers
release; in generation llama.cpp's -ngl and vLLM's engine settings. The same options as `advisor estimate
--attention --tf32 --expandable-segments --loss --offload --drop-logits --transformers-version --gpu-layers
--gpu-memory-utilization --max-num-seqs --max-num-batched-tokens --vllm-version` (the app had none of them:
issue 25); they write AppState.choice, whose workload() passes each only where its flag applies.

Folded, the common rows stay in view at 1280x720 (issue 27); the fold's button counts the options set away
from their defaults, so a setting out of sight is never a silent one."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QSpinBox,
    QToolButton,
    QWidget,
)

from advisor.appstate import WorkloadChoice
from advisor.core.vocabulary import AttentionImpl, LossImpl, Offload, TransformersRelease, VLLMRelease
from advisor.core.workload import Mode
from advisor.ui.controls import combo, narrow, spin_box
from advisor.ui.i18n import tr
from advisor.ui.state import AppState

DEFAULTS = WorkloadChoice()
ALL_LAYERS = -1  # the -ngl box's "all" (None in the choice: every repeating layer and the output)
MAX_GPU_LAYERS = 1024
MAX_SEQS = 1 << 16
MAX_BATCHED_TOKENS = 1 << 22


@dataclass(frozen=True)
class OptionRow:
    """One row: the choice field it shows, the widget, when it applies and what its tooltip says."""

    field: str
    label: str  # translated; "" for a check box, which names itself
    widget: QWidget
    applies: Callable[[WorkloadChoice], bool]
    tip: str


def _training(c: WorkloadChoice) -> bool:
    return c.mode == Mode.TRAIN


def _share_box() -> QDoubleSpinBox:
    box = QDoubleSpinBox()
    box.setRange(0.05, 1.0)  # Workload refuses 0 and above 1; below 5% no engine starts
    box.setSingleStep(0.05)
    box.setDecimals(2)
    return box


def _layers_box() -> QSpinBox:
    box = spin_box(MAX_GPU_LAYERS, low=ALL_LAYERS)
    box.setSpecialValueText(tr("all"))  # shown at the minimum: llama.cpp's -ngl 999, every layer and the output
    return box


class QtMoreOptions:
    """The fold button and its rows in the workload form; refresh() shows the choice and which rows apply."""

    def __init__(self, state: AppState, form: QFormLayout) -> None:
        self.state, self.form = state, form
        self.toggle = QToolButton()
        self.toggle.setCheckable(True)
        self.toggle.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.toggle.setAutoRaise(True)
        form.addRow(self.toggle)
        self.rows = self._rows()
        for row in self.rows:
            if row.label:
                form.addRow(row.label, row.widget)
            else:  # a check box says what it is
                form.addRow(row.widget)
        self.toggle.toggled.connect(lambda: self.refresh(self.state.choice))
        self._connect()

    def _rows(self) -> tuple[OptionRow, ...]:
        attention = combo(
            [("", tr("the model's")), *((a.value, a.value) for a in AttentionImpl)], ""
        )  # flash: flash_attention_2
        offload = combo(
            [
                ("", tr("none")),
                (Offload.OPTIMIZER.value, tr("optimizer state")),
                (Offload.PARAMS.value, tr("optimizer + weights")),
            ],
            "",
        )
        vllm = combo([(VLLMRelease.V0_19.value, "0.17–0.19"), (VLLMRelease.V0_16.value, tr("up to 0.16"))], "")
        for box in (attention, offload, vllm):
            narrow(box, 8)
        return (
            OptionRow(
                "attention",
                tr("Attention"),
                attention,
                lambda c: True,
                tr(
                    "transformers' attn_implementation, as --attention: eager keeps the scores and probabilities "
                    "(batch x heads x tokens²), sdpa and flash fused kernels only the output"
                ),
            ),
            OptionRow(
                "tf32",
                "",
                QCheckBox(tr("TF32 matmuls")),
                lambda c: True,
                tr("fp32 matmuls on TF32 tensor cores (torch.backends.cuda.matmul.allow_tf32), as --tf32: speed only"),
            ),
            OptionRow(
                "expandable_segments",
                "",
                QCheckBox(tr("Expandable segments")),
                lambda c: True,
                tr(
                    "PyTorch's allocator with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, as "
                    "--expandable-segments: less memory reserved beyond what is allocated"
                ),
            ),
            *self._training_rows(offload),
            *self._generation_rows(vllm),
        )

    @staticmethod
    def _training_rows(offload: QComboBox) -> tuple[OptionRow, ...]:
        loss = combo([(LossImpl.STANDARD.value, tr("standard")), (LossImpl.FUSED.value, tr("fused, chunked"))], "")
        release = combo([(r.value, r.value) for r in reversed(TransformersRelease)], "")
        return (
            OptionRow(
                "loss",
                tr("Loss"),
                loss,
                _training,
                tr(
                    "As --loss: fused computes the LM head and cross-entropy chunk by chunk (Liger, Cut "
                    "Cross-Entropy), so the full logits are never held"
                ),
            ),
            OptionRow(
                "offload",
                tr("CPU offload"),
                offload,
                _training,
                tr(
                    "As --offload: the optimizer state (+ weights: also the parameters) kept in system RAM, as "
                    "DeepSpeed ZeRO-Offload and FSDP CPU offload do"
                ),
            ),
            OptionRow(
                "drops_logits",
                "",
                QCheckBox(tr("The loop drops the logits")),
                _training,
                tr(
                    "As --drop-logits: the model's output is let go before backward, as transformers' Trainer "
                    "and torchtune do (a plain loop keeps it until the step ends)"
                ),
            ),
            OptionRow(
                "transformers_version",
                tr("transformers release"),
                release,
                _training,
                tr(
                    "As --transformers-version: 5 upcasts a copy of the logits in the loss; up to 4.45 the "
                    "output keeps fp32 logits and the loss reads a shifted fp32 copy"
                ),
            ),
        )

    @staticmethod
    def _generation_rows(vllm: QComboBox) -> tuple[OptionRow, ...]:
        return (
            OptionRow(
                "gpu_layers",
                tr("GPU layers"),
                _layers_box(),
                lambda c: c.llama_cpp,
                tr("llama.cpp's -ngl: repeating layers on the GPU, the rest in system RAM (all: every layer)"),
            ),
            OptionRow(
                "gpu_memory_utilization",
                tr("Memory share"),
                _share_box(),
                lambda c: c.vllm,
                tr("vLLM's --gpu-memory-utilization: the share of the card's memory the engine claims"),
            ),
            OptionRow(
                "max_num_seqs",
                tr("Max sequences"),
                spin_box(MAX_SEQS),
                lambda c: c.vllm,
                tr("vLLM's --max-num-seqs: sequences per step; its startup samples that many"),
            ),
            OptionRow(
                "max_num_batched_tokens",
                tr("Batched tokens"),
                spin_box(MAX_BATCHED_TOKENS),
                lambda c: c.vllm,
                tr("vLLM's --max-num-batched-tokens: the tokens of its startup profile's forward"),
            ),
            OptionRow(
                "vllm_version",
                tr("vLLM release"),
                vllm,
                lambda c: c.vllm,
                tr(
                    "As --vllm-version: 0.17 to 0.19 capture the CUDA graphs after the share; up to 0.16 the "
                    "profile sorts a vocabulary row per sequence"
                ),
            ),
        )

    def _connect(self) -> None:
        for row in self.rows:
            w = row.widget
            if isinstance(w, QCheckBox):
                w.toggled.connect(lambda on, f=row.field: self.state.set_choice(**{f: on}))
            elif isinstance(w, QComboBox):
                w.currentIndexChanged.connect(
                    lambda _i, f=row.field, b=w: self.state.set_choice(**{f: b.currentData() or None})
                )
            elif isinstance(w, QSpinBox | QDoubleSpinBox):
                # an arrow click at once, typing on Enter or leaving the box: typing 4096 is not four estimates
                w.setKeyboardTracking(False)
                w.valueChanged.connect(lambda v, f=row.field: self.state.set_choice(**{f: _spin_value(f, v)}))

    def changed(self, c: WorkloadChoice) -> list[str]:
        """The options that apply to this workload and are set away from their defaults."""
        return [r.field for r in self.rows if r.applies(c) and getattr(c, r.field) != getattr(DEFAULTS, r.field)]

    def refresh(self, c: WorkloadChoice) -> None:
        for row in self.rows:
            _show(row.widget, getattr(c, row.field))
            row.widget.setToolTip(row.tip)
            self.form.setRowVisible(row.widget, self.toggle.isChecked() and row.applies(c))
        count = len(self.changed(c))
        self.toggle.setArrowType(Qt.ArrowType.DownArrow if self.toggle.isChecked() else Qt.ArrowType.RightArrow)
        self.toggle.setText(tr("More options ({count} set)").format(count=count) if count else tr("More options"))
        self.toggle.setToolTip(
            tr("Attention, TF32, the allocator; the training loop's options; llama.cpp's and vLLM's settings")
        )


def _spin_value(field: str, value: float) -> float | None:
    """The box's value as the choice holds it: -ngl's "all" is None."""
    return None if field == "gpu_layers" and value == ALL_LAYERS else value


def _show(widget: QWidget, value: object) -> None:
    """The widget shows `value` without writing it back."""
    widget.blockSignals(True)
    if isinstance(widget, QCheckBox):
        widget.setChecked(bool(value))
    elif isinstance(widget, QComboBox):
        widget.setCurrentIndex(max(0, widget.findData("" if value is None else str(value))))
    elif isinstance(widget, QDoubleSpinBox):
        widget.setValue(float(value))  # type: ignore[arg-type]
    elif isinstance(widget, QSpinBox):
        widget.setValue(ALL_LAYERS if value is None else int(value))  # type: ignore[call-overload]
    widget.blockSignals(False)
