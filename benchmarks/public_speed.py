"""The time model against public throughput measurements of other people's runs, on cards the model was not
fitted on (issue 24 item 4). Every row names its source (repository@commit:path or page + date).

Data (benchmarks/data/):
- public_vision_speed.csv: timm's benchmark.py results (huggingface/pytorch-image-models, results/), eager
  PyTorch AMP fp16 inference (model.eval(), inference_mode) and training (SGD momentum 0.9, CE loss), NCHW,
  synthetic input, on RTX 3090 / 4090 / 5090 / RTX PRO 6000 Max-Q, for the timm models that are the zoo's
  graphs (same parameter count and MACs) at the zoo's input size.
- public_finetune_speed.csv: torchtune's README speed tables (pytorch/torchtune): Llama-2-7B LoRA and full
  fine-tuning on one RTX 4090 (batch 4, seq 2048), Llama 3.2 3B packed full fine-tuning on an A100; its
  compiled, multi-GPU and unpacked rows are kept as excluded. Answer.AI's FSDP+QLoRA benchmarks
  (AnswerDotAI/fsdp_qlora, benchmarks_03_2024.md): Llama-2-7B LoRA and QLoRA (bitsandbytes NF4) on two RTX
  4090s at 2048 tokens, data parallel (FSDP NO_SHARD) or fully sharded (ZeRO-3); a row's `cards` and `plan`
  say which, and its samples/s is per card (the run's 1,024 samples / 2 / seconds). A multi-card row's step
  is one card's step plus its plan's communication over the card's link (advisor.recommend.plans, as
  `advisor recommend` ranks N cards). Both sources' adapters compute in the base's bf16 (`adapter_dtype`
  base): torchtune's LoRALinear is built in the model's dtype, and Answer.AI's train.py (precision bf16: the
  model loaded in bf16, no FSDP mixed-precision policy, AnswerDotAI/fsdp_qlora@05ed9f2 train.py L538-539) calls
  get_peft_model from PEFT of early 2024, which moved adapters to the base layer's dtype; the fp32 upcast
  (autocast_adapter_dtype) came with PEFT 0.12 in mid-2024.
- public_training_speed.csv: Lambda's deeplearning-benchmark (lambdal/deeplearning-benchmark), 1-GPU training
  throughput of NVIDIA DeepLearningExamples' ResNet-50 v1.5 (SGD momentum, synthetic data) and BERT base/large
  SQuAD fine-tuning (seq 384, Adam family: modelled as adamw) in NGC containers, whose "fp32" runs TF32 tensor
  cores on Ampere and newer and whose BERT uses apex's fused LayerNorm/Adam: faster than the eager HF model,
  but computes attention explicitly (modeling.py's BertSelfAttention: matmul, softmax, dropout, matmul), so
  those rows run with the workload's attention="eager" (their notes say so).
Rows with a non-empty `excluded` column are what the model cannot express (another input size, channels_last,
torch.compile, ...); they are counted and never predicted. By default each (source, card, mode) keeps only its
newest software version (--all-versions keeps every torch release; the spread between releases is printed as
the measurements' own noise floor). Rows on the H200 (the card ../shared/calibration fits on) are shown but
left out of the target figures.

The overall Spearman spans models of very different speeds; the per-card ones are the informative ranking.
ratio = predicted / measured throughput (below 1: the model predicts slower than measured);
error = |predicted step time / measured step time - 1| (the issue's "step-time error").
--loo prints leave-one-card-out and leave-one-family-out breakdowns after one common factor fitted on the other
groups (leave_one_out takes any fit, so a time model's fitted constants can be reported the same way).
Run: .venv/bin/python benchmarks/public_speed.py [--rows] [--all-versions] [--loo]
"""

from __future__ import annotations

import csv
import math
import os
import re
import statistics
import sys
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from advisor.catalog import find_card, open_catalog
from advisor.core import zoo
from advisor.core.analytic import estimate
from advisor.core.estimate import Estimate
from advisor.core.graph import Graph
from advisor.core.workload import Workload
from advisor.recommend.devices import Device, device
from advisor.recommend.plans import plan_cost
from advisor.recommend.timing import StepWork, step_seconds, step_work

DATA = Path(__file__).resolve().parent / "data"
FILES = ("public_vision_speed.csv", "public_training_speed.csv", "public_finetune_speed.csv")
CALIBRATION_CARDS = ("H200 SXM",)  # ../shared/calibration/h200: the time model's constants are fitted there
TARGET_MEDIAN, TARGET_P90, TARGET_RATIO = 0.12, 0.30, (0.85, 1.15)  # issue 24 "Done when"
TARGET_ADAPTERS = 0.20  # LoRA/QLoRA "within 20% of published runs"
Predictor = Callable[[StepWork, Device], float]


@dataclass(frozen=True)
class Row:
    model: str
    seq_len: int | None
    family: str
    card: str
    workload: Workload
    measured_samples_per_s: float
    torch: str
    source: str
    cards: int = 1  # a multi-card run (Answer.AI's 2 x RTX 4090): measured and predicted per card
    plan: str = "single"  # advisor.recommend.plans: data_parallel, zero3 (FSDP FULL_SHARD)

    @property
    def project(self) -> str:
        """The repository the row comes from (its newest-version group)."""
        return self.source.split("@", 1)[0]

    @property
    def label(self) -> str:
        w = self.workload
        seq = f"@{self.seq_len}" if self.seq_len else ""
        extra = f" {w.finetune} r{w.lora_rank}" if w.finetune != "full" else ""
        cards = f" {self.cards}x {self.plan}" if self.cards > 1 else ""
        return f"{self.model}{seq} {w.mode} {w.precision}{extra} b{w.batch}{' ckpt' if w.checkpointing else ''}{cards}"


def _row(r: dict[str, str]) -> Row:
    seq = int(r["seq_len"]) if r.get("seq_len") else None
    adapters = (
        {
            "finetune": r["finetune"],
            "lora_rank": int(r["lora_rank"]),
            "lora_targets": tuple(r["lora_targets"].split(";")),
            "adapter_dtype": r["adapter_dtype"] or "fp32",
        }
        if r.get("lora_rank")
        else {}
    )
    # Lambda's fp32 runs are NGC containers, which turn TF32 matmuls on, and DeepLearningExamples' BERT computes
    # attention explicitly (their notes say so)
    workload = Workload(
        r["mode"],
        int(r["batch"]),
        r["precision"],  # type: ignore[arg-type]
        r["optimizer"] or "sgd_momentum",  # type: ignore[arg-type]
        checkpointing=bool(r.get("checkpointing")),
        tf32="TF32" in r.get("notes", ""),
        attention="eager" if "eager attention" in r.get("notes", "") else None,
        **adapters,
    )  # type: ignore[arg-type]
    cards = int(r.get("cards") or 1)
    plan = r.get("plan") or ("single" if cards == 1 else "data_parallel")
    measured = float(r["samples_per_s"])
    return Row(r["model"], seq, r["family"], r["card"], workload, measured, r["torch"], r["source"], cards, plan)


def load(files: Iterable[str] = FILES) -> tuple[list[Row], dict[str, int]]:
    """The expressible rows, and how many rows each exclusion reason removed ("rows": how many in all; a row
    can have several reasons)."""
    rows: list[Row] = []
    excluded: dict[str, int] = {}
    for name in files:
        path = DATA / name
        if not path.exists():
            continue
        with path.open(newline="") as handle:
            for r in csv.DictReader(handle):
                if r["excluded"]:
                    excluded["rows"] = excluded.get("rows", 0) + 1
                    for reason in r["excluded"].split("; "):
                        excluded[f"{name}: {reason}"] = excluded.get(f"{name}: {reason}", 0) + 1
                else:
                    rows.append(_row(r))
    return rows, excluded


def _version_key(version: str) -> tuple[int, ...]:
    """'2.9.1' -> (2, 9, 1); Lambda's benchmark generations 'v1', 'v2' -> (1,), (2,)."""
    return tuple(int(p) for p in re.findall(r"\d+", version))


def newest(rows: Sequence[Row]) -> list[Row]:
    """Each (project, card, mode)'s rows of its newest software version only."""
    best: dict[tuple[str, str, str], tuple[int, ...]] = {}
    for r in rows:
        key = (r.project, r.card, r.workload.mode)
        best[key] = max(best.get(key, ()), _version_key(r.torch))
    return [r for r in rows if _version_key(r.torch) == best[(r.project, r.card, r.workload.mode)]]


@cache
def _graph(model: str, seq_len: int | None) -> Graph:
    return zoo.build(model, seq_len)


@cache
def _estimate(model: str, seq_len: int | None, workload: Workload) -> Estimate:
    return estimate(_graph(model, seq_len), workload)


@cache
def _work(model: str, seq_len: int | None, workload: Workload) -> StepWork:
    return step_work(_estimate(model, seq_len, workload), _graph(model, seq_len).tokens_per_sample)


def comm_seconds(r: Row, dev: Device) -> float:
    """A multi-card row's communication per step, as `advisor recommend` adds it: its plan's bytes per card
    over the card's link, without overlap (0 on one card)."""
    if r.cards == 1:
        return 0.0
    cost = plan_cost(_estimate(r.model, r.seq_len, r.workload), r.plan, r.cards)
    return dev.comm_seconds(cost.comm_bytes, r.cards)


def predict(rows: Sequence[Row], seconds: Predictor = step_seconds) -> list[float]:
    """Predicted samples/s of every row: one estimate and one step_work per (model, workload), one device per
    (card, workload); `seconds` is the time model (a fitted variant can be passed in)."""
    devices: dict[tuple[str, Workload], Device] = {}
    with tempfile.TemporaryDirectory() as tmp:
        catalog = open_catalog(os.path.join(tmp, "catalog.sqlite3"))
        with catalog.read() as session:
            for r in rows:
                if (r.card, r.workload) not in devices:
                    devices[(r.card, r.workload)] = device(find_card(session, r.card), r.workload)
        catalog.close()
    predicted = []
    for r in rows:
        dev = devices[(r.card, r.workload)]
        predicted.append(
            r.workload.batch / (seconds(_work(r.model, r.seq_len, r.workload), dev) + comm_seconds(r, dev))
        )
    return predicted


def _ranks(values: Sequence[float]) -> list[float]:
    """Ranks from 0, ties sharing their mean rank."""
    order = sorted(range(len(values)), key=values.__getitem__)
    ranks = [0.0] * len(values)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
            end += 1
        for position in range(start, end + 1):
            ranks[order[position]] = (start + end) / 2
        start = end + 1
    return ranks


def spearman(a: Sequence[float], b: Sequence[float]) -> float:
    """Pearson correlation of the ranks (equals 1 - 6 sum d^2 / (n (n^2 - 1)) without ties)."""
    ra, rb = _ranks(a), _ranks(b)
    ma, mb = statistics.fmean(ra), statistics.fmean(rb)
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb, strict=True))
    spread = math.sqrt(sum((x - ma) ** 2 for x in ra) * sum((y - mb) ** 2 for y in rb))
    return cov / spread if spread else float("nan")


def p90(values: Sequence[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(0.9 * len(ordered)) - 1)]


@dataclass(frozen=True)
class Summary:
    rows: int
    median_error: float
    p90_error: float
    median_ratio: float
    spearman: float


def summarize(measured: Sequence[float], predicted: Sequence[float]) -> Summary:
    ratios = [p / m for p, m in zip(predicted, measured, strict=True)]
    errors = [abs(1 / r - 1) for r in ratios]  # step time = batch / throughput
    rank = spearman(measured, predicted) if len(measured) >= 3 else float("nan")
    return Summary(len(ratios), statistics.median(errors), p90(errors), statistics.median(ratios), rank)


def _line(label: str, s: Summary) -> str:
    rank = f"{s.spearman:8.2f}" if not math.isnan(s.spearman) else f"{'-':>8}"
    return f"{label:52} {s.rows:4} {s.median_error:8.1%} {s.p90_error:8.1%} {s.median_ratio:8.2f} {rank}"


def breakdown(title: str, keys: Sequence[str], measured: Sequence[float], predicted: Sequence[float]) -> None:
    """One summary line per distinct key (card, family, project, mode, ...) of the rows."""
    print(f"\n{title:52} {'rows':>4} {'med err':>8} {'p90 err':>8} {'med p/m':>8} {'Spearman':>8}")
    for value in sorted(set(keys)):
        chosen = [i for i, k in enumerate(keys) if k == value]
        print(_line(value, summarize([measured[i] for i in chosen], [predicted[i] for i in chosen])))


Fit = Callable[[list[int]], Callable[[int], float]]  # training rows' indices -> predicted samples/s of row i


def leave_one_out(title: str, keys: Sequence[str], measured: Sequence[float], fit: Fit) -> list[float]:
    """Held-out predictions: each key's rows predicted by `fit` on every other key's rows (leave-one-card-out
    with keys = cards, leave-one-family-out with families); prints their breakdown and returns them."""
    held = [0.0] * len(keys)
    for value in set(keys):
        model = fit([i for i, k in enumerate(keys) if k != value])
        for i in (i for i, k in enumerate(keys) if k == value):
            held[i] = model(i)
    breakdown(title, keys, measured, held)
    return held


def common_factor(measured: Sequence[float], predicted: Sequence[float]) -> Fit:
    """The simplest fitted constant: one factor, the training rows' median measured / predicted."""

    def fit(train: list[int]) -> Callable[[int], float]:
        factor = statistics.median(measured[i] / predicted[i] for i in train)
        return lambda i: predicted[i] * factor

    return fit


def targets(rows: Sequence[Row], predicted: Sequence[float]) -> None:
    """The issue's figures on the rows outside the calibration card."""
    outside = [i for i, r in enumerate(rows) if r.card not in CALIBRATION_CARDS]
    s = summarize([rows[i].measured_samples_per_s for i in outside], [predicted[i] for i in outside])
    print(f"\ntargets (issue 24), {s.rows} rows on cards outside ../shared/calibration:")
    print(
        f"  median step-time error {s.median_error:.1%} (target <= {TARGET_MEDIAN:.0%}): "
        f"{'met' if s.median_error <= TARGET_MEDIAN else 'NOT met'}"
    )
    print(
        f"  p90 step-time error {s.p90_error:.1%} (target <= {TARGET_P90:.0%}): "
        f"{'met' if s.p90_error <= TARGET_P90 else 'NOT met'}"
    )
    print(f"  Spearman rank correlation {s.spearman:.3f}")
    low, high = TARGET_RATIO
    cards = sorted({rows[i].card for i in outside})
    ratios = {
        c: statistics.median(predicted[i] / rows[i].measured_samples_per_s for i in outside if rows[i].card == c)
        for c in cards
    }
    missed = [c for c in cards if not low <= ratios[c] <= high]
    print(
        f"  per-card median ratio within {low}-{high}: {len(cards) - len(missed)} of {len(cards)} cards"
        + (f"; outside: {', '.join(f'{c} {ratios[c]:.2f}' for c in missed)}" if missed else "")
    )
    for i in (i for i in outside if rows[i].workload.finetune != "full"):
        error = rows[i].measured_samples_per_s / predicted[i] - 1  # step time: batch / throughput
        print(
            f"  {rows[i].workload.finetune} {rows[i].label} on {rows[i].card}: step-time error {error:+.1%} "
            f"(target within {TARGET_ADAPTERS:.0%}): {'met' if abs(error) <= TARGET_ADAPTERS else 'NOT met'}"
        )


def noise_floor(rows: Sequence[Row]) -> None:
    """How far the same run moves between software releases (same model, card, workload, project)."""
    groups: dict[tuple[str, str, Workload, str | None], list[Row]] = {}
    for r in rows:
        groups.setdefault((r.project, r.card, r.workload, f"{r.model}@{r.seq_len}"), []).append(r)
    moves = []
    for same in groups.values():
        latest = max(same, key=lambda r: _version_key(r.torch))
        moves += [abs(r.measured_samples_per_s / latest.measured_samples_per_s - 1) for r in same if r is not latest]
    if moves:
        print(
            f"\nnoise floor: {len(moves)} older-release rows differ from the newest release of the same run "
            f"by a median {statistics.median(moves):.1%}, p90 {p90(moves):.1%}"
        )


def print_rows(rows: Sequence[Row], predicted: Sequence[float]) -> None:
    print(f"{'card':28} {'run':46} {'torch':>6} {'measured/s':>11} {'predicted/s':>11} {'ratio':>6}  source")
    for r, p in sorted(zip(rows, predicted, strict=True), key=lambda x: (x[0].card, x[0].family, x[0].label)):
        print(
            f"{r.card[:28]:28} {r.label[:46]:46} {r.torch:>6} {r.measured_samples_per_s:11.1f} {p:11.1f} "
            f"{p / r.measured_samples_per_s:6.2f}  {r.source}"
        )


def main(argv: Sequence[str]) -> int:
    every, excluded = load()
    rows = list(every) if "--all-versions" in argv else newest(every)
    predicted = predict(rows)
    if "--rows" in argv:
        print_rows(rows, predicted)
    print(
        f"{len(rows)} rows predicted ({len(every)} expressible, {len(every) - len(rows)} older software "
        f"releases {'kept' if '--all-versions' in argv else 'left out: --all-versions keeps them'}); "
        f"{excluded.pop('rows', 0)} rows not expressible, by reason (a row can have several):"
    )
    for reason, count in sorted(excluded.items(), key=lambda x: -x[1]):
        print(f"  {count:4}  {reason}")
    noise_floor(every)
    measured = [r.measured_samples_per_s for r in rows]
    for title, key in (
        ("per card", lambda r: r.card),
        ("per family", lambda r: r.family),
        (
            "per mode and precision",
            lambda r: (
                f"{r.workload.mode} {r.workload.precision}"
                + (f" {r.workload.finetune}" if r.workload.finetune != "full" else "")
            ),
        ),
        ("per family, mode and precision", lambda r: f"{r.family} {r.workload.mode} {r.workload.precision}"),
        ("per source", lambda r: r.project),
        ("per card and mode", lambda r: f"{r.card[:40]} {r.workload.mode}"),
        ("all rows", lambda r: "all"),
    ):
        breakdown(title, [key(r) for r in rows], measured, predicted)
    targets(rows, predicted)
    if "--loo" in argv:
        print("\nafter one common factor fitted without the held-out group (what any fitted constant must face):")
        for title, key in (("leave-one-card-out", lambda r: r.card), ("leave-one-family-out", lambda r: r.family)):
            leave_one_out(title, [key(r) for r in rows], measured, common_factor(measured, predicted))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
