"""Compares the analytic estimate with the H200 measurements (shared/calibration/h200/measurements.csv).

Prints one row per measured config the zoo can express, then the median and worst relative error of
peak_bytes against peak_alloc_steady. Run: .venv/bin/python benchmarks/accuracy.py
"""

from __future__ import annotations

import csv
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _shared import MEASUREMENTS

from advisor.core import zoo
from advisor.core.analytic import estimate
from advisor.core.errors import SpecError
from advisor.core.workload import Workload


def zoo_name(model: str) -> tuple[str, int | None]:
    """tv:resnet50 -> resnet50; hf:gpt2@1024 -> gpt2 at 1024 tokens; seed:* as is."""
    if model.startswith("tv:"):
        return model[3:], None
    if model.startswith("hf:"):
        name, _, seq = model[3:].partition("@")
        return name, int(seq)
    return model, None


def rows() -> list[dict[str, str]]:
    with MEASUREMENTS.open() as handle:
        return [r for r in csv.DictReader(handle) if r["status"] == "ok"]


def main() -> int:
    errors, skipped = [], []
    print(
        f"{'model':18} {'mode':5} {'precision':9} {'optimizer':12} {'batch':>5} {'measured MiB':>13} "
        f"{'estimate MiB':>13} {'error':>8}  peak at"
    )
    for row in rows():
        name, seq = zoo_name(row["model"])
        try:
            graph = zoo.build(name, seq)
        except SpecError:
            skipped.append(row["model"])
            continue
        workload = Workload(
            row["mode"],
            int(row["batch"]),
            row["precision"],  # type: ignore[arg-type]
            row["optimizer"] or "adam",
            bool(row["ckpt"]),
        )  # type: ignore[arg-type]
        result = estimate(graph, workload)
        truth = int(row["peak_alloc_steady"])
        error = result.memory.peak_bytes / truth - 1
        errors.append(abs(error))
        print(
            f"{row['model']:18} {row['mode']:5} {row['precision']:9} {row['optimizer']:12} {row['batch']:>5} "
            f"{truth / 2**20:13.1f} {result.memory.peak_bytes / 2**20:13.1f} {error:+8.1%}  "
            f"{result.memory.peak_phase}: {result.memory.peak_layer}"
        )
    if errors:
        print(f"\n{len(errors)} configs: median |error| {statistics.median(errors):.1%}, worst {max(errors):.1%}")
    if skipped:
        print(f"not in the zoo: {', '.join(sorted(set(skipped)))}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
