"""Time to rank 200 cards x 4 configurations (1, 2, 4, 8 cards), max-batch search included (target < 200 ms).

The bundled catalog's cards are repeated (renamed) up to 200. Run: .venv/bin/python benchmarks/recommend.py
"""

from __future__ import annotations

import tempfile
import time
from dataclasses import replace
from pathlib import Path

from advisor.catalog import list_cards, open_catalog
from advisor.core import zoo
from advisor.core.workload import Workload
from advisor.recommend.engine import Options, prepare, rank


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        catalog = open_catalog(Path(tmp) / "catalog.sqlite3")
        with catalog.read() as session:
            cards = list_cards(session)
        catalog.close()
    cards = [replace(c, name=f"{c.name} #{i // len(cards)}") for i, c in enumerate(cards * 2)][:200]
    prices = {c.name: None for c in cards}
    for name, seq in (("resnet50", None), ("gpt2", 1024)):
        workload = Workload("train", 32 if seq is None else 8, "fp32", "adam")
        start = time.perf_counter()
        job = prepare(zoo.build(name, seq), workload)
        prepared = time.perf_counter() - start
        times = []
        for _ in range(5):
            start = time.perf_counter()
            entries = rank(job, cards, prices, Options(counts=(1, 2, 4, 8)))
            times.append(time.perf_counter() - start)
        print(f"{name}: estimate + memory curve {prepared * 1e3:.0f} ms; ranking {len(cards)} cards x 4 counts "
              f"({len(entries)} configurations with plans): {min(times) * 1e3:.0f} ms best of 5 (target < 200 ms)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
