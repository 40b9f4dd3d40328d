"""A background task whose window has closed ends quietly (the app printed 'RuntimeError: Signal source has been
deleted' on stderr when it was closed during an import)."""

from __future__ import annotations

import threading

import shiboken6
from pytestqt.qtbot import QtBot

from advisor.ui.workers import Task


def test_a_task_finishing_after_its_relay_was_deleted_raises_nothing(qtbot: QtBot) -> None:
    ran = threading.Event()
    task = Task(lambda cancelled: ran.set())
    shiboken6.delete(task.relay)  # what closing the window does to the QObject the result would travel through
    task.run()
    assert ran.is_set()


def test_a_failing_task_after_its_relay_was_deleted_raises_nothing(qtbot: QtBot) -> None:
    def work(cancelled: threading.Event) -> None:
        raise ValueError("bad file")

    task = Task(work)
    shiboken6.delete(task.relay)
    task.run()  # the error has no dialog left to go to; it must not escape the worker thread


def test_a_live_task_still_delivers_its_result(qtbot: QtBot) -> None:
    task = Task(lambda cancelled: 42)
    with qtbot.waitSignal(task.relay.finished, timeout=2000) as blocker:
        task.run()
    assert blocker.args == [42]
