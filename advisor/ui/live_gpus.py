"""The Live GPUs panel: what the NVIDIA cards in this machine are doing, and whether the workload fits them.

QtLiveGpusPanel mirrors a telemetry Poller: a QTimer on the Qt thread asks the poller for its state (a copy
taken under the poller's lock; NVML is never called here) and redraws when a new poll has come in. Per card:
the figures ("n/a" where the card does not report one), its processes, 10-minute charts of memory, utilisation
and power, and the current workload's requirement drawn against the card's memory with a fits/does-not-fit
sentence. Without a GPU it says "No NVIDIA GPU found" and why.
"""

from __future__ import annotations

import math
from contextlib import AbstractContextManager
from typing import Any

from matplotlib.axes import Axes
from matplotlib.backends.backend_qtagg import FigureCanvasQTAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import QFrame, QGridLayout, QLabel, QScrollArea, QVBoxLayout, QWidget

from advisor.charts.style import ChartStyle, lettering
from advisor.telemetry.poller import DeviceHistory, Poller, PollerState
from advisor.telemetry.present import GIB, Fit, figures, fit, process_lines, series
from advisor.telemetry.readings import NO_GPU, DeviceReading
from advisor.ui.i18n import fonts, tr

FITS_COLOUR, NO_FIT_COLOUR = "#1b7f3b", "#b3261e"
# The labels of the figures grid, in order (the same rows `advisor.telemetry.present.figures` produces).
FIGURE_NAMES = [name for name, _ in figures(DeviceReading(index=0, name="", uuid=None))]


def _lettering() -> AbstractContextManager[None]:
    """Chart text in the app's language's font (Chinese needs Noto Sans CJK SC by name)."""
    return lettering(ChartStyle(text=tr, fonts=fonts()))


class _DeviceCharts:
    """Three stacked charts over the history window: memory (GiB), utilisation (%), power (W), on one canvas."""

    def __init__(self) -> None:
        with _lettering():
            self._build()

    def _build(self) -> None:
        figure = Figure(figsize=(6.4, 4.2), dpi=90, layout="constrained")
        # Any: matplotlib's Qt backend has no type hints.
        self.canvas: Any = FigureCanvasQTAgg(figure)  # type: ignore[no-untyped-call]
        self.canvas.setMinimumHeight(340)
        memory, util, power = figure.subplots(3, 1, sharex=True)
        self.axes: tuple[Axes, Axes, Axes] = (memory, util, power)
        self.lines: dict[str, Line2D] = {
            "memory_used": memory.plot([], [], color="#3366cc", label=tr("in use"))[0],
            "gpu_util": util.plot([], [], color="#dc3912", label=tr("GPU"))[0],
            "mem_util": util.plot([], [], color="#ff9900", label=tr("memory"))[0],
            "power": power.plot([], [], color="#109618", label=tr("draw"))[0],
        }
        self.total = memory.axhline(0, color="grey", linestyle=":", label=tr("total"))
        self.requirement = memory.axhline(0, color=FITS_COLOUR, linestyle="--", visible=False)
        self.power_limit = power.axhline(0, color="grey", linestyle=":", label=tr("limit"))
        for ax, unit in zip(self.axes, (tr("memory GiB"), tr("utilisation %"), tr("power W")), strict=True):
            ax.set_ylabel(unit, fontsize=8)
            ax.tick_params(labelsize=7)
            ax.grid(alpha=0.3)
        power.set_xlabel(tr("minutes ago"), fontsize=8)
        util.set_ylim(0, 105)

    def show_history(self, history: DeviceHistory, now: float, window_s: float) -> None:
        readings = history.readings
        for name, figure, scale in (
            ("memory_used", "memory_used_bytes", GIB),
            ("gpu_util", "gpu_util_pct", 1),
            ("mem_util", "mem_util_pct", 1),
            ("power", "power_draw_w", 1),
        ):
            self.lines[name].set_data(*series(readings, figure, now, scale))
        memory, _, power = self.axes
        memory.set_xlim(-window_s / 60, 0)
        total_gib = _known_max(readings, "memory_total_bytes") / GIB
        self.total.set_ydata([total_gib, total_gib])
        self.total.set_visible(total_gib > 0)
        memory.set_ylim(0, max(total_gib, _known_max(readings, "memory_used_bytes") / GIB, 1.0) * 1.05)
        limit = _known_max(readings, "power_limit_w")  # a lost card keeps the limit it had
        self.power_limit.set_ydata([limit, limit])
        self.power_limit.set_visible(limit > 0)
        power.set_ylim(0, max(limit, _known_max(readings, "power_draw_w"), 1.0) * 1.1)
        with _lettering():
            for ax in self.axes:
                ax.legend(loc="upper left", fontsize=6, ncols=3)
        self.canvas.draw_idle()

    def show_requirement(self, required_bytes: int | None, label: str, fits: bool | None) -> None:
        memory = self.axes[0]
        self.requirement.set_visible(required_bytes is not None)
        self.requirement.set_label("_hidden")  # a leading underscore keeps an artist out of the legend
        if required_bytes is not None:
            need = required_bytes / GIB
            self.requirement.set_ydata([need, need])
            self.requirement.set_color(FITS_COLOUR if fits is not False else NO_FIT_COLOUR)
            self.requirement.set_label(label or tr("workload"))
            bottom, top = memory.get_ylim()
            memory.set_ylim(bottom, max(top, need * 1.05))
        with _lettering():
            memory.legend(loc="upper left", fontsize=6, ncols=3)
        self.canvas.draw_idle()


def _known_max(readings: tuple[object, ...], figure: str) -> float:
    values = [getattr(r, figure) for r in readings]
    return float(max((v for v in values if v is not None and not math.isnan(v)), default=0.0))


def fit_sentence(verdict: Fit, label: str) -> str:
    """The fit sentence in the app's language (telemetry.present words it in English for the terminal)."""
    subject = f"{label} " if label else ""
    if verdict.fits is None or verdict.usable_gib is None:
        return tr("{subject}vs your {name}: memory n/a").format(subject=subject, name=verdict.device_name)
    values = {
        "subject": subject,
        "name": verdict.device_name,
        "need": f"{verdict.required_gib:.1f}",
        "usable": f"{verdict.usable_gib:.1f}",
    }
    if not verdict.fits:
        return tr("{subject}does not fit on your {name}: {need} of {usable} GiB").format(**values)
    sentence = tr("{subject}fits on your {name}: {need} of {usable} GiB").format(**values)
    if verdict.free_gib_if_short is not None:
        sentence += " " + tr("(but only {free} GiB are free now)").format(free=f"{verdict.free_gib_if_short:.1f}")
    return sentence


class QtDeviceCard(QFrame):
    """One card: title, error line, figures, processes, fit sentence, charts."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        layout = QVBoxLayout(self)
        self.title = QLabel()
        self.title.setStyleSheet("font-weight: bold; font-size: 14px;")
        self.error = QLabel()
        self.error.setStyleSheet(f"color: {NO_FIT_COLOUR};")
        self.error.setWordWrap(True)
        self.fit = QLabel()
        self.fit.setStyleSheet("font-weight: bold;")
        self.processes = QLabel()
        self.processes.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.values: dict[str, QLabel] = {}
        grid = QGridLayout()
        for position, name in enumerate(FIGURE_NAMES):
            row, column = divmod(position, 2)
            self.values[name] = QLabel()
            grid.addWidget(QLabel(tr("{figure}:").format(figure=tr(name))), row, column * 2)
            grid.addWidget(self.values[name], row, column * 2 + 1)
        self.charts = _DeviceCharts()
        for widget in (self.title, self.error, self.fit):
            layout.addWidget(widget)
        layout.addLayout(grid)
        layout.addWidget(self.processes)
        layout.addWidget(self.charts.canvas)

    def show_device(self, history: DeviceHistory, now: float, window_s: float) -> None:
        latest = history.latest
        gone = "" if history.present else "  " + tr("(disappeared)")
        self.title.setText(f"[{latest.index}] {latest.name}{gone}")
        problem = latest.error or ("" if history.present else tr("No longer listed by the NVIDIA driver."))
        self.error.setText(problem)
        self.error.setVisible(bool(problem))
        for name, text in figures(latest):
            self.values[name].setText(text)
        lines = process_lines(latest)
        unknown = latest.error is not None and latest.memory_total_bytes is None  # the card could not be asked
        listed = "; ".join(lines) or (tr("n/a") if unknown else tr("none"))
        self.processes.setText(tr("Processes: {list}").format(list=listed))
        self.charts.show_history(history, now, window_s)

    def show_requirement(self, history: DeviceHistory, required_bytes: int | None, label: str) -> None:
        if required_bytes is None:
            self.fit.setVisible(False)
            self.charts.show_requirement(None, label, None)
            return
        # Judged on the last reading that had figures, so that a lost card is still compared with its memory.
        known = [r for r in history.readings if r.memory_total_bytes is not None] or [history.latest]
        verdict = fit(known[-1], required_bytes, label)
        sentence = fit_sentence(verdict, label)
        if known[-1] is not history.latest:
            sentence += " " + tr("(its last reading)")
        colour = {True: FITS_COLOUR, False: NO_FIT_COLOUR, None: "grey"}[verdict.fits]
        self.fit.setText(sentence)
        self.fit.setStyleSheet(f"font-weight: bold; color: {colour};")
        self.fit.setVisible(True)
        self.charts.show_requirement(required_bytes, label, verdict.fits)


class QtLiveGpusPanel(QWidget):
    """Mirrors a Poller (owned by the app, which starts and stops it) and the workload's requirement."""

    def __init__(self, poller: Poller | None = None, refresh_ms: int = 1000, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._poller = poller
        self._state: PollerState | None = None
        self._requirement: tuple[int | None, str] = (None, "")
        self.cards: dict[str, QtDeviceCard] = {}
        self.status = QLabel(tr("Reading the GPUs…"))
        self.status.setWordWrap(True)
        self.status.setStyleSheet("font-size: 15px; padding: 4px;")
        self._column = QVBoxLayout()
        self._column.addStretch(1)
        inner = QWidget()
        inner.setLayout(self._column)
        self.scroll_area = QScrollArea()
        self.scroll_area.setWidgetResizable(True)
        self.scroll_area.setWidget(inner)
        self.scroll_area.setVisible(False)  # an empty frame under "No NVIDIA GPU found" looks like something failed
        layout = QVBoxLayout(self)
        layout.addWidget(self.status)
        layout.addWidget(self.scroll_area, 1)
        layout.addStretch(0)  # takes the space while the scroll area is hidden, so the status stays on top
        self.timer = QTimer(self)
        self.timer.setInterval(refresh_ms)
        self.timer.timeout.connect(self._tick)
        if poller is not None:
            self.timer.start()

    def _tick(self) -> None:
        # a hidden tab catches up when shown (showEvent): each card's charts cost ~0.2 s of CPU a draw, which
        # the app paid every second behind the other tabs (measured over 53 of the UI tests: 81 such draws,
        # 15 s, twice what the charts on screen took)
        if self.isVisible():
            self.refresh()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.refresh()

    def refresh(self) -> None:
        """Timer tick: copy the poller's state and redraw if a poll came in since the last tick."""
        if self._poller is None:
            return
        state = self._poller.state()
        if self._state is None or state.polls != self._state.polls:
            self.show_state(state)

    def show_state(self, state: PollerState) -> None:
        self._state = state
        self._show_status(state)
        self.scroll_area.setVisible(bool(state.devices))
        keys = [device.key for device in state.devices]
        for key in [k for k in self.cards if k not in keys]:
            self.cards.pop(key).deleteLater()
        snapshot_time = state.snapshot.timestamp if state.snapshot else 0.0
        now = max([snapshot_time, *(d.latest.timestamp for d in state.devices)])
        for position, device in enumerate(state.devices):
            card = self.cards.get(device.key)
            if card is None:
                card = self.cards[device.key] = QtDeviceCard()
            self._column.insertWidget(position, card)  # keeps the cards in the poller's order
            card.show_device(device, now, state.history_s)
            card.show_requirement(device, *self._requirement)

    def set_workload_requirement(self, required_bytes: int | None, label: str) -> None:
        """The current workload's memory need (required_bytes + CUDA context, as DESIGN.md says decides a fit);
        None clears it."""
        self._requirement = (required_bytes, label)
        if self._state is not None:
            for device in self._state.devices:
                self.cards[device.key].show_requirement(device, required_bytes, label)

    def _show_status(self, state: PollerState) -> None:
        snapshot = state.snapshot
        if snapshot is None:
            self.status.setText(tr("Reading the GPUs…"))
        elif not snapshot.devices:
            message = snapshot.message or NO_GPU
            self.status.setText(
                message.replace(NO_GPU, tr(NO_GPU), 1)
                + "\n\n"
                + tr(
                    "To see live readings here: an NVIDIA GPU with its driver installed (nvidia-smi should list it; "
                    "on Linux the distribution's nvidia-driver package, on Windows the driver from nvidia.com). The "
                    "app reads it through NVML, which comes with the driver and the nvidia-ml-py package advisor "
                    "installs. Without a GPU, the other tabs work in full."
                )
            )
        else:
            count = len(snapshot.devices)
            template = (
                tr("{count} NVIDIA GPU · NVIDIA driver {driver}")
                if count == 1
                else tr("{count} NVIDIA GPUs · NVIDIA driver {driver}")
            )
            self.status.setText(template.format(count=count, driver=snapshot.driver_version or tr("n/a")))
