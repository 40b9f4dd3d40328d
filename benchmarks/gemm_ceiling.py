"""The power rule against measured large-GEMM rates (advisor/recommend/tensor_power.py): the share of its
datasheet peak a big half-precision matmul holds on each card, predicted beside what others measured
(benchmarks/data/public_gemm_rates.csv, each row with its source). Most of these rows are not what any
constant was fitted on: the H200 anchors Hopper's rule, the A100 SXM/PCIe and B200 rows the GA100 and GB100
rules, the T4 Turing's; the graphics dies' energy multiple is fitted on benchmarks/public_speed.py's step times,
so the L4, L20, A40, RTX A6000, L40S and RTX PRO 6000 rows check it. "best of" rows are the fastest of several
sizes, a short burst for small ones: on a board its power limit holds back, an upper bound of what it sustains.
Run: .venv/bin/python benchmarks/gemm_ceiling.py
"""

from __future__ import annotations

import csv
import math
import os
import statistics
import tempfile
from pathlib import Path

from advisor.catalog import find_card, open_catalog
from advisor.core.workload import Workload
from advisor.recommend.devices import device
from advisor.recommend.kernels import tensor_ceiling

DATA = Path(__file__).resolve().parent / "data" / "public_gemm_rates.csv"


def main() -> int:
    with DATA.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    errors: list[float] = []
    print(f"{'card':44} {'W/TFLOPS':>8} {'peak':>7} {'measured':>8} {'predicted':>9} {'ratio':>6}  how")
    with tempfile.TemporaryDirectory() as tmp:
        catalog = open_catalog(os.path.join(tmp, "catalog.sqlite3"))
        with catalog.read() as session:
            for r in rows:
                precision = "amp_bf16" if r["dtype"] == "bf16" else "amp_fp16"
                dev = device(find_card(session, r["card"]), Workload("infer", 1, precision))  # type: ignore[arg-type]
                peak = dev.matmul_tflops
                predicted = peak * tensor_ceiling(peak, dev.tdp_w, dev.tensor_power)
                measured = float(r["measured_tflops"])
                errors.append(math.log(predicted / measured))
                print(
                    f"{r['card'][:44]:44} {dev.tdp_w / peak:8.2f} {peak:7.1f} {measured:8.1f} {predicted:9.1f} "
                    f"{predicted / measured:6.2f}  {r['how']}"
                )
        catalog.close()
    print(
        f"{len(rows)} cards: median |predicted / measured - 1| "
        f"{statistics.median(abs(math.expm1(e)) for e in errors):.1%}, "
        f"geometric mean ratio {math.exp(statistics.fmean(errors)):.2f}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
