"""Start-up times in fresh processes (cold imports each time), with a throwaway catalog and settings:
the first window of the app (target under 2 s), and the command line: `--version` and `--help` (under 0.3 s)
and an estimate of a zoo model (under 1 s). Prints each run and the medians.

    QT_QPA_PLATFORM=offscreen python benchmarks/startup.py
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RUNS = 3


COMMANDS = (
    (("gui", "--startup-time"), "to the first window", 2.0),
    (("--version",), "advisor --version", 0.3),
    (("--help",), "advisor --help", 0.3),
    (("estimate", "zoo:resnet50"), "advisor estimate zoo:resnet50", 1.0),
)


def once(folder: Path, args: tuple[str, ...]) -> float:
    env = dict(
        os.environ,
        ADVISOR_CATALOG=str(folder / "catalog.sqlite3"),
        XDG_CONFIG_HOME=str(folder),
        QT_QPA_PLATFORM=os.environ.get("QT_QPA_PLATFORM", "offscreen"),
    )
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "advisor", *args], check=True, env=env, capture_output=True)
    return time.perf_counter() - started


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        for args, what, target in COMMANDS:
            times = [once(Path(tmp), args) for _ in range(RUNS)]
            runs = ", ".join(f"{t:.2f}" for t in times)
            print(
                f"{what}: median {statistics.median(times):.2f} s (runs {runs}; process start included; "
                f"target < {target} s)"
            )


if __name__ == "__main__":
    main()
