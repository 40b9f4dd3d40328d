"""Work off the UI thread: a QRunnable per task, results delivered back on the UI thread by signal.

Python work cannot be interrupted safely, so Cancel marks the task: its result is dropped when it arrives,
and the work itself checks `cancelled` where it can stop early. A newer task of the same kind supersedes
an older one the same way, so a slider or a filter never queues up stale work.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QRunnable, Qt, QThreadPool, Signal, Slot
from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QPushButton, QWidget

from advisor.ui.i18n import tr


class _Relay(QObject):
    finished = Signal(object)
    failed = Signal(object)


class _Receiver(QObject):
    """Lives on the UI thread, so a queued connection to its slots runs the callback there."""

    def __init__(self, callback: Callable[[object, bool], None], parent: QObject) -> None:
        super().__init__(parent)
        self.callback = callback

    @Slot(object)
    def on_finished(self, result: object) -> None:
        self.callback(result, True)
        self.deleteLater()

    @Slot(object)
    def on_failed(self, error: object) -> None:
        self.callback(error, False)
        self.deleteLater()


class Task(QRunnable):
    def __init__(self, work: Callable[[threading.Event], Any]) -> None:
        super().__init__()
        self.work = work
        self.cancelled = threading.Event()
        self.relay = _Relay()
        self.setAutoDelete(False)  # the runner keeps it until its signal has been handled

    def run(self) -> None:
        try:
            result = self.work(self.cancelled)
        except Exception as error:  # delivered to the UI thread, which shows it in a dialog
            self._deliver(self.relay.failed, error)
            return
        self._deliver(self.relay.finished, result)

    @staticmethod
    def _deliver(signal: Any, payload: object) -> None:
        # "Signal source has been deleted": the window closed while this ran, and no one waits for the result
        with contextlib.suppress(RuntimeError):
            signal.emit(payload)


class TaskRunner(QObject):
    """Runs named tasks; one live task per name. `busy` says what is running, for the progress bar."""

    busy = Signal(str)  # the label of the task now running, "" when idle
    cancelled = Signal(list)  # the names of the tasks Cancel stopped (not those a newer task superseded)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.pool = QThreadPool(self)
        self.pool.setMaxThreadCount(2)
        self._live: dict[str, tuple[Task, str]] = {}

    def start(
        self,
        name: str,
        label: str,
        work: Callable[[threading.Event], Any],
        done: Callable[[Any], object],
        failed: Callable[[BaseException], object],
    ) -> Task:
        self.cancel(name)
        task = Task(work)
        self._live[name] = (task, label)

        def finish(result: object, ok: bool) -> None:
            if self._live.get(name, (None, ""))[0] is not task or task.cancelled.is_set():
                return  # cancelled or superseded: drop it
            del self._live[name]
            self._announce()
            if ok:
                done(result)
            else:
                failed(result)  # type: ignore[arg-type]

        receiver = _Receiver(finish, self)
        task.relay.finished.connect(receiver.on_finished, Qt.ConnectionType.QueuedConnection)
        task.relay.failed.connect(receiver.on_failed, Qt.ConnectionType.QueuedConnection)
        self.pool.start(task)
        self._announce()
        return task

    def cancel(self, name: str | None = None) -> None:
        """Stops `name`, or every task (Cancel, closing): then `cancelled` says which, so their "…ing" goes."""
        stopped = []
        for key in [name] if name else list(self._live):
            entry = self._live.pop(key, None) if key else None
            if entry:
                entry[0].cancelled.set()
                stopped.append(key)
        self._announce()
        if name is None and stopped:
            self.cancelled.emit(stopped)

    def running(self, name: str) -> bool:
        return name in self._live

    def _announce(self) -> None:
        self.busy.emit(", ".join(label for _task, label in self._live.values()))

    def wait(self, msecs: int = 10000) -> bool:
        return bool(self.pool.waitForDone(msecs))


class QtTaskBar(QWidget):
    """Progress bar and Cancel button for the status bar; hidden while nothing runs."""

    def __init__(self, runner: TaskRunner, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.runner = runner
        self.label = QLabel()
        self.bar = QProgressBar()
        self.bar.setRange(0, 0)  # the engine reports no fraction done: a busy indicator
        self.bar.setMaximumWidth(160)
        self.cancel_button = QPushButton(tr("Cancel"))
        self.cancel_button.clicked.connect(lambda: runner.cancel())
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        for widget in (self.label, self.bar, self.cancel_button):
            layout.addWidget(widget)
        runner.busy.connect(self.show_busy)
        self.setVisible(False)

    @Slot(str)
    def show_busy(self, label: str) -> None:
        self.label.setText(label)
        self.setVisible(bool(label))
