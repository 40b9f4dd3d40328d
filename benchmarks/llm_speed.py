"""Generation speed predicted against public llama.cpp measurements (benchmarks/data/llm_speed.csv).

For each single-GPU row: the predicted prefill (pp512) or decode (tg512) tokens/s beside the measured one,
the error in-sample (efficiencies fitted on every row) and leave-one-GPU-out (fitted without that GPU's
rows), then Spearman rank correlation and median |error| for prefill and decode. Multi-GPU rows (llama.cpp's
default layer split) are predicted with the fitted constants and never fitted on.
Run: .venv/bin/python benchmarks/llm_speed.py
"""

from __future__ import annotations

import csv
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields, replace
from functools import cache
from pathlib import Path

from advisor.catalog.bundled import load_bundled
from advisor.catalog.records import CardRecord
from advisor.core import zoo
from advisor.core.analytic import estimate
from advisor.core.estimate import Estimate
from advisor.core.workload import Workload
from advisor.recommend.devices import GenerationRates, generation_rates, link
from advisor.recommend.generation_speed import (
    FITTED,
    GenerationEfficiency,
    GenerationRun,
    Split,
    generation_speed,
)
from advisor.recommend.serving import generation_run

DATA = Path(__file__).resolve().parent / "data" / "llm_speed.csv"


# The source's GGUF files are Llama 3 8B/70B; the zoo's Llama 3.1 presets have the same architecture and
# parameter counts (3.1 changed the RoPE scaling and the context length, neither of which changes the bytes).
ZOO = {"llama-3-8b": "llama-3.1-8b", "llama-3-70b": "llama-3.1-70b"}
WEIGHTS = {"q4_k_m": "q4_k_m", "f16": "fp16"}


@cache
def estimated(model: str, weights: str, prompt: int, new: int) -> Estimate:
    """The advisor's own generation estimate of a llama-bench run (fp16 KV cache, llama.cpp's default)."""
    workload = Workload(
        "generate",
        1,
        "fp16",
        weights=WEIGHTS[weights],
        kv_cache="fp16",  # type: ignore[arg-type]
        prompt_len=prompt,
        new_tokens=new,
    )
    return estimate(zoo.build(ZOO[model], prompt + new), workload)


@dataclass(frozen=True)
class Row:
    gpu: str
    count: int
    model: str
    weights: str
    test: str  # pp512: prompt processing of 512 tokens; tg512: generating 512 tokens from an empty context
    measured: float
    run: GenerationRun

    @property
    def prefill(self) -> bool:
        return self.test.startswith("pp")


def load_rows() -> list[Row]:
    rows = []
    with DATA.open(newline="") as f:
        for r in csv.DictReader(f):
            if r["excluded"]:
                continue
            tokens = int(r["test"][2:])
            # tg: generating from an empty context (one token of prompt: the estimate needs one)
            prompt, new = (tokens, 1) if r["test"].startswith("pp") else (1, tokens)
            run = generation_run(estimated(r["model"], r["weights"], prompt, new))
            if run is None:
                raise SystemExit(f"{r['model']}: the estimate has no generation profile")
            rows.append(
                Row(r["gpu"], int(r["count"]), r["model"], r["weights"], r["test"], float(r["tokens_per_s"]), run)
            )
    return rows


def excluded_rows() -> list[str]:
    with DATA.open(newline="") as f:
        return [
            f"{r['gpu']} x{r['count']} {r['model']} {r['weights']} {r['test']} {r['tokens_per_s']}: {r['excluded']}"
            for r in csv.DictReader(f)
            if r["excluded"]
        ]


def devices() -> dict[str, tuple[GenerationRates, float]]:
    cards = {}
    for spec in load_bundled().cards:
        card = CardRecord(**{f.name: getattr(spec, f.name) for f in fields(spec)})
        # RunPod's multi-GPU pods talk over PCIe (the source's pods have no NVLink bridges)
        cards[card.name] = (generation_rates(card), link(replace(card, link_kind="none"))[0])
    return cards


def predict(row: Row, cards: dict[str, tuple[GenerationRates, float]], eff: GenerationEfficiency) -> float:
    rates, pcie = cards[row.gpu]
    speed = generation_speed(row.run, rates, eff, Split(stages=row.count, link_gbs=pcie))
    return speed.prefill_tokens_per_s if row.prefill else speed.decode_tokens_per_s


def loss(rows: Sequence[Row], cards: dict[str, tuple[GenerationRates, float]], eff: GenerationEfficiency) -> float:
    return sum(abs(predict(r, cards, eff) / r.measured - 1) for r in rows) / len(rows)


GRIDS: dict[str, tuple[float, ...]] = {
    "tensor": tuple(x / 100 for x in range(15, 81, 1)),
    "memory_gddr": tuple(x / 100 for x in range(40, 101, 1)),
    "memory_hbm": tuple(x / 100 for x in range(20, 101, 1)),
    "seconds_per_layer": tuple(x * 1e-6 for x in range(0, 201, 4)),
}


def fit(rows: Sequence[Row], cards: dict[str, tuple[GenerationRates, float]]) -> GenerationEfficiency:
    """Coordinate descent of the mean |relative error| over the grids (each constant in turn, 4 rounds)."""
    eff = FITTED
    for _ in range(4):
        for name, grid in GRIDS.items():
            eff = min((replace(eff, **{name: value}) for value in grid), key=lambda e: loss(rows, cards, e))
    return eff


def spearman(a: Sequence[float], b: Sequence[float]) -> float:
    def ranks(xs: Sequence[float]) -> list[float]:
        order = sorted(range(len(xs)), key=lambda i: xs[i])
        out = [0.0] * len(xs)
        for position, i in enumerate(order):
            out[i] = float(position)
        return out

    ra, rb = ranks(a), ranks(b)
    n = len(a)
    return 1 - 6 * sum((x - y) ** 2 for x, y in zip(ra, rb, strict=True)) / (n * (n * n - 1))


def summary(label: str, rows: Sequence[Row], predicted: Callable[[Row], float]) -> str:
    values = [predicted(r) for r in rows]
    errors = [abs(v / r.measured - 1) for v, r in zip(values, rows, strict=True)]
    return (
        f"{label}: {len(rows)} rows, Spearman {spearman(values, [r.measured for r in rows]):.3f}, "
        f"median |error| {statistics.median(errors):.1%}, worst {max(errors):.1%}"
    )


def main() -> int:
    cards, rows = devices(), load_rows()
    single = [r for r in rows if r.count == 1]
    fitted = fit(single, cards)
    print(f"fitted on {len(single)} single-GPU rows: {fitted}  (in the code: {FITTED})")
    out_of_sample: dict[int, float] = {}
    for gpu in sorted({r.gpu for r in single}):
        held = fit([r for r in single if r.gpu != gpu], cards)
        out_of_sample.update({id(r): predict(r, cards, held) for r in single if r.gpu == gpu})
    print(
        f"\n{'GPU':<26}{'model':<13}{'weights':<8}{'test':<7}{'measured':>10}{'predicted':>11}{'error':>8}"
        f"{'LOGO pred':>11}{'LOGO err':>9}"
    )
    for r in single:
        p, q = predict(r, cards, FITTED), out_of_sample[id(r)]
        print(
            f"{r.gpu:<26}{r.model:<13}{r.weights:<8}{r.test:<7}{r.measured:>10.1f}{p:>11.1f}"
            f"{p / r.measured - 1:>8.1%}{q:>11.1f}{q / r.measured - 1:>9.1%}"
        )
    print(f"\nGPUs: {len({r.gpu for r in single})}")
    for phase, subset in (
        ("prefill", [r for r in single if r.prefill]),
        ("decode", [r for r in single if not r.prefill]),
    ):
        print(summary(f"{phase} in-sample (constants in the code)", subset, lambda r: predict(r, cards, FITTED)))
        print(summary(f"{phase} leave-one-GPU-out", subset, lambda r: out_of_sample[id(r)]))
    print("\nrows left out (the CSV says why):", *excluded_rows(), sep="\n  ")
    multi = [r for r in rows if r.count > 1]
    print(f"\nlayer split over several cards (never fitted on), {len(multi)} rows:")
    for phase, subset in (
        ("prefill", [r for r in multi if r.prefill]),
        ("decode", [r for r in multi if not r.prefill]),
    ):
        print(summary(f"{phase} multi-GPU layer split", subset, lambda r: predict(r, cards, FITTED)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
