"""Predicted against published LLM memory (benchmarks/data/llm_memory_runs.csv: each row names its source):
the memory error where a run reports bytes, and whether our fit verdict agrees with what happened (it ran, or
ran out of memory), per runtime. Rows whose workload the command line cannot express name the missing option
and are counted apart.

What each runtime's measured figure is compared with:
- vLLM: the engine's memory besides the KV cache (weights, profiled activations, non-torch memory, CUDA
  graphs, as its startup log prints them) against our weights + workspace;
- llama.cpp: the CUDA0 buffers its log prints (model, KV cache, compute) against our peak;
- transformers: torch.cuda.max_memory_allocated() where the source gives it, against our peak (against our
  reserved_bytes where the CSV's measured_is says "reserved", as torchtune's README tables report).
Runs on several cards (columns `cards`, `plan`: tensor_parallel for vLLM's -tp, layer_split for its
--pipeline-parallel-size, zero3 for FSDP) are compared card by card: the busiest card's figures as `advisor
recommend` ranks that plan on that many cards (recommend.per_card.card_memory), one card's alone otherwise.
A run fits when required_bytes is within the card's usable memory (recommend.devices.usable_bytes). card_gib is
the memory CUDA sees where the source prints it (79.18 GiB for an H100, 14.74 for a T4), else the catalog's
size; max_num_seqs is vLLM's default for the engine and card that ran (256; V1 on an H100: 1024), and
max_num_batched_tokens its profile's tokens where that engine's default differs from 8192 (V0 without
chunked prefill: max(max_model_len, 2048), vllm/config.py SchedulerConfig); enforce_eager is 1 where the run
passed --enforce-eager (no CUDA graphs); adapter_dtype is "base" for torchtune's LoRA rows, whose LoRALinear
is built in the model's bf16 (PEFT's fp32 upcast otherwise). A vLLM row's runtime names the release whose startup
it follows where that is not the newest (`vllm==0.16`: V0 and V1 up to 0.16, --vllm-version 0.16); plain `vllm`
rows ran 0.17 or later (llm-d-planner's 0.17-0.19 logs) or do not say. A training row's `transformers==4.45`
names the transformers release whose causal-LM loss it ran (4.45 or earlier: the output keeps fp32 logits,
--transformers-version 4.45): Answer.AI's fsdp_qlora runs (README: transformers 4.37 or 4.40), the 2023
bitsandbytes blog's (4.30), and torchtune's May 2024 Llama2-7B table, whose recipes kept the shifted fp32 logits
referenced through backward the same way (before `del logits`, 2024-07-28).

Run: .venv/bin/python benchmarks/llm_memory.py
"""

from __future__ import annotations

import csv
import re
import statistics
import sys
from dataclasses import dataclass, replace
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from advisor.core import zoo  # noqa: E402
from advisor.core.analytic import estimate  # noqa: E402
from advisor.core.errors import SpecError  # noqa: E402
from advisor.core.estimate import Estimate  # noqa: E402
from advisor.core.llm.vllm_graphs import GRAPH_BYTES_PER_LAYER_GRAPH  # noqa: E402
from advisor.core.workload import Runtime, Workload  # noqa: E402
from advisor.recommend.devices import usable_bytes  # noqa: E402
from advisor.recommend.per_card import CardMemory, card_memory, named_cost  # noqa: E402

RUNS = HERE / "data" / "llm_memory_runs.csv"
GIB = 2**30
CLOSE_CALL = 0.10


def runtime_of(row: dict[str, str]) -> tuple[str, str]:
    """The runtime and, for vLLM, the release the row names (`vllm==0.16`; "" = the newest)."""
    name, _, release = row["runtime"].partition("==")
    return name, release


def workload(row: dict[str, str]) -> Workload:
    generating = row["mode"] == "generate"
    runtime, release = runtime_of(row)
    base = Workload()
    return Workload(
        row["mode"],
        int(row["batch"]),
        row["precision"],
        row["optimizer"] or "adamw",  # type: ignore[arg-type]
        checkpointing=bool(row["checkpointing"]),
        weights=row["weights"] or None,  # type: ignore[arg-type]
        finetune=row["finetune"] or "full",
        lora_rank=int(row["lora_rank"] or 16),  # type: ignore[arg-type]
        lora_targets=tuple(filter(None, row["lora_targets"].split(";"))),
        prompt_len=int(row["prompt_len"] or 512),
        new_tokens=int(row["new_tokens"] or 128),
        runtime=Runtime(runtime) if generating else None,
        attention=row["attention"] or None,
        gpu_memory_utilization=float(row["utilization"] or 0.9),  # type: ignore[arg-type]
        max_num_seqs=int(row["max_num_seqs"] or 256),
        max_num_batched_tokens=int(row["max_num_batched_tokens"] or 8192),
        offload=row["offload"] or None,  # type: ignore[arg-type]
        drops_logits=bool(row["drops_logits"]),
        enforce_eager=bool(row["enforce_eager"]),
        adapter_dtype=row["adapter_dtype"] or "fp32",  # type: ignore[arg-type]
        vllm_version=(release if runtime == Runtime.VLLM else "") or base.vllm_version,  # type: ignore[arg-type]
        transformers_version=(release if runtime == Runtime.TRANSFORMERS else "")  # type: ignore[arg-type]
        or base.transformers_version,
    )


def predicted_gib(row: dict[str, str], card: CardMemory) -> float:
    if runtime_of(row)[0] == Runtime.VLLM:  # everything but the KV cache: weights, workspace
        return (card.peak_bytes - card.kv_cache_bytes) / GIB
    if row["measured_is"] == "reserved":  # torch.cuda.max_memory_reserved(), as torchtune's tables report
        return card.reserved_bytes / GIB
    return card.peak_bytes / GIB


def cards(row: dict[str, str]) -> int:
    return int(row.get("cards") or 1)  # rows added before the column read it as missing


def run(row: dict[str, str], expandable: bool = False) -> tuple[Estimate, CardMemory, bool]:
    seq = int(row["seq_len"]) if row["seq_len"] else int(row["prompt_len"] or 512)
    w = workload(row)
    e = estimate(zoo.build(row["model"], seq), replace(w, expandable_segments=expandable or w.expandable_segments))
    card = card_memory(e, named_cost(e, row.get("plan") or "single", cards(row)))
    return e, card, card.required_bytes <= usable_bytes(int(float(row["card_gib"]) * GIB))


@dataclass(frozen=True)
class Outcome:
    row: dict[str, str]
    error: float | None  # predicted / measured - 1, where the source gives bytes
    agrees: bool  # our fit verdict is what happened
    agrees_expandable: bool | None  # the same with expandable_segments:True (training rows)
    margin: float  # required / usable - 1: how close the call was


def evaluate(row: dict[str, str]) -> Outcome:
    _, card, fits = run(row)
    predicted, measured = predicted_gib(row, card), row["measured_gib"]
    error = predicted / float(measured) - 1 if measured else None
    fitted = row["outcome"] == "fit"
    expandable = run(row, expandable=True)[2] == fitted if row["mode"] == "train" else None
    usable = usable_bytes(int(float(row["card_gib"]) * GIB)) / GIB
    required = card.required_bytes / GIB
    plan = f" {cards(row)} x {card.cost.plan}" if cards(row) > 1 else ""
    print(
        f"{row['id']:26} {row['runtime']:12} {measured or '-':>9} {predicted:9.2f} "
        f"{'' if error is None else f'{error:+.1%}':>7} {required:9.2f} "
        f"{usable:7.2f} {row['outcome']:>7} {'fit' if fits else 'oom':>5}{plan}"
    )
    return Outcome(row, error, fits == fitted, expandable, required / usable - 1)


def summary(name: str, outcomes: list[Outcome]) -> str:
    errors = [abs(o.error) for o in outcomes if o.error is not None]
    median = f"{statistics.median(errors):.1%}" if errors else "n/a"
    cards = len({o.row["card"] for o in outcomes})
    return (
        f"{name:12} runs {len(outcomes):2} on {cards:2} cards  median |memory error| {median:>6} "
        f"({len(errors)} with bytes)  fit/OOM agreement {sum(o.agrees for o in outcomes)}/{len(outcomes)}"
    )


GRAPHS_LOGGED = re.compile(r"CUDA graphs (-?[\d.]+) GiB")


def _logged_graph_runs(rows: list[dict[str, str]]) -> list[tuple[dict[str, str], float]]:
    """The vLLM 0.17+ runs with CUDA graphs whose log gives the graphs' bytes, and those bytes."""
    found = []
    for row in rows:
        logged = GRAPHS_LOGGED.search(row["measured_what"])
        if row["missing"] or not logged or runtime_of(row) != ("vllm", "") or row["enforce_eager"]:
            continue
        found.append((row, float(logged.group(1)) * GIB))
    return found


def moe_graph_report(rows: list[dict[str, str]]) -> list[str]:
    """Each mixture-of-experts log's CUDA graphs beside ours (core/llm/vllm_graphs.py counts their kernels
    per layer; nothing is fitted to these rows)."""
    lines, errors = [], []
    for row, logged in _logged_graph_runs(rows):
        spec = zoo.build(row["model"], 64).decoder
        if spec is None or spec.moe is None:
            continue
        e, card, _ = run(row)
        engine = e.generation.vllm_engine if e.generation else None
        if engine is None:
            continue
        ours = engine.graph_bytes(card.cost.tensor_ways, card.cost.stages)
        errors.append(abs(ours / logged - 1))
        lines.append(
            f"  {row['id']:34} {engine.moe_layers:2} MoE layers x {engine.graphs:3} graphs, "
            f"+{engine.moe_extra_kernels} kernels: ours {ours / GIB:.2f} GiB, logged {logged / GIB:.2f} "
            f"({ours / logged - 1:+.0%})"
        )
    median = f"{statistics.median(errors):.1%}" if errors else "n/a"
    head = f"CUDA graphs of the {len(errors)} mixture-of-experts logs (vLLM 0.17+): median |graph error| {median}"
    return [head, *lines]


def graph_logs(rows: list[dict[str, str]]) -> list[tuple[str, float, int, int]]:
    """Dense-model vLLM 0.17+ runs whose log gives the CUDA graphs' bytes: (family, logged bytes, the pool we
    count, layers x graphs on the card)."""
    found = []
    for row, logged in _logged_graph_runs(rows):
        e, card, _ = run(row)
        engine, spec = e.generation.vllm_engine if e.generation else None, zoo.build(row["model"], 64).decoder
        if engine is None or spec is None or spec.moe is not None or spec.mla is not None:
            continue
        ways, stages = card.cost.tensor_ways, card.cost.stages
        units = -(-engine.layers // stages) * engine.graphs
        pool = engine.graph_bytes(ways, stages) - units * GRAPH_BYTES_PER_LAYER_GRAPH
        found.append((spec.model_type, logged, pool, units))
    return found


def graph_constant_report(rows: list[dict[str, str]]) -> str:
    """The fitted bytes per layer per graph (core/llm/vllm_graphs.py), refitted here from the logs, and each
    model family's graph error with the constant fitted on the other families."""
    logs = graph_logs(rows)

    def fit(subset: list[tuple[str, float, int, int]]) -> float:
        return statistics.median((logged - pool) / units for _, logged, pool, units in subset)

    families = sorted({family for family, *_ in logs})
    held_out, constants = [], []
    for family in families:
        constant = fit([log for log in logs if log[0] != family])
        constants.append(constant)
        held_out += [abs((pool + constant * units) / logged - 1) for f, logged, pool, units in logs if f == family]
    in_sample = [abs((pool + fit(logs) * units) / logged - 1) for _, logged, pool, units in logs]
    return (
        f"CUDA-graph bytes per layer per graph (vLLM 0.17+, {len(logs)} dense-model logs, {len(families)} "
        f"families): refitted {fit(logs):,.0f} B (code: {GRAPH_BYTES_PER_LAYER_GRAPH:,} B), median |graph "
        f"error| {statistics.median(in_sample):.1%}; leave-one-family-out constants "
        f"{min(constants):,.0f}-{max(constants):,.0f} B, median |graph error| {statistics.median(held_out):.1%}"
    )


def main() -> int:
    with RUNS.open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    print(
        f"{'run':26} {'runtime':12} {'measured':>9} {'predicted':>9} {'error':>7} {'required':>9} "
        f"{'usable':>7} {'outcome':>7} {'ours':>5}"
    )
    outcomes: list[Outcome] = []
    missing = [f"{row['id']}: {row['missing']}" for row in rows if row["missing"]]
    for row in rows:
        if not row["missing"]:
            try:
                outcomes.append(evaluate(row))
            except SpecError as error:
                missing.append(f"{row['id']}: {error}")
    print()
    for runtime in sorted({runtime_of(o.row)[0] for o in outcomes}):
        print(summary(runtime, [o for o in outcomes if runtime_of(o.row)[0] == runtime]))
    print(summary("all", outcomes))
    print(summary("multi-card", [o for o in outcomes if cards(o.row) > 1]))
    close = [o for o in outcomes if abs(o.margin) <= CLOSE_CALL]
    print(
        f"close calls (required within {CLOSE_CALL:.0%} of usable): "
        f"fit/OOM agreement {sum(o.agrees for o in close)}/{len(close)}"
    )
    expandable = [o.agrees_expandable for o in outcomes if o.agrees_expandable is not None]
    print(
        f"training rows again with --expandable-segments (the sources do not say which allocator ran): "
        f"fit/OOM agreement {sum(expandable)}/{len(expandable)}"
    )
    print(graph_constant_report(rows))
    for line in moe_graph_report(rows):
        print(line)
    print(f"{len(rows)} published runs, {len(missing)} not expressible (README: 'not expressible yet'):")
    for line in missing:
        print(f"  {line}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
