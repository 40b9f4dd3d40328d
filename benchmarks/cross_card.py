"""Does the time model rank cards the way published benchmarks do? ResNet-50 training throughput on several
cards (benchmarks/data/resnet50_training_throughput.csv, each row with its source: NVIDIA's published A100/V100
figures, Lambda's public PyTorch benchmark on ten datacenter, workstation and consumer cards from Turing to
Hopper, and this project's H200 measurements) against the model's prediction: prints every row, the Spearman
rank correlation and the median |error|, both raw and after one common scale factor (both published recipes
run NVIDIA DeepLearningExamples' ResNet-50 with channels-last, DALI and cudnn.benchmark, so they run faster
than the eager torchvision step the model describes: the ranking and ratios are what must hold).
Run: .venv/bin/python benchmarks/cross_card.py
"""

from __future__ import annotations

import csv
import os
import statistics
import tempfile
from pathlib import Path

from advisor.catalog import find_card, open_catalog
from advisor.core import zoo
from advisor.core.analytic import estimate
from advisor.core.workload import Workload
from advisor.recommend.devices import device
from advisor.recommend.timing import step_seconds, step_work

DATA = Path(__file__).resolve().parent / "data" / "resnet50_training_throughput.csv"


def _ranks(values: list[float]) -> list[float]:
    order = sorted(range(len(values)), key=values.__getitem__)
    ranks = [0.0] * len(values)
    for rank, index in enumerate(order):
        ranks[index] = float(rank)
    return ranks


def spearman(a: list[float], b: list[float]) -> float:
    ra, rb = _ranks(a), _ranks(b)
    n = len(a)
    return 1 - 6 * sum((x - y) ** 2 for x, y in zip(ra, rb, strict=True)) / (n * (n * n - 1))


def main() -> int:
    with DATA.open() as handle:
        rows = list(csv.DictReader(handle))
    graph = zoo.build("resnet50", None)
    published, predicted = [], []
    with tempfile.TemporaryDirectory() as tmp:
        catalog = open_catalog(os.path.join(tmp, "catalog.sqlite3"))
        with catalog.read() as session:
            for row in rows:
                card = find_card(session, row["card"])
                workload = Workload(
                    "train",
                    int(row["batch"]),
                    row["precision"],  # type: ignore[arg-type]
                    row["optimizer"],
                )  # type: ignore[arg-type]
                seconds = step_seconds(step_work(estimate(graph, workload)), device(card, workload))
                published.append(float(row["images_per_s"]))
                predicted.append(workload.batch / seconds)
        catalog.close()
    print(f"{'card':24} {'precision':9} {'batch':>5} {'published img/s':>16} {'model img/s':>12} {'error':>8}")
    for row, pub, pred in zip(rows, published, predicted, strict=True):
        print(
            f"{row['card']:24} {row['precision']:9} {row['batch']:>5} {pub:16.0f} {pred:12.0f} {pred / pub - 1:+8.1%}"
        )
    print()
    for label, chosen in (("Lambda", "Lambda"), ("NVIDIA", "NVIDIA"), ("all", "")):
        picked = [i for i, row in enumerate(rows) if row["source"].startswith(chosen)]
        _summary(label, [published[i] for i in picked], [predicted[i] for i in picked])
    return 0


def _summary(label: str, published: list[float], predicted: list[float]) -> None:
    """Rank correlation and median |error| of one group of rows, raw and after the group's common factor."""
    scale = statistics.median(p / m for p, m in zip(published, predicted, strict=True))
    raw = statistics.median(abs(p / m - 1) for p, m in zip(predicted, published, strict=True))
    scaled = statistics.median(abs(p * scale / m - 1) for p, m in zip(predicted, published, strict=True))
    print(
        f"{label:7} {len(published):3} rows: Spearman rank correlation {spearman(published, predicted):.2f}; "
        f"median |error| {raw:.1%} raw, {scaled:.1%} after one common factor x{scale:.2f}"
    )


if __name__ == "__main__":
    raise SystemExit(main())
