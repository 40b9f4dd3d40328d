"""Predicted against measured largest batch (shared/calibration/h200/max_batch.json: the allocator limited with
set_per_process_memory_fraction on an H200, largest batch that trained).

The prediction is the largest batch whose required_bytes (core/budget.py) fits the step's share of the budget:
the budget minus the cuBLAS/cuDNN workspaces that the process had already placed in the same allocator
(overheads.workspace_bytes; the budget in the file only excludes the CUDA context and the driver). A measured
largest batch B means B trained and the next batch tried failed; batches between were not tried, so a
prediction above B counts as "above" even where it might have trained.

Also prints the gap between the measured reservation without a limit and the replayed one on the calibration
training rows (the 1% share of the peak core.budget once kept for it is now REPLAY_MARGIN_BYTES).

Run: .venv/bin/python benchmarks/max_batch.py [--simulated]   (--simulated needs torchvision for the tv: rows:
a venv with torch 2.14.1 and torchvision 0.29.1; the hf: rows need transformers)
"""

from __future__ import annotations

import argparse
import csv
import json
import statistics
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from _shared import MEASUREMENTS, SHARED  # noqa: E402

from advisor.core import zoo  # noqa: E402
from advisor.core.analytic import estimate  # noqa: E402
from advisor.core.estimate import Estimate  # noqa: E402
from advisor.core.overheads import DEFAULT_OVERHEAD  # noqa: E402
from advisor.core.workload import Workload  # noqa: E402

CASES = SHARED / "calibration" / "h200" / "max_batch.json"
ZOO = {
    "tv:resnet50": ("resnet50", None),
    "hf:gpt2@1024": ("gpt2", 1024),
    "hf:bert-base@128": ("bert-base", 128),
    "tv:vgg16": ("vgg16", None),
    "tv:vit_b_16": ("vit_b_16", None),
    "tv:mobilenet_v2": ("mobilenet_v2", None),
}
Estimator = Callable[[Workload], Estimate]


def analytic(model: str) -> Estimator:
    name, seq = ZOO[model]
    graph = zoo.build(name, seq)
    return lambda w: estimate(graph, w)


def simulated(model: str) -> Estimator:
    from accuracy_simulated import model_file

    from advisor.importers.spec_estimate import simulator

    return simulator(str(model_file(model)))  # the loader and simulation `advisor estimate FILE.py` runs


def largest_batch(run: Estimator, workload: Workload, budget: int, hint: int) -> int:
    """Bisection on the batch (required bytes grow with it) between 1 and well past the hint."""
    fits = {}

    def ok(batch: int) -> bool:
        if batch not in fits:
            fits[batch] = run(replace(workload, batch=batch)).memory.required_bytes <= budget
        return fits[batch]

    low, high = 0, hint * 2
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if ok(middle) else (low, middle)
    return low


def reservation_gap(make: Callable[[str], Estimator]) -> list[float]:
    """(measured reserved - replayed reserved) / measured peak on the calibration training rows."""
    gaps = []
    with MEASUREMENTS.open() as handle:
        for row in csv.DictReader(handle):
            if row["status"] != "ok" or row["mode"] != "train" or row["model"] not in ZOO or row["ckpt"]:
                continue
            w = Workload("train", int(row["batch"]), row["precision"], row["optimizer"])  # type: ignore[arg-type]
            memory = make(row["model"])(w).memory
            measured = int(row["peak_reserved"]) - DEFAULT_OVERHEAD.workspace_bytes
            gaps.append((measured - memory.reserved_bytes) / int(row["peak_alloc_steady"]))
    return gaps


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--simulated", action="store_true", help="simulate the PyTorch modules (else analytic)")
    make = simulated if parser.parse_args().simulated else analytic
    errors, above = [], 0
    print(f"{'model':18} {'prec':8} {'opt':12} {'card':>5} {'measured':>8} {'predicted':>9} {'error':>7}")
    for case in json.loads(CASES.read_text())["cases"]:
        w = Workload("train", 1, case["precision"], case["optimizer"])
        budget = case["allocator_budget_bytes"] - DEFAULT_OVERHEAD.workspace_bytes
        predicted = largest_batch(make(case["model"]), w, budget, case["max_batch"])
        error = predicted / case["max_batch"] - 1
        errors.append(abs(error))
        above += predicted > case["max_batch"]
        print(
            f"{case['model']:18} {case['precision']:8} {case['optimizer']:12} {case['card_gb']:>3}GB "
            f"{case['max_batch']:8} {predicted:9} {error:+7.1%}",
            flush=True,
        )
    print(
        f"\n{len(errors)} cases: median |error| {statistics.median(errors):.1%}, worst {max(errors):.1%}, "
        f"{above} above the measured largest batch"
    )
    gaps = reservation_gap(make)
    print(
        f"reservation without a limit, measured - replayed, share of the peak over {len(gaps)} training rows: "
        f"median {statistics.median(gaps):+.1%}, min {min(gaps):+.1%}, max {max(gaps):+.1%}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
