"""Fits the step-time model's free constants on the H200 step times and reports how well it predicts
model families it was NOT fitted on (leave-one-family-out), beside the in-sample error.

shared/calibration/h200/measurements.csv holds step_ms_median for every config; the H200's figures come
from the bundled catalog. For each family (alexnet, vgg, resnet, mobilenet, vit, bert, gpt2, seed mlp,
seed cnn) the constants are fitted on all the other families and the left-out one is predicted; the
median and p90 |error| are printed per family and overall, training and inference separately.
Run: .venv/bin/python benchmarks/time.py [--rows]   (--rows also prints every row with the fitted constants)
"""

from __future__ import annotations

import math
import os
import statistics
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from accuracy import rows, zoo_name

from advisor.catalog import find_card, open_catalog
from advisor.core import zoo
from advisor.core.estimate import estimate
from advisor.core.loss_head import with_loss_head
from advisor.core.workload import Workload
from advisor.recommend.devices import device
from advisor.recommend.timing import FITTED, Efficiency, StepParts, combine, step_parts, step_work

# The fitted constants and their physical ranges. Efficiency.tensor, .unaligned, .conv and .attention are not
# fitted: FITTED holds them at measured or published figures (see advisor/recommend/timing.py).
GRID: dict[str, tuple[float, ...]] = {
    "python_op_seconds": tuple(x * 1e-6 for x in range(2, 121, 2)),
    "backward_node_seconds": tuple(x * 1e-6 for x in range(2, 61, 2)),
    "stream": tuple(x / 20 for x in range(20, 61)),  # eager kernels reach 1/3 .. all of the copy bandwidth
    "kernel_seconds": tuple(x * 0.5e-6 for x in range(2, 41)),  # 1 .. 20 us of device time per kernel
}


@dataclass(frozen=True)
class Case:
    label: str
    family: str
    training: bool
    parts: StepParts
    tensor_cores: bool
    measured_s: float


def family(model: str) -> str:
    """tv:resnet50 -> resnet; hf:gpt2@1024 -> gpt2; seed:cnn_inplace -> seed:cnn."""
    name = model.split(":", 1)[-1].split("@")[0]
    for prefix in ("resnet", "vgg", "vit", "mobilenet", "alexnet", "bert", "gpt2", "mlp", "cnn"):
        if name.startswith(prefix):
            return prefix
    return name


def cases() -> list[Case]:
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
        dev = device(h200, workload)
        graph = zoo.build(name, seq)
        if row["model"].startswith("hf:"):  # measure_gpu.py passes labels in every mode: the loss ran too
            graph = with_loss_head(graph)
        parts = step_parts(step_work(estimate(graph, workload)), dev)
        label = f"{row['model']} {row['mode']} {row['precision']} {row['optimizer']} b{row['batch']}"
        out.append(Case(label, family(row["model"]), workload.training, parts, dev.tensor_cores,
                        float(row["step_ms_median"]) / 1e3))
    return out


def errors(data: Sequence[Case], eff: Efficiency) -> list[float]:
    return [combine(c.parts, eff, c.tensor_cores) / c.measured_s - 1 for c in data]


def fit(data: Sequence[Case], start: Efficiency = FITTED) -> Efficiency:
    """Coordinate descent on the mean |log(predicted / measured)| (weighs over- and under-prediction alike),
    one constant at a time over its grid, 4 rounds."""
    def loss(eff: Efficiency) -> float:
        return statistics.fmean(abs(math.log1p(e)) for e in errors(data, eff))

    best = start
    for _ in range(4):
        for name, values in GRID.items():
            best = min((replace(best, **{name: v}) for v in values), key=loss)
    return best


def _p90(values: Sequence[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(0.9 * len(ordered)) - 1)]


def _line(label: str, held_out: Sequence[float], in_sample: Sequence[float]) -> str:
    def stats(values: Sequence[float]) -> str:
        if not values:
            return f"{'-':>8} {'-':>8}"
        absolute = [abs(v) for v in values]
        return f"{statistics.median(absolute):8.1%} {_p90(absolute):8.1%}"
    return f"{label:24} {len(held_out):4} {stats(held_out)}   {stats(in_sample)}"


def report(data: Sequence[Case], in_sample: Efficiency) -> None:
    held: dict[str, float] = {}
    for fam in sorted({c.family for c in data}):
        others = [c for c in data if c.family != fam]
        eff = fit(others, in_sample)
        for c, e in zip([c for c in data if c.family == fam], errors([c for c in data if c.family == fam], eff),
                        strict=True):
            held[c.label] = e
    inside = dict(zip([c.label for c in data], errors(data, in_sample), strict=True))
    print(f"{'family / mode':24} {'rows':>4} {'LOFO med':>8} {'LOFO p90':>8}   {'in med':>8} {'in p90':>8}")
    for fam in sorted({c.family for c in data}):
        for mode, training in (("train", True), ("infer", False)):
            chosen = [c.label for c in data if c.family == fam and c.training == training]
            if chosen:
                print(_line(f"{fam} {mode}", [held[x] for x in chosen], [inside[x] for x in chosen]))
    for mode, training in (("all train", True), ("all infer", False)):
        chosen = [c.label for c in data if c.training == training]
        print(_line(mode, [held[x] for x in chosen], [inside[x] for x in chosen]))
    print(_line("overall", list(held.values()), list(inside.values())))


def main() -> int:
    data = cases()
    fitted = fit(data)
    print(f"fitted on all {len(data)} rows: {fitted}\n(in code: {FITTED})\n")
    if "--rows" in sys.argv:
        for c, err in zip(data, errors(data, fitted), strict=True):
            print(f"{c.label:52} {c.measured_s * 1e3:9.2f} ms {combine(c.parts, fitted, c.tensor_cores) * 1e3:9.2f} ms"
                  f" {err:+8.1%}")
    report(data, fitted)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
