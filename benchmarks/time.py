"""Fits the time model's four efficiencies on the H200 step times and prints the error per row.

shared/calibration/h200/measurements.csv holds step_ms_median for every config; the H200's figures come
from the bundled catalog. Prints the fitted constants (to copy into advisor/recommend/timing.py FITTED)
and the median relative error with the constants currently in the code.
Run: .venv/bin/python benchmarks/time.py
"""

from __future__ import annotations

import math
import os
import statistics
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from accuracy import rows, zoo_name

from advisor.catalog import find_card, open_catalog
from advisor.core import zoo
from advisor.core.estimate import estimate
from advisor.core.workload import Workload
from advisor.recommend.devices import device
from advisor.recommend.timing import FITTED, Efficiency, StepWork, step_seconds, step_work

GRID = {
    "tensor": tuple(x / 100 for x in range(5, 101, 5)),
    "tf32": tuple(x / 100 for x in range(5, 101, 5)),
    "cuda_core": tuple(x / 100 for x in range(5, 101, 5)),
    "shallow": tuple(x / 100 for x in range(1, 101, 2)),
    "memory": tuple(x / 100 for x in range(10, 101, 5)),
    "seconds_per_kernel": tuple(x * 1e-6 for x in range(1, 61)),
}


def cases() -> list[tuple[str, StepWork, object, float]]:
    with tempfile.TemporaryDirectory() as tmp:
        catalog = open_catalog(os.path.join(tmp, "catalog.sqlite3"))
        with catalog.read() as session:
            h200 = find_card(session, "H200")
        catalog.close()
    out = []
    for row in rows():
        name, seq = zoo_name(row["model"])
        if name not in zoo.zoo_names() or not row["step_ms_median"]:
            continue
        workload = Workload(row["mode"], int(row["batch"]), row["precision"],  # type: ignore[arg-type]
                            row["optimizer"] or "adam")  # type: ignore[arg-type]
        work = step_work(estimate(zoo.build(name, seq), workload))
        label = f"{row['model']} {row['mode']} {row['precision']} {row['optimizer']} b{row['batch']}"
        out.append((label, work, device(h200, workload), float(row["step_ms_median"]) / 1e3))
    return out


def errors(data: list[tuple[str, StepWork, object, float]], eff: Efficiency) -> list[float]:
    return [step_seconds(work, card, eff) / truth - 1 for _, work, card, truth in data]  # type: ignore[arg-type]


def fit(data: list[tuple[str, StepWork, object, float]]) -> Efficiency:
    """Coordinate descent on the mean |log(predicted / measured)| (smoother than the median, and it weighs
    over- and under-prediction alike): one constant at a time over its grid, 6 rounds."""
    best = FITTED
    for _ in range(6):
        for name, values in GRID.items():
            scored = [(statistics.fmean(abs(math.log1p(e)) for e in errors(data, replace(best, **{name: v}))), v)
                      for v in values]
            best = replace(best, **{name: min(scored)[1]})
    return best


def main() -> int:
    data = cases()
    fitted = fit(data) if "--fit" in sys.argv else FITTED
    if "--fit" in sys.argv:
        print(f"fitted: {fitted}")
    print(f"{'config':52} {'measured ms':>12} {'predicted ms':>13} {'error':>8}")
    errs = errors(data, fitted)
    for (label, work, card, truth), err in zip(data, errs, strict=True):
        print(f"{label:52} {truth * 1e3:12.2f} {step_seconds(work, card, fitted) * 1e3:13.2f} {err:+8.1%}")  # type: ignore[arg-type]
    print(f"\n{len(errs)} rows: median |error| {statistics.median(abs(e) for e in errs):.1%}, "
          f"worst {max(abs(e) for e in errs):.1%}  (constants: {fitted})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
