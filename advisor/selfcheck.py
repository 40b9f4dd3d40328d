"""`advisor --self-check`: does this installation work? Run after a pip install or on a packaged build.

It seeds a catalog from the bundled data into a temporary folder (the user's catalog and settings are never
touched), runs one analytic estimate of a zoo model, then builds the main window as the app does (temporary
QSettings, the real NVML reader), waits until the window has opened the catalog and ranked the cards, renders
it without showing it and closes it. Without a display (no DISPLAY / WAYLAND_DISPLAY on Linux) it sets
QT_QPA_PLATFORM=offscreen itself. One line per check on stdout; exit code 0 when every check passed, 1 with
a "self-check FAILED" line naming the failed checks otherwise. Lines starting "info" report what is optional
(torch, onnx, safetensors, the Chinese font, GPUs in this machine) and never fail the check.
"""

from __future__ import annotations

import importlib.util
import os
import platform
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from advisor import DISTRIBUTION, __version__

WINDOW_TIMEOUT_S = 60.0  # the catalog opens and the ranking runs on workers; a slow disk or CPU needs time
MODEL = "zoo:resnet50"
CJK_FONT = "Noto Sans CJK SC"
# Optional packages and what they enable; the packaged app is built without them (packaging/README.md).
OPTIONAL = (
    ("torch", "PyTorch models (FILE.py, .pt, .pt2, torchvision:, timm:, hf:)", f"{DISTRIBUTION}[torch]"),
    ("onnx", ".onnx models", f"{DISTRIBUTION}[onnx]"),
    ("safetensors", ".safetensors weights", f"{DISTRIBUTION}[safetensors]"),
    ("huggingface_hub", "Hub ids (hf:ORG/NAME)", f"{DISTRIBUTION}[hub]"),
    ("gguf", ".gguf files", f"{DISTRIBUTION}[gguf]"),
)


class CheckFailed(Exception):
    """A check's own verdict (as opposed to an unexpected exception, which fails the check just the same)."""


@dataclass
class Report:
    out: TextIO
    failed: list[str] = field(default_factory=list)

    def line(self, status: str, name: str, text: str) -> None:
        print(f"{status:<5}{name:<13}{text}", file=self.out, flush=True)

    def run(self, name: str, check: Callable[[], str]) -> bool:
        started = time.perf_counter()
        try:
            text = check()
        except Exception as error:  # every failure becomes one line; the check goes on
            self.failed.append(name)
            said = str(error) if isinstance(error, CheckFailed) else f"{type(error).__name__}: {error}"
            self.line("FAIL", name, " ".join(said.split()))  # one line, whatever the exception's text
            return False
        self.line("ok", name, f"{text} ({time.perf_counter() - started:.2f} s)")
        return True


def frozen() -> bool:
    """True in a PyInstaller build."""
    return bool(getattr(sys, "frozen", False))


def needs_offscreen(environ: dict[str, str] | os._Environ[str], system: str) -> bool:
    """No display to talk to: Linux (and other X11/Wayland systems) without DISPLAY and WAYLAND_DISPLAY."""
    if environ.get("QT_QPA_PLATFORM"):
        return False
    if system in ("Windows", "Darwin"):
        return False
    return not environ.get("DISPLAY") and not environ.get("WAYLAND_DISPLAY")


def check_data() -> str:
    from advisor.catalog.bundled import DATA_FILES, bundled_dir

    directory = bundled_dir()
    missing = [name for name in DATA_FILES if not (directory / name).is_file()]
    if missing:
        raise CheckFailed(f"bundled data missing in {directory}: {', '.join(missing)}")
    return f"bundled data in {directory}"


def check_catalog(path: Path) -> str:
    from advisor.catalog import open_catalog
    from advisor.catalog.repository import list_cards, price_history

    catalog = open_catalog(path)
    try:
        with catalog.read() as session:
            cards = list_cards(session)
            if not cards:
                raise CheckFailed(f"the catalog seeded at {path} has no cards")
            priced = sum(1 for card in cards if price_history(session, card.name))
    finally:
        catalog.close()
    return f"seeded a temporary catalog: {len(cards)} cards, {priced} with prices"


def check_estimate() -> str:
    from advisor.core.workload import Mode, OptimizerName, Precision, Workload
    from advisor.importers.spec_estimate import estimate_spec

    result = estimate_spec(
        MODEL,
        Workload(mode=Mode.TRAIN, batch=32, precision=Precision.FP32, optimizer=OptimizerName.ADAM),
        method="analytic",
    )
    if result.memory.peak_bytes <= 0 or result.param_count <= 0:
        raise CheckFailed(f"{MODEL}: implausible estimate (peak {result.memory.peak_bytes} bytes)")
    return (
        f"{MODEL} training, batch 32, fp32, adam: {result.param_count / 1e6:.1f} M parameters, "
        f"peak {result.memory.peak_bytes / 2**30:.2f} GiB ({result.method})"
    )


def check_translations() -> str:
    from advisor.i18n import translator
    from advisor.i18n.zh_CN import MESSAGES

    key = next(iter(MESSAGES))
    if translator("zh_CN")(key) != MESSAGES[key]:
        raise CheckFailed("the zh_CN catalogue is not used by the translator")
    return f"zh_CN: {len(MESSAGES)} strings"


def _wait(condition: Callable[[], bool], timeout_s: float) -> bool:
    from PySide6.QtCore import QCoreApplication, QEventLoop

    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            return False
        QCoreApplication.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 50)
        time.sleep(0.005)
    return True


def check_window(catalog_file: Path, settings_file: Path) -> str:
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication, QMessageBox

    from advisor.telemetry.nvml import NvmlReader
    from advisor.ui.app import make_window
    from advisor.ui.main_window import QtMainWindow

    _app = QApplication.instance() or QApplication(["advisor"])  # kept referenced while the window lives
    settings = QSettings(str(settings_file), QSettings.Format.IniFormat)
    settings.setValue("language", "en")
    window = make_window(settings, str(catalog_file), NvmlReader())
    if not isinstance(window, QtMainWindow):
        raise CheckFailed(f"make_window returned {type(window).__name__}")
    ranked: list[bool] = []
    window.recommendations.ranked.connect(lambda: ranked.append(True))

    def errors() -> list[str]:
        boxes = window.findChildren(QMessageBox)
        return [f"{box.windowTitle()}: {box.text()}" for box in boxes if box.objectName() == "error_dialog"]

    try:
        done = _wait(lambda: bool(ranked or errors()), WINDOW_TIMEOUT_S)
        if errors():
            raise CheckFailed("; ".join(errors()))
        if not done:
            opened = "opened" if window.catalog.catalog is not None else "did not open"
            raise CheckFailed(f"no ranking within {WINDOW_TIMEOUT_S:.0f} s (the catalog {opened})")
        if window.state.result is None:
            raise CheckFailed("the window has no estimate of its model")
        image = window.grab()
        if image.isNull():
            raise CheckFailed("the window did not render")
        rows = window.recommendations.model.rowCount()
    finally:
        window.close()  # saves the (temporary) settings, cancels workers, stops the GPU poller
        window.runner.wait()
        window.catalog.close()
        settings.sync()  # closing set the geometry after its own sync; unsynced, QSettings would write it at exit
    return (
        f"main window on the {QApplication.platformName()} platform: {window.tabs.count()} tabs, "
        f"{window.state.draft.source or 'model'} estimated, {rows} cards ranked, rendered "
        f"{image.width()}x{image.height()}"
    )


def report_optional(report: Report) -> None:
    for package, enables, extra in OPTIONAL:
        label = extra[extra.index("[") + 1 : -1]  # the extra's name: huggingface_hub is "hub"
        try:
            found = importlib.util.find_spec(package) is not None
        except (ImportError, ValueError):  # a broken install, or the module blocked in sys.modules
            found = False
        if found:
            report.line("info", label, f"installed: {enables} can be imported")
        elif frozen():
            report.line("info", label, f"not in this packaged build: {enables} need `pip install {extra}`")
        else:
            report.line("info", label, f"not installed: {enables} need `pip install {extra}`")


def report_font(report: Report) -> None:
    from PySide6.QtGui import QFontDatabase, QGuiApplication

    if QGuiApplication.instance() is None:  # the window check did not get as far as starting Qt
        report.line("info", "font", "not looked for: Qt did not start")
    elif CJK_FONT in QFontDatabase.families():
        report.line("info", "font", f"{CJK_FONT} found (Chinese interface)")
    else:
        report.line(
            "info",
            "font",
            f"{CJK_FONT} not found: Chinese text uses the system's fallback font "
            "(Debian/Ubuntu: apt install fonts-noto-cjk)",
        )


def report_gpus(report: Report) -> None:
    from advisor.telemetry.nvml import NvmlReader

    reader = NvmlReader()
    try:
        snapshot = reader.read()
    finally:
        reader.close()
    if snapshot.devices:
        names = ", ".join(device.name for device in snapshot.devices)
        report.line("info", "gpus", f"{len(snapshot.devices)} NVIDIA GPU(s): {names}")
    else:
        report.line("info", "gpus", snapshot.message or "no NVIDIA GPU found")


def run(out: TextIO | None = None) -> int:
    """All checks; 0 when every one passed. Prints one line each."""
    started = time.perf_counter()
    report = Report(out or sys.stdout)
    system = platform.system()
    if needs_offscreen(os.environ, system):
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    build = "packaged build" if frozen() else f"Python {platform.python_version()}"
    print(
        f"advisor {__version__} self-check ({DISTRIBUTION} on the package index; {build}, {system} "
        f"{platform.machine()}; from {Path(__file__).parent})",
        file=report.out,
        flush=True,
    )
    with tempfile.TemporaryDirectory(prefix="advisor-self-check-") as folder:
        catalog_file = Path(folder) / "catalog.sqlite3"
        report.run("data", check_data)
        catalog_ok = report.run("catalog", lambda: check_catalog(catalog_file))
        report.run("estimate", check_estimate)
        report.run("translations", check_translations)
        if catalog_ok:
            report.run("window", lambda: check_window(catalog_file, Path(folder) / "settings.ini"))
        else:
            report.failed.append("window")
            report.line("FAIL", "window", "not tried: the catalog check failed")
        report_optional(report)
        for extra in (report_font, report_gpus):
            try:
                extra(report)
            except Exception as error:  # information only; never fails the check
                report.line("info", extra.__name__.removeprefix("report_"), f"could not tell: {error}")
    elapsed = time.perf_counter() - started
    if report.failed:
        print(f"self-check FAILED ({', '.join(report.failed)}) in {elapsed:.2f} s", file=report.out, flush=True)
        return 1
    print(f"self-check passed in {elapsed:.2f} s", file=report.out, flush=True)
    return 0
