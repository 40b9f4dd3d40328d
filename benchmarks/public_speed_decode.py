"""Generation decode speed against public runs the generation constants were not fitted on (issue 24 item 4).

Data: benchmarks/data/public_decode_speed.csv (built by benchmarks/data/extract_public_speed.py), each row with
its source (repository@commit:path, table):
- gpt-fast's README tables (pytorch-labs/gpt-fast; torch.compile'd, batch 1, a 5-token prompt, 200 new tokens;
  bf16, int8 and int4 weight-only; 1-8 A100 80GB tensor-parallel, power-limited to 330 W; one MI250X GCD);
- Qwen2.5's speed benchmark (QwenLM/Qwen2.5 docs; transformers with flash-attention 2 and vLLM 0.6.3, batch 1,
  prompts of 1 to 129,024 tokens, 2048 new tokens, BF16 / GPTQ-Int8 / GPTQ-Int4 / AWQ, 1-4 A100 80GB: vLLM
  tensor-parallel, transformers' device_map="auto" layer split).
Both measure new tokens over the whole generate() call, so the prediction is new_tokens / (prefill + new_tokens x
decode step at the mean context). benchmarks/data/llm_speed.csv (llama.cpp) is not used here:
generation_speed.FITTED is fitted on it (benchmarks/llm_speed.py reports it, leave-one-GPU-out).
Prints every row (--rows), then per card, engine, weights, card count, model and prompt length: median |error|
of the time per token, p90, median predicted/measured ratio and Spearman, and the issue's decode targets
(median <= 12%, Spearman >= 0.9).
Run: .venv/bin/python benchmarks/public_speed_decode.py [--rows]
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
from advisor.core.analytic import estimate
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
    stages: int
    workload: Workload
    measured_tokens_per_s: float
    source: str

    @property
    def label(self) -> str:
        w = self.workload
        split = f"tp{self.tensor_ways}" if self.tensor_ways > 1 else f"split{self.stages}" if self.stages > 1 else "x1"
        return f"{self.model} {w.weights} {split} p{w.prompt_len}+{w.new_tokens}"


def load() -> tuple[list[DecodeRow], list[str]]:
    """The expressible rows, and a line for each one left out."""
    rows, left_out = [], []
    with FILE.open(newline="") as handle:
        for r in csv.DictReader(handle):
            if r["excluded"]:
                left_out.append(f"{r['source_model']} {r['weights']} x{r['count']} on {r['card']}: {r['excluded']}")
                continue
            workload = Workload("generate", int(r["batch"]), r["precision"],  # type: ignore[arg-type]
                                weights=r["weights"],  # type: ignore[arg-type]
                                kv_cache=r["precision"],  # type: ignore[arg-type]
                                prompt_len=int(r["prompt_len"]), new_tokens=int(r["new_tokens"]))
            rows.append(DecodeRow(r["model"], r["engine"], r["card"], int(r["tensor_ways"]), int(r["stages"]), workload,
                                  float(r["tokens_per_s"]), r["source"]))
    return rows, left_out


@cache
def _run(model: str, workload: Workload) -> GenerationRun:
    run = generation_run(estimate(zoo.build(model, workload.prompt_len + workload.new_tokens), workload))
    if run is None:
        raise SystemExit(f"{FILE.name}: {model} has no generation profile")
    return run


def predict(rows: list[DecodeRow]) -> list[float]:
    """New tokens/s of each row over prefill and decode; its cards talk over the card's own link (NVLink on A100)."""
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        catalog = open_catalog(os.path.join(tmp, "catalog.sqlite3"))
        with catalog.read() as session:
            for r in rows:
                card = find_card(session, r.card)
                split = Split(tensor_ways=r.tensor_ways, stages=r.stages, link_gbs=link(card)[0])
                speed = generation_speed(_run(r.model, r.workload), generation_rates(card), split=split)
                new = r.workload.new_tokens
                out.append(new / (speed.prefill_s + new * speed.decode_step_s))
        catalog.close()
    return out


def _prompt(tokens: int) -> str:
    return "prompt <= 16" if tokens <= 16 else "prompt 6k-14k" if tokens <= 14336 else "prompt >= 30k"


def main(argv: list[str]) -> int:
    rows, left_out = load()
    predicted = predict(rows)
    if "--rows" in argv:
        print(f"{'card':16} {'engine':12} {'run':40} {'measured tok/s':>14} {'predicted':>10} {'ratio':>6}  source")
        for r, p in zip(rows, predicted, strict=True):
            print(f"{r.card[:16]:16} {r.engine:12} {r.label:40} {r.measured_tokens_per_s:14.2f} {p:10.2f} "
                  f"{p / r.measured_tokens_per_s:6.2f}  {r.source}")
    print(f"\n{len(rows)} rows predicted; {len(left_out)} not expressible:", *left_out, sep="\n  ")
    measured = [r.measured_tokens_per_s for r in rows]
    for title, keys in (("per card", [r.card for r in rows]),
                        ("per weights", [str(r.workload.weights) for r in rows]),
                        ("per engine", [r.engine for r in rows]),
                        ("per engine and weights", [f"{r.engine} {r.workload.weights}" for r in rows]),
                        ("per engine and card count", [f"{r.engine} {max(r.tensor_ways, r.stages)} card(s)"
                                                       for r in rows]),
                        ("per engine and prompt", [f"{r.engine} {_prompt(r.workload.prompt_len)}" for r in rows]),
                        ("per model", [r.model for r in rows]),
                        ("all rows", ["all"] * len(rows))):
        breakdown(title, keys, measured, predicted)
    for label, chosen in (("all rows", range(len(rows))),
                          ("one card", [i for i, r in enumerate(rows) if r.tensor_ways == r.stages == 1])):
        s = summarize([measured[i] for i in chosen], [predicted[i] for i in chosen])
        print(f"\ntargets (issue 24), decode, {label} ({s.rows}): median error {s.median_error:.1%} "
              f"(<= {TARGET_MEDIAN:.0%}: {'met' if s.median_error <= TARGET_MEDIAN else 'NOT met'}), "
              f"Spearman {s.spearman:.3f} (>= {TARGET_SPEARMAN}: "
              f"{'met' if s.spearman >= TARGET_SPEARMAN else 'NOT met'})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
