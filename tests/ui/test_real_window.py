"""The README's first command (`advisor`, no arguments) opens a real window on a real X server.

The other UI tests run on Qt's offscreen platform, which needs none of the libraries the xcb plugin (a real
desktop) links to; this one starts Xvfb on a free display, runs `python -m advisor` under the xcb platform,
finds its window with xwininfo, takes a screenshot of the X screen from a second Qt client, and closes it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

TITLE = "Advisor: which GPU for your network"
SCREENSHOT = """
import sys
from PySide6.QtGui import QGuiApplication
app = QGuiApplication(["shot"])
image = app.primaryScreen().grabWindow(0).toImage()  # window 0: the X root, what a monitor would show
lit = sum(1 for x in range(0, image.width(), 8) for y in range(0, image.height(), 8)
          if image.pixelColor(x, y).lightness() > 40)
image.save(sys.argv[1])
print(lit)
"""


@pytest.fixture
def display() -> Iterator[str]:
    """A fresh Xvfb at 1366x768; -displayfd makes the server pick a free display number and tell us."""
    read_end, write_end = os.pipe()
    server = subprocess.Popen(
        ["Xvfb", "-displayfd", str(write_end), "-screen", "0", "1366x768x24", "-nolisten", "tcp"],
        pass_fds=(write_end,),
        stderr=subprocess.DEVNULL,
    )
    os.close(write_end)
    with os.fdopen(read_end) as pipe:
        number = pipe.readline().strip()
    assert number.isdigit(), "Xvfb did not start"
    yield f":{number}"
    server.terminate()
    server.wait(10)


def _window_listed(env: dict[str, str]) -> bool:
    tree = subprocess.run(["xwininfo", "-root", "-tree"], env=env, capture_output=True, text=True, check=False)
    return TITLE in tree.stdout


def test_advisor_opens_a_real_window(display: str, tmp_path: Path, catalog_file: Path) -> None:
    env = dict(
        os.environ,
        DISPLAY=display,
        QT_QPA_PLATFORM="xcb",
        HOME=str(tmp_path),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        ADVISOR_CATALOG=str(catalog_file),
    )
    app = subprocess.Popen(
        [sys.executable, "-m", "advisor"], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    try:
        deadline = time.monotonic() + 90
        while not _window_listed(env):
            assert app.poll() is None, f"advisor exited: {app.stdout.read() if app.stdout else ''}"
            assert time.monotonic() < deadline, "no advisor window on the X server after 90 s"
            time.sleep(0.5)
        time.sleep(2)  # let it paint
        shot = tmp_path / "real_window.png"
        lit = subprocess.run(
            [sys.executable, "-c", SCREENSHOT, str(shot)],
            env=env,
            capture_output=True,
            text=True,
            check=True,
            timeout=60,
        )
        # Xvfb's root is black; the window (light widgets) covers much of the 171x96 sampled points
        assert int(lit.stdout.strip()) > 171 * 96 // 4
        assert shot.stat().st_size > 10_000
    finally:
        app.send_signal(signal.SIGTERM)
        app.wait(20)
    assert app.returncode is not None
