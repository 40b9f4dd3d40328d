"""The headline numbers of an estimate, each with a tooltip saying how it was computed."""

from __future__ import annotations

from PySide6.QtWidgets import QGridLayout, QLabel, QWidget

from advisor.core.budget import REPLAY_MARGIN_BYTES
from advisor.core.estimate import Estimate
from advisor.core.units import format_bytes, format_count
from advisor.ui.i18n import tr


def _step_how(e: Estimate) -> str:
    if e.workload.training:
        return tr("Forward + backward (backward: one forward for weight gradients, one for input gradients)")
    if e.generation is not None:
        return tr("Prefill of the prompts + every decode step ({new} tokens per sequence)").format(
            new=e.workload.new_tokens
        )
    return tr("Inference: the forward pass only")


def _peak_template(layer: str) -> str:
    """The peak's place: its phase and layer, or the phase alone where no layer runs yet (llama.cpp's context)."""
    if layer:
        return tr(
            "Largest total of live tensors while replaying one step ({phase}, {layer}); "
            "= {fixed} fixed + {batch} x {per} per sample"
        )
    return tr(
        "Largest total of live tensors while replaying one step ({phase}); = {fixed} fixed + {batch} x {per} per sample"
    )


def kv_cache_item(e: Estimate) -> list[tuple[str, str, str]]:
    """Generation's KV cache, with the arithmetic that gives it (none in the other modes)."""
    g, w = e.generation, e.workload
    if g is None:
        return []
    return [
        (
            tr("KV cache"),
            format_bytes(e.memory.at_peak.kv_cache),
            tr(
                "Keys and values of every token of every sequence: batch {batch} x ({prompt} prompt + {new} new "
                "tokens) x {per_token} per token ({layers} layers, {kv_heads} KV heads), stored as {dtype}"
            ).format(
                batch=w.batch,
                prompt=w.prompt_len,
                new=w.new_tokens,
                per_token=format_bytes(g.kv_bytes_per_token),
                layers=g.layers,
                kv_heads=g.kv_heads,
                dtype=w.kv_cache_dtype,
            ),
        )
    ]


def summary_items(e: Estimate, trainable: int | None = None) -> list[tuple[str, str, str]]:
    """(label, value, how it was computed) for each headline number; `trainable`: the adapters' parameters
    where only they train (LoRA/QLoRA)."""
    m, w = e.memory, e.workload
    params = (
        tr("Parameters"),
        f"{format_count(e.param_count)}",
        tr("Sum of the trainable parameters of every layer: {n:,}").format(n=e.param_count),
    )
    if trainable is not None:
        params = (
            tr("Parameters"),
            tr("{total} ({trainable} train)").format(
                total=format_count(e.param_count), trainable=format_count(trainable)
            ),
            tr("{n:,} in all; only the {trainable:,} of the LoRA adapters have gradients and optimizer state").format(
                n=e.param_count, trainable=trainable
            ),
        )
    return [
        params,
        (
            tr("Forward"),
            f"{format_count(e.forward_flops)} FLOPs",
            tr("2 x {macs} MACs (multiply-adds of conv/linear/matmul) + elementwise work, over batch {batch}").format(
                macs=format_count(e.forward_macs), batch=w.batch
            ),
        ),
        (tr("Step"), f"{format_count(e.step_flops)} FLOPs", _step_how(e)),
        (
            tr("Peak allocated"),
            format_bytes(m.peak_bytes),
            _peak_template(m.peak_layer).format(
                phase=tr(m.peak_phase),
                layer=m.peak_layer,
                fixed=format_bytes(m.fixed_bytes),
                batch=w.batch,
                per=format_bytes(m.per_sample_bytes),
            ),
        ),
        (
            tr("Required"),
            format_bytes(m.required_bytes),
            tr(
                "The smallest allocator budget the step runs in: PyTorch's caching allocator replayed under a limit "
                "(what it cannot reuse), plus {share} and, with convolutions, a cuDNN workspace"
            ).format(share=f"{REPLAY_MARGIN_BYTES // 2**20} MiB"),
        ),
        (
            tr("Reserved"),
            format_bytes(m.reserved_bytes),
            tr("What PyTorch's caching allocator would hold at the peak with plenty of memory"),
        ),
        (
            tr("nvidia-smi"),
            format_bytes(m.device_total_bytes),
            tr("Reserved + CUDA context and library workspaces: what nvidia-smi would show"),
        ),
        *kv_cache_item(e),
    ]


def method_line(method: str, pending: bool, edited: bool, cancelled: bool = False) -> str:
    """Which method made the figures on screen (DESIGN.md: analytic or simulated), and why."""
    if method == "simulated":
        return tr("Method: simulated (one real PyTorch step of the file, on the meta device, as the command line does)")
    if pending:
        return tr("Method: analytic for now; simulating the PyTorch file (the command line's method)…")
    if cancelled:
        return tr(
            "Method: analytic; the simulation of the PyTorch file was cancelled (change the workload or "
            "open the file again to simulate)"
        )
    if edited:
        return tr("Method: analytic, because the imported graph was edited (the simulation runs the file as written)")
    return tr("Method: analytic (layer formulas over the graph)")


PER_ROW = 3  # label/value pairs per row: four would make the window wider than a 1280-pixel screen


class QtSummary(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.grid = QGridLayout(self)
        self.grid.setContentsMargins(4, 4, 4, 4)
        self.values: dict[str, QLabel] = {}

    def set_estimate(self, e: Estimate | None, trainable: int | None = None) -> None:
        while self.grid.count():
            item = self.grid.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None:  # hidden now: deleteLater waits for the event loop, and it must not show
                widget.hide()
                widget.deleteLater()
        self.values = {}
        if e is None:
            self.grid.addWidget(QLabel(tr("No estimate yet")), 0, 0)
            return
        for index, (label, value, how) in enumerate(summary_items(e, trainable)):
            name, number = QLabel(label + ":"), QLabel(f"<b>{value}</b>")
            for widget in (name, number):
                widget.setToolTip(how)
            row, column = divmod(index, PER_ROW)
            self.grid.addWidget(name, row, 2 * column)
            self.grid.addWidget(number, row, 2 * column + 1)
            self.values[label] = number
