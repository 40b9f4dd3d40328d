"""Fits the step-time model's free constants and reports how well it predicts what it was NOT fitted on.

Two sets of step times: this project's H200 (shared/calibration/h200/measurements.csv, step_ms_median of
every config the zoo expresses) and the public cross-card runs of benchmarks/public_speed.py (timm's and
Lambda's tables, torchtune; the newest software release of each run). The constants are fitted on both
together; then each model family and each card is left out in turn, the constants fitted on the rest and the
left-out rows predicted (leave-one-family-out, leave-one-card-out). The median and p90 |error| of the step
time are printed per family and per card, training and inference separately, held out beside in-sample.
Run: .venv/bin/python benchmarks/time.py [--rows] [--h200-only] [--simulated]   (--rows prints every row)
--simulated prints, for every H200 row whose model file in benchmarks/models/ loads here (torchvision ones need
a venv that has it), the step time of the default path (the simulated module) beside the layer graph's.
"""

from __future__ import annotations

import math
import os
import statistics
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from accuracy import rows, zoo_name

from advisor.catalog import find_card, open_catalog
from advisor.core import zoo
from advisor.core.analytic import estimate
from advisor.core.loss_head import with_loss_head
from advisor.core.workload import Workload
from advisor.recommend import tensor_power
from advisor.recommend.devices import device
from advisor.recommend.timing import FITTED, Efficiency, StepParts, combine, step_parts, step_seconds, step_work

# The fitted constants and their physical ranges. Efficiency.tensor, .unaligned, .conv and .attention are not
# fitted: FITTED holds them at measured or published figures (see advisor/recommend/timing.py).
GRID: dict[str, tuple[float, ...]] = {
    # host time per op: a module call and PyTorch's dispatcher cost 10-60 us on a desktop CPU
    # (benchmarks/host_dispatch.py measures this machine's)
    "python_op_seconds": tuple(x * 1e-6 for x in range(10, 61, 2)),
    "backward_node_seconds": tuple(x * 1e-6 for x in range(10, 61, 2)),
    "backward": tuple(x / 20 for x in range(10, 21)),  # gradient GEMMs at 1/2 .. all of their forward's rate
    "stream": tuple(x / 20 for x in range(20, 61)),  # eager kernels reach 1/3 .. all of the copy bandwidth
    # bytes in flight per multiprocessor over DRAM latency in SM cycles (570-660 on an A100, H100 and AD102):
    # 4-60 bytes a cycle (up to 40 KB in flight)
    "sm_stream_bytes_per_cycle": tuple(float(x) for x in range(4, 61, 2)),
    # device time per kernel beyond its bytes and FLOPs: the gap between launches, ramp-up and the last
    # wave's tail, 1-8 us in profiler traces of eager steps
    "kernel_seconds": tuple(x * 0.5e-6 for x in range(2, 17)),
}


@dataclass(frozen=True)
class Case:
    label: str
    family: str
    card: str
    training: bool
    parts: StepParts
    tensor_cores: bool
    measured_s: float
    comm_s: float = 0.0  # a multi-card public row's plan communication, as public_speed.py adds it


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
        workload = Workload(
            row["mode"],
            int(row["batch"]),
            row["precision"],  # type: ignore[arg-type]
            row["optimizer"] or "adam",
        )  # type: ignore[arg-type]
        dev = device(h200, workload)
        graph = zoo.build(name, seq)
        if row["model"].startswith("hf:"):  # measure_gpu.py passes labels in every mode: the loss ran too
            graph = with_loss_head(graph)
        parts = step_parts(step_work(estimate(graph, workload)), dev)
        label = f"{row['model']} {row['mode']} {row['precision']} {row['optimizer']} b{row['batch']}"
        out.append(
            Case(
                label,
                family(row["model"]),
                "H200 SXM",
                workload.training,
                parts,
                dev.tensor_cores,
                float(row["step_ms_median"]) / 1e3,
            )
        )
    return out


def public_cases() -> list[Case]:
    """The rows benchmarks/public_speed.py predicts (other cards than the H200), as step times."""
    from public_speed import _work, comm_seconds, load, newest  # one loader, workload and plan cost per row

    rows = [r for r in newest(load()[0]) if r.card != "H200 SXM"]
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        catalog = open_catalog(os.path.join(tmp, "catalog.sqlite3"))
        with catalog.read() as session:
            cards = {name: find_card(session, name) for name in {r.card for r in rows}}
        catalog.close()
    for r in rows:
        dev = device(cards[r.card], r.workload)
        parts = step_parts(_work(r.model, r.seq_len, r.workload), dev)
        out.append(
            Case(
                f"{r.card[:24]} {r.label}",
                r.family,
                r.card,
                r.workload.training,
                parts,
                dev.tensor_cores,
                r.workload.batch / r.measured_samples_per_s,
                comm_seconds(r, dev),
            )
        )
    return out


def errors(data: Sequence[Case], eff: Efficiency) -> list[float]:
    return [(combine(c.parts, eff, c.tensor_cores) + c.comm_s) / c.measured_s - 1 for c in data]


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


def _line(label: str, held: Sequence[float], in_sample: Sequence[float]) -> str:
    def stats(values: Sequence[float]) -> str:
        if not values:
            return f"{'-':>8} {'-':>8}"
        absolute = [abs(v) for v in values]
        return f"{statistics.median(absolute):8.1%} {_p90(absolute):8.1%}"

    return f"{label:40} {len(held):4} {stats(held)}   {stats(in_sample)}"


def held_out(data: Sequence[Case], in_sample: Efficiency, group: Callable[[Case], str]) -> dict[str, float]:
    """Each row's error when the constants are fitted without its group (its family, or its card)."""
    held: dict[str, float] = {}
    for name in sorted({group(c) for c in data}):
        left = [c for c in data if group(c) == name]
        eff = fit([c for c in data if group(c) != name], in_sample)
        held.update(zip([c.label for c in left], errors(left, eff), strict=True))
    return held


def report(data: Sequence[Case], in_sample: Efficiency, group: Callable[[Case], str], title: str) -> None:
    held = held_out(data, in_sample, group)
    inside = dict(zip([c.label for c in data], errors(data, in_sample), strict=True))
    print(f"\n{title:40} {'rows':>4} {'out med':>8} {'out p90':>8}   {'in med':>8} {'in p90':>8}")
    for name in sorted({group(c) for c in data}):
        for mode, training in (("train", True), ("infer", False)):
            chosen = [c.label for c in data if group(c) == name and c.training == training]
            if chosen:
                print(_line(f"{name[:33]} {mode}", [held[x] for x in chosen], [inside[x] for x in chosen]))
    for mode, training in (("all train", True), ("all infer", False)):
        chosen = [c.label for c in data if c.training == training]
        print(_line(mode, [held[x] for x in chosen], [inside[x] for x in chosen]))
    print(_line("overall", list(held.values()), list(inside.values())))


# The graphics dies' energy ratio (advisor/recommend/tensor_power.py) is scanned here, not by fit(): it moves
# the GEMM times inside StepParts, so each value rebuilds the public cases. 1.5-4.5 times the data-centre die's
# energy per FLOP: from about Hopper's to past the T4-derived Turing figure (4x Hopper's).
GRAPHICS_GRID = tuple(x / 4 for x in range(6, 19))


def _loss(data: Sequence[Case]) -> float:
    return statistics.fmean(abs(math.log1p(e)) for e in errors(data, FITTED))


def graphics_held_out() -> None:
    """The graphics dies' energy ratio that fits the public rows best with FITTED's other constants, and each
    card it applies to predicted with the value fitted on the other such cards (leave-one-card-out)."""
    held = tensor_power.GRAPHICS_ENERGY_RATIO
    try:
        by_value: dict[float, list[Case]] = {}
        for value in GRAPHICS_GRID:  # device() reads tensor_power.GRAPHICS_ENERGY_RATIO at each call
            tensor_power.GRAPHICS_ENERGY_RATIO = value
            by_value[value] = public_cases()
    finally:
        tensor_power.GRAPHICS_ENERGY_RATIO = held
    first, last = by_value[GRAPHICS_GRID[0]], by_value[GRAPHICS_GRID[-1]]
    cards = sorted({a.card for a, b in zip(first, last, strict=True) if a.parts != b.parts})

    def best(names: Sequence[str]) -> float:
        return min(GRAPHICS_GRID, key=lambda v: _loss([c for c in by_value[v] if c.card in names]))

    print(f"\ngraphics-die energy ratio (in code {held}): {best(cards)} on {cards}")
    print(f"{'card held out':40} {'fitted':>6} {'med err':>8} {'med p/m':>8}")
    for card in cards:
        value = best([c for c in cards if c != card])
        left = [c for c in by_value[value] if c.card == card]
        errs = errors(left, FITTED)
        ratio = statistics.median(1 / (1 + e) for e in errs)  # predicted / measured throughput
        print(f"{card[:40]:40} {value:6.2f} {statistics.median(abs(e) for e in errs):8.1%} {ratio:8.2f}")


def simulated_beside_analytic() -> None:
    """The H200 rows timed by both estimators of the same model file, as `advisor estimate FILE.py` runs it."""
    from accuracy_simulated import model_file, workload

    from advisor.core.errors import SpecError
    from advisor.importers.spec_estimate import estimate_spec

    with tempfile.TemporaryDirectory() as tmp:
        catalog = open_catalog(os.path.join(tmp, "catalog.sqlite3"))
        with catalog.read() as session:
            h200 = find_card(session, "H200")
        catalog.close()
    errors_by: dict[str, list[float]] = {"analytic": [], "simulated": []}
    print(f"{'H200 row':52} {'measured':>9} {'analytic':>9} {'simulated':>9}")
    for row in rows():
        path, w = model_file(row["model"]), workload(row)
        if not path.exists() or not row["step_ms_median"]:
            continue
        try:
            seconds = {
                m: step_seconds(step_work(estimate_spec(str(path), w, method=m)), device(h200, w)) for m in errors_by
            }
        except (SpecError, ImportError) as error:
            print(f"{row['model']:52} skipped: {error}")
            continue
        measured = float(row["step_ms_median"]) / 1e3
        for m, s in seconds.items():
            errors_by[m].append(s / measured - 1)
        label = f"{row['model']} {row['mode']} {row['precision']} b{row['batch']}"
        cells = " ".join(f"{s * 1e3:7.2f}ms" for s in (measured, seconds["analytic"], seconds["simulated"]))
        print(f"{label:52} {cells}")
    for m, errs in errors_by.items():
        if errs:
            print(f"{m}: {len(errs)} rows, median |error| {statistics.median(abs(e) for e in errs):.1%}")


def main() -> int:
    if "--simulated" in sys.argv:
        simulated_beside_analytic()
        return 0
    data = cases() + ([] if "--h200-only" in sys.argv else public_cases())
    fitted = fit(data)
    print(f"fitted on all {len(data)} rows: {fitted}\n(in code: {FITTED})")
    inside = errors(data, FITTED)
    print(
        f"in code, all rows: median |error| {statistics.median(abs(e) for e in inside):.1%}, "
        f"p90 {_p90([abs(e) for e in inside]):.1%}"
    )
    if "--rows" in sys.argv:
        for c, err in zip(data, errors(data, fitted), strict=True):
            print(f"{c.label:72} {c.measured_s * 1e3:9.2f} ms {c.measured_s * (1 + err) * 1e3:9.2f} ms {err:+8.1%}")
    report(data, fitted, lambda c: c.family, "leave one family out / family and mode")
    report(data, fitted, lambda c: c.card, "leave one card out / card and mode")
    if "--h200-only" not in sys.argv:
        graphics_held_out()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
