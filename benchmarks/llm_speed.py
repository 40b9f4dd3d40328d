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
from pathlib import Path

from advisor.catalog.records import CardRecord
from advisor.catalog.seed import load_bundled
from advisor.core.workload import Workload
from advisor.recommend.devices import Device, device, link
from advisor.recommend.generation_speed import (
    FITTED,
    GenerationEfficiency,
    GenerationRun,
    Split,
    generation_speed,
)

DATA = Path(__file__).resolve().parent / "data" / "llm_speed.csv"


@dataclass(frozen=True)
class Llama:
    """Published architecture (Meta's config.json) and llama.cpp GGUF file sizes (the source's README,
    GiB), from which the generation profile of a llama-bench run follows."""

    params: int
    layers: int
    hidden: int
    kv_heads: int
    head_dim: int
    vocab: int
    file_gib: dict[str, float]

    def profile(self, weights: str, prompt: int, new: int) -> LlamaProfile:
        stored = int(self.file_gib[weights] * 2**30)
        embedding = self.vocab * self.hidden
        # the token-embedding table is looked up, not read, in a decode step; llama-bench asks logits of
        # the last prompt token only, so prefill GEMMs cover the blocks, not the output head
        active = stored - stored * embedding // self.params
        blocks = self.params - 2 * embedding
        attention = 4 * self.layers * self.hidden  # QK^T and AV, FLOPs per (query, key) pair
        context = prompt + new / 2
        return LlamaProfile(stored, active, 2 * self.layers * self.kv_heads * self.head_dim * 2,
                            2.0 * blocks * prompt + attention * prompt * prompt,
                            2.0 * (blocks + embedding) + attention * context, self.layers, self.hidden,
                            self.kv_heads, self.hidden // self.head_dim)


@dataclass(frozen=True)
class LlamaProfile:
    weight_bytes: int
    active_weight_bytes: int
    kv_bytes_per_token: int  # K and V, FP16 (llama.cpp's default cache type)
    prefill_flops: float
    decode_flops_per_token: float
    layers: int
    hidden_size: int
    kv_heads: int
    attention_heads: int


MODELS = {
    "llama-3-8b": Llama(8_030_261_248, 32, 4096, 8, 128, 128_256, {"q4_k_m": 4.58, "f16": 14.96}),
    "llama-3-70b": Llama(70_553_706_496, 80, 8192, 8, 128, 128_256, {"q4_k_m": 39.59, "f16": 131.42}),
}


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
            prompt, new = (tokens, 0) if r["test"].startswith("pp") else (0, tokens)
            model = MODELS[r["model"]]
            run = GenerationRun(model.profile(r["weights"], prompt, new), model.params, 1, prompt, new)
            rows.append(Row(r["gpu"], int(r["count"]), r["model"], r["weights"], r["test"],
                            float(r["tokens_per_s"]), run))
    return rows


def devices() -> dict[str, tuple[Device, float]]:
    cards = {}
    for spec in load_bundled().cards:
        card = CardRecord(**{f.name: getattr(spec, f.name) for f in fields(spec)})
        # RunPod's multi-GPU pods talk over PCIe (the source's pods have no NVLink bridges)
        cards[card.name] = (device(card, Workload()), link(replace(card, link_kind="none"))[0])
    return cards


def predict(row: Row, cards: dict[str, tuple[Device, float]], eff: GenerationEfficiency) -> float:
    dev, pcie = cards[row.gpu]
    speed = generation_speed(row.run, dev, eff, Split(stages=row.count, link_gbs=pcie))
    return speed.prefill_tokens_per_s if row.prefill else speed.decode_tokens_per_s


def loss(rows: Sequence[Row], cards: dict[str, tuple[Device, float]], eff: GenerationEfficiency) -> float:
    return sum(abs(predict(r, cards, eff) / r.measured - 1) for r in rows) / len(rows)


GRIDS: dict[str, tuple[float, ...]] = {
    "tensor": tuple(x / 100 for x in range(15, 81, 1)),
    "memory_gddr": tuple(x / 100 for x in range(40, 101, 1)),
    "memory_hbm": tuple(x / 100 for x in range(20, 101, 1)),
    "seconds_per_layer": tuple(x * 1e-6 for x in range(0, 201, 4)),
}


def fit(rows: Sequence[Row], cards: dict[str, tuple[Device, float]]) -> GenerationEfficiency:
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
    return (f"{label}: {len(rows)} rows, Spearman {spearman(values, [r.measured for r in rows]):.3f}, "
            f"median |error| {statistics.median(errors):.1%}, worst {max(errors):.1%}")


def main() -> int:
    cards, rows = devices(), load_rows()
    single = [r for r in rows if r.count == 1]
    fitted = fit(single, cards)
    print(f"fitted on {len(single)} single-GPU rows: {fitted}  (in the code: {FITTED})")
    out_of_sample: dict[int, float] = {}
    for gpu in sorted({r.gpu for r in single}):
        held = fit([r for r in single if r.gpu != gpu], cards)
        out_of_sample.update({id(r): predict(r, cards, held) for r in single if r.gpu == gpu})
    print(f"\n{'GPU':<26}{'model':<13}{'weights':<8}{'test':<7}{'measured':>10}{'predicted':>11}{'error':>8}"
          f"{'LOGO pred':>11}{'LOGO err':>9}")
    for r in single:
        p, q = predict(r, cards, FITTED), out_of_sample[id(r)]
        print(f"{r.gpu:<26}{r.model:<13}{r.weights:<8}{r.test:<7}{r.measured:>10.1f}{p:>11.1f}"
              f"{p / r.measured - 1:>8.1%}{q:>11.1f}{q / r.measured - 1:>9.1%}")
    print(f"\nGPUs: {len({r.gpu for r in single})}")
    for phase, subset in (("prefill", [r for r in single if r.prefill]),
                          ("decode", [r for r in single if not r.prefill])):
        print(summary(f"{phase} in-sample (constants in the code)", subset, lambda r: predict(r, cards, FITTED)))
        print(summary(f"{phase} leave-one-GPU-out", subset, lambda r: out_of_sample[id(r)]))
    multi = [r for r in rows if r.count > 1]
    print(f"\nlayer split over several cards (never fitted on), {len(multi)} rows:")
    for phase, subset in (("prefill", [r for r in multi if r.prefill]),
                          ("decode", [r for r in multi if not r.prefill])):
        print(summary(f"{phase} multi-GPU layer split", subset, lambda r: predict(r, cards, FITTED)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
