"""Compares the simulated estimate with the H200 measurements (shared/calibration/h200/measurements.csv).

Every row's model is built from its FILE.py in benchmarks/models/ (torchvision and transformers needed:
run with a venv that has them, e.g. /work/bench-venv/bin/python benchmarks/accuracy_simulated.py).
Prints peak_bytes vs peak_alloc_steady, reserved_bytes (+ the cuBLAS/cuDNN workspace reservation) vs
peak_reserved, device_total_bytes vs nvml_used_end, then medians and worst cases.
Options: --only SUBSTRING (rows whose model contains it).
"""

from __future__ import annotations

import argparse
import csv
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from _shared import MEASUREMENTS  # noqa: E402

from advisor.core.overheads import DEFAULT_OVERHEAD  # noqa: E402
from advisor.core.workload import Workload  # noqa: E402
from advisor.importers.spec_estimate import simulator  # noqa: E402

MODELS = HERE / "models"


def model_file(model: str) -> Path:
    """tv:resnet50 -> tv_resnet50.py; hf:bert-base@128 -> hf_bert_base_128.py."""
    stem = model.replace(":", "_").replace("-", "_").replace("@", "_")
    return MODELS / f"{stem}.py"


def rows(only: str) -> list[dict[str, str]]:
    with MEASUREMENTS.open() as handle:
        return [r for r in csv.DictReader(handle) if r["status"] == "ok" and only in r["model"]]


def workload(row: dict[str, str]) -> Workload:
    return Workload(
        row["mode"],
        int(row["batch"]),
        row["precision"],  # type: ignore[arg-type]
        row["optimizer"] or "adam",
        bool(row["ckpt"]),
    )  # type: ignore[arg-type]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", default="")
    only = parser.parse_args().only
    peak_err, res_err, dev_err, under = [], [], [], []
    print(
        f"{'model':18} {'mode':5} {'prec':8} {'opt':12} {'bs':>4} {'peak MiB':>9} {'sim MiB':>9} {'err':>7} "
        f"{'resv MiB':>9} {'sim+ws':>9} {'ratio':>6} {'nvml MiB':>9} {'dev MiB':>9} {'err':>6} {'s':>5}  peak at"
    )
    for row in rows(only):
        start = time.perf_counter()
        est = simulator(str(model_file(row["model"])))(workload(row))  # as `advisor estimate FILE.py` runs it
        seconds = time.perf_counter() - start
        mem = est.memory
        truth, reserved, nvml = int(row["peak_alloc_steady"]), int(row["peak_reserved"]), int(row["nvml_used_end"])
        predicted_reserved = mem.reserved_bytes + DEFAULT_OVERHEAD.workspace_bytes
        e_peak, e_dev = mem.peak_bytes / truth - 1, mem.device_total_bytes / nvml - 1
        ratio = predicted_reserved / reserved
        peak_err.append(abs(e_peak))
        dev_err.append(abs(e_dev))
        res_err.append(abs(ratio - 1))
        if ratio < 1:
            under.append(f"{row['model']} {row['mode']} {row['precision']} bs{row['batch']}")
        print(
            f"{row['model']:18} {row['mode']:5} {row['precision']:8} {row['optimizer']:12} {row['batch']:>4} "
            f"{truth / 2**20:9.1f} {mem.peak_bytes / 2**20:9.1f} {e_peak:+7.1%} {reserved / 2**20:9.1f} "
            f"{predicted_reserved / 2**20:9.1f} {ratio:6.2f} {nvml / 2**20:9.1f} "
            f"{mem.device_total_bytes / 2**20:9.1f} {e_dev:+6.1%} {seconds:5.1f}  {mem.peak_phase}: {mem.peak_layer}",
            flush=True,
        )
    if peak_err:
        print(
            f"\n{len(peak_err)} rows: peak median |error| {statistics.median(peak_err):.2%}, "
            f"worst {max(peak_err):.2%}; "
            f"device total median {statistics.median(dev_err):.2%}, worst {max(dev_err):.2%}; "
            f"reserved median |ratio-1| {statistics.median(res_err):.2%}, under-predicted in {len(under)} rows"
        )
        for item in under:
            print(f"  reserved under-predicted: {item}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
