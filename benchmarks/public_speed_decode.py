"""Generation decode speed against public runs the generation constants were not fitted on (issue 24 item 4).

Data: benchmarks/data/public_decode_speed.csv, each row with its source (repository@commit:path, section).
Now: gpt-fast's README tables (pytorch-labs/gpt-fast; torch.compile'd decode at batch 1, a 5-token prompt,
200 new tokens; bf16, int8 and int4 weight-only; 1-8 A100 80GB with tensor parallelism, power-limited to
330 W; one MI250X GCD). benchmarks/data/llm_speed.csv (llama.cpp) is not used here: generation_speed.FITTED
is fitted on it (benchmarks/llm_speed.py reports it, leave-one-GPU-out).
Prints every row, then per card, weights, engine and card count: median |error| of the time per token, p90,
median predicted/measured ratio and Spearman, and the issue's decode targets (median <= 12%, Spearman >= 0.9).
Run: .venv/bin/python benchmarks/public_speed_decode.py
"""

from __future__ import annotations

import csv
import os
import sys
import tempfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from public_speed import DATA, breakdown, summarize

from advisor.catalog import find_card, open_catalog
from advisor.core import zoo
from advisor.core.estimate import estimate
from advisor.core.workload import Workload
from advisor.recommend.devices import generation_rates, link
from advisor.recommend.generation_speed import GenerationRun, Split, generation_speed
from advisor.recommend.serving import generation_run

FILE = DATA / "public_decode_speed.csv"
TARGET_MEDIAN, TARGET_SPEARMAN = 0.12, 0.9  # issue 24 "Done when": decode


@dataclass(frozen=True)
class DecodeRow:
    model: str
    engine: str
    card: str
    tensor_ways: int
    workload: Workload
    measured_tokens_per_s: float
    source: str

    @property
    def label(self) -> str:
        w = self.workload
        return f"{self.model} {w.weights} x{self.tensor_ways} b{w.batch}"


def load() -> tuple[list[DecodeRow], list[str]]:
    """The expressible rows, and a line for each one left out."""
    rows, left_out = [], []
    with FILE.open(newline="") as handle:
        for r in csv.DictReader(handle):
            if r["excluded"]:
                left_out.append(f"{r['source_model']} {r['weights']} x{r['count']} on {r['card']}: {r['excluded']}")
                continue
            workload = Workload("generate", int(r["batch"]), "bf16",
                                weights=r["weights"],  # type: ignore[arg-type]
                                kv_cache="bf16", prompt_len=int(r["prompt_len"]), new_tokens=int(r["new_tokens"]))
            rows.append(DecodeRow(r["model"], r["engine"], r["card"], int(r["tensor_ways"]), workload,
                                  float(r["tokens_per_s"]), r["source"]))
    return rows, left_out


@cache
def _run(model: str, workload: Workload) -> GenerationRun:
    run = generation_run(estimate(zoo.build(model, workload.prompt_len + workload.new_tokens), workload))
    if run is None:
        raise SystemExit(f"{FILE.name}: {model} has no generation profile")
    return run


def predict(rows: list[DecodeRow]) -> list[float]:
    """Decode tokens/s of each row: its tensor-parallel cards talk over the card's own link (NVLink on A100)."""
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        catalog = open_catalog(os.path.join(tmp, "catalog.sqlite3"))
        with catalog.read() as session:
            for r in rows:
                card = find_card(session, r.card)
                split = Split(tensor_ways=r.tensor_ways, link_gbs=link(card)[0])
                speed = generation_speed(_run(r.model, r.workload), generation_rates(card), split=split)
                out.append(speed.decode_tokens_per_s)
        catalog.close()
    return out


def main() -> int:
    rows, left_out = load()
    predicted = predict(rows)
    print(f"{'card':18} {'run':34} {'measured tok/s':>14} {'predicted':>10} {'ratio':>6}  source")
    for r, p in zip(rows, predicted, strict=True):
        print(f"{r.card[:18]:18} {r.label:34} {r.measured_tokens_per_s:14.1f} {p:10.1f} "
              f"{p / r.measured_tokens_per_s:6.2f}  {r.source}")
    print(f"\n{len(rows)} rows predicted; {len(left_out)} not expressible:", *left_out, sep="\n  ")
    measured = [r.measured_tokens_per_s for r in rows]
    for title, keys in (("per card", [r.card for r in rows]),
                        ("per weights", [str(r.workload.weights) for r in rows]),
                        ("per engine", [r.engine for r in rows]),
                        ("per card count (tensor parallel)", [f"{r.tensor_ways} card(s)" for r in rows]),
                        ("per model", [r.model for r in rows]),
                        ("all rows", ["all"] * len(rows))):
        breakdown(title, keys, measured, predicted)
    for label, chosen in (("all rows", range(len(rows))),
                          ("one card", [i for i, r in enumerate(rows) if r.tensor_ways == 1])):
        s = summarize([measured[i] for i in chosen], [predicted[i] for i in chosen])
        print(f"\ntargets (issue 24), decode, {label} ({s.rows}): median error {s.median_error:.1%} "
              f"(<= {TARGET_MEDIAN:.0%}: {'met' if s.median_error <= TARGET_MEDIAN else 'NOT met'}), "
              f"Spearman {s.spearman:.3f} (>= {TARGET_SPEARMAN}: "
              f"{'met' if s.spearman >= TARGET_SPEARMAN else 'NOT met'})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
