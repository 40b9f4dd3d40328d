"""For a session with a CUDA card: what the allocator held when a max-batch case ran out of memory.

benchmarks/max_batch.py predicts the largest batch from a replay of the caching allocator under a limit. Where it
predicts a batch that failed on the H200 (tv:vit_b_16 fp32 Adam on an emulated 8 GB card: predicted 40, 40
failed), the replay misses an allocation or a fragment. This script runs each case of
shared/calibration/h200/max_batch.json at its first failing batch with the allocator limited the same way, records
the allocator's history (torch.cuda.memory._record_memory_history) and, at the OutOfMemoryError, writes the
snapshot's segments, the live blocks and the failing request with its stack to $OUT/oom_<model>.json, and a
summary line per case to $OUT/oom_summary.csv. Needs the calibration script beside the shared data
(shared/calibration/measure_gpu.py: its build() makes the same models).

Run: OUT=dir python benchmarks/gpu_oom_snapshot.py [--only SUBSTRING]   (a few minutes on an H200)
"""

from __future__ import annotations

import argparse
import csv
import gc
import json
import os
import sys
from pathlib import Path

from _shared import SHARED

sys.path.insert(0, str(SHARED / "calibration"))
OUT = Path(os.environ.get("OUT", "oom_out"))


def first_failure(case: dict[str, object]) -> int:
    trials = case["trials"]
    assert isinstance(trials, list)
    return min(batch for batch, ok in trials if not ok)


def summarize(snapshot: dict[str, object]) -> dict[str, int]:
    segments = snapshot["segments"]
    assert isinstance(segments, list)
    active = sum(b["size"] for s in segments for b in s["blocks"] if b["state"] == "active_allocated")
    return {"segments": len(segments), "reserved": sum(s["total_size"] for s in segments), "active": active}


def run_case(torch: object, case: dict[str, object]) -> dict[str, object]:
    import measure_gpu  # type: ignore[import-not-found]

    t = torch  # the torch module
    gc.collect()
    t.cuda.empty_cache()  # type: ignore[attr-defined]
    total = t.cuda.get_device_properties(0).total_memory  # type: ignore[attr-defined]
    t.cuda.set_per_process_memory_fraction(int(case["allocator_budget_bytes"]) / total)  # type: ignore[attr-defined]
    batch = first_failure(case)
    t.cuda.memory._record_memory_history(max_entries=200_000)  # type: ignore[attr-defined]
    cfg = {
        "model": case["model"],
        "mode": "train",
        "precision": case["precision"],
        "optimizer": case["optimizer"],
        "batch": batch,
        "iters": 4,
    }
    rows: list[dict[str, object]] = []

    class Rows:
        def writerow(self, row: dict[str, object]) -> None:
            rows.append(row)

    measure_gpu.run_config(cfg, Rows(), sys.stdout)
    snapshot = t.cuda.memory._snapshot()  # type: ignore[attr-defined]
    t.cuda.memory._record_memory_history(enabled=None)  # type: ignore[attr-defined]
    name = str(case["model"]).replace(":", "_").replace("@", "_")
    (OUT / f"oom_{name}_{case['precision']}.json").write_text(json.dumps(snapshot, default=str)[:15_000_000])
    status = rows[0].get("status") if rows else "no row"
    return {
        "model": case["model"],
        "precision": case["precision"],
        "batch": batch,
        "status": status,
        "error": str(rows[0].get("error", ""))[:300] if rows else "",
        **summarize(snapshot),
    }


def main() -> int:
    import torch

    parser = argparse.ArgumentParser()
    parser.add_argument("--only", default="")
    only = parser.parse_args().only
    OUT.mkdir(parents=True, exist_ok=True)
    cases = json.loads((SHARED / "calibration" / "h200" / "max_batch.json").read_text())["cases"]
    with (OUT / "oom_summary.csv").open("w", newline="") as handle:
        writer = None
        for case in (c for c in cases if only in c["model"]):
            result = run_case(torch, case)
            writer = writer or csv.DictWriter(handle, fieldnames=list(result))
            if handle.tell() == 0:
                writer.writeheader()
            writer.writerow(result)
            handle.flush()
            print(result, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
