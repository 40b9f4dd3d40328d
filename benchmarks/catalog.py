"""Catalog timings (prints figures; not a test). Run: PYTHONPATH=. python benchmarks/catalog.py

1. A filtered, sorted query over 10,000 cards generated into a temporary database (target < 50 ms).
2. Cold open of the bundled catalog (target < 300 ms), in a fresh Python process each time, measured
   from before `import advisor.catalog` to an open catalog with its first query answered:
   a. existing file (the everyday start: integrity check, version check, data hash; no seeding),
   b. new file (first run: create the schema and load the 150+ bundled cards).
"""

from __future__ import annotations

import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from sqlalchemy import insert

from advisor.catalog import list_cards, open_catalog
from advisor.catalog.orm import Alias, Card

REPO = Path(__file__).resolve().parents[1]
GIB = 2**30


def _generated_rows(count: int) -> list[dict[str, object]]:
    rng = random.Random(7)
    rows = []
    for i in range(count):
        fp32 = round(rng.uniform(2, 150), 1)
        rows.append(
            {
                "id": i + 1,
                "name": f"Synthetic GPU {i:05d}",
                "vendor": rng.choice(["NVIDIA", "AMD", "Intel"]),
                "architecture": "synthetic",
                "segment": rng.choice(["consumer", "workstation", "datacenter"]),
                "memory_bytes": rng.choice([4, 8, 12, 16, 24, 32, 48, 80, 96, 141, 192]) * GIB,
                "memory_type": "GDDR6",
                "bandwidth_gbs": round(rng.uniform(100, 8000), 1),
                "fp32_tflops": fp32,
                "fp16_tflops": 2 * fp32,
                "tdp_w": rng.randrange(75, 1000),
                "source": "generated",
                "origin": "user",
            }
        )
    return rows


def query_benchmark(count: int = 10_000, repeats: int = 20) -> None:
    with tempfile.TemporaryDirectory() as folder:
        catalog = open_catalog(Path(folder) / "big.sqlite3")
        with catalog.write() as session:  # replace the bundled cards with 10,000 generated ones
            session.query(Card).delete()
            rows = _generated_rows(count)
            session.execute(insert(Card), rows)
            aliases = [
                {"card_id": r["id"], "alias": str(r["name"]).lower(), "display": r["name"], "origin": "user"}
                for r in rows
            ]
            session.execute(insert(Alias), aliases)
        timings = []
        for _ in range(repeats):
            with catalog.read() as session:
                start = time.perf_counter()
                found = list_cards(session, vendor="NVIDIA", min_memory_bytes=16 * GIB, sort_by="bandwidth")
                timings.append((time.perf_counter() - start) * 1000)
        with catalog.read() as session:
            start = time.perf_counter()
            everything = list_cards(session, sort_by="fp16")
            all_ms = (time.perf_counter() - start) * 1000
        catalog.close()
    print(
        f"query over {count:,} cards: vendor=NVIDIA, memory >= 16 GiB, sorted by bandwidth -> "
        f"{len(found):,} cards in {statistics.median(timings):.1f} ms median, {max(timings):.1f} ms worst, "
        f"first run {timings[0]:.1f} ms (target < 50 ms)"
    )
    print(f"query over {count:,} cards: no filter, sorted by fp16 -> {len(everything):,} cards in {all_ms:.1f} ms")


COLD = """
import time, sys
start = time.perf_counter()
from advisor.catalog import open_catalog, list_cards
catalog = open_catalog(sys.argv[1])
with catalog.read() as session:
    count = len(list_cards(session))
print(f"{(time.perf_counter() - start) * 1000:.1f} {count}")
"""


def _cold(path: Path) -> tuple[float, int]:
    out = subprocess.run(
        [sys.executable, "-c", COLD, str(path)],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(REPO), "PATH": ""},
    ).stdout.split()
    return float(out[0]), int(out[1])


def cold_open_benchmark(repeats: int = 5) -> None:
    with tempfile.TemporaryDirectory() as folder:
        new_runs = []
        for i in range(repeats):
            new_runs.append(_cold(Path(folder) / f"new-{i}.sqlite3")[0])
        existing = Path(folder) / "new-0.sqlite3"
        runs = [_cold(existing) for _ in range(repeats)]
    cards = runs[0][1]
    print(
        f"cold open, existing file ({cards} cards), fresh process incl. imports: "
        f"{statistics.median(r[0] for r in runs):.0f} ms median (target < 300 ms)"
    )
    print(
        f"cold open, new file, creation and seeding included, fresh process incl. imports: "
        f"{statistics.median(new_runs):.0f} ms median"
    )


if __name__ == "__main__":
    query_benchmark()
    cold_open_benchmark()
