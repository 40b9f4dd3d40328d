"""Generation decode speed against public runs of four runtimes (issue 24 items 2 and 4).

Data, each row with its source (repository@commit:path, table):
- benchmarks/data/public_decode_speed.csv (built by benchmarks/data/extract_public_speed.py): gpt-fast's README
  tables (pytorch-labs/gpt-fast; torch.compile'd, batch 1, a 5-token prompt, 200 new tokens; bf16, int8 and
  int4 weight-only; 1-8 A100 80GB tensor-parallel, power-limited to 330 W; one MI250X GCD) and Qwen2.5's speed
  benchmark (QwenLM/Qwen2.5 docs; transformers 4.46 with flash-attention 2 and vLLM 0.6.3, batch 1, prompts of
  1 to 129,024 tokens, 2048 new tokens, BF16 / GPTQ-Int8 / GPTQ-Int4 / AWQ, 1-4 A100 80GB: vLLM tensor-parallel,
  transformers' device_map="auto" layer split). Both time the whole generate() call, so the prediction is
  new_tokens / (prefill + new_tokens x decode step at the mean context).
- benchmarks/data/public_decode_speed_qwen3.csv (benchmarks/data/extract_qwen3_speed.py): Qwen3's speed benchmark
  (QwenLM/Qwen2.5 docs, 2025-05), transformers 4.51 on one H20, batch 1, 2048 new tokens after 1 to 30,720.
- benchmarks/data/llm_speed.csv: llama.cpp's llama-bench tg512 (decode alone) on 16 GPUs, 1-8 cards layer-split;
  pp512 rows give the prefill check per plan.
The fitted constants of advisor/recommend/generation_runtimes.py are refitted here on the rows (coordinate
descent of the mean |log(predicted / measured)|) and printed beside the code's; then every row is predicted by
constants fitted without it: leave-one-model-out, leave-one-runtime-out (the constants the runtimes share;
the held-out runtime's own ones stay as in the code) and leave-one-card-out (llama.cpp's constants by
benchmarks/llm_speed.py's fit). Figures: median |error| of the time per token, p90, median predicted/measured
ratio and Spearman per card, runtime, weights, card count, prompt and model; the issue's decode targets
(median <= 12%, Spearman >= 0.9).
Run: .venv/bin/python benchmarks/public_speed_decode.py [--rows]
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from decode_rows import ENGINES, DecodeRow, llama_rows, load, predict
from llm_speed import fit as fit_llama
from public_speed import breakdown, leave_one_out, summarize

from advisor.recommend.generation_runtimes import GenerationEfficiency

TARGET_MEDIAN, TARGET_SPEARMAN = 0.12, 0.9  # issue 24 "Done when": decode
# name -> (engines it applies to, the GenerationEfficiency field, the grid searched: physical ranges)
FITTED: dict[str, tuple[tuple[str, ...], str, tuple[float, ...]]] = {
    "GRAPH_LAYER_SECONDS": (
        ("vLLM", "gpt-fast", "transformers"),
        "seconds_per_layer",
        tuple(x * 1e-6 for x in range(0, 151, 2)),
    ),
    "QUANTIZED_LINEAR_SECONDS": (
        ("vLLM", "gpt-fast", "transformers"),
        "quantized_linear_seconds",
        tuple(x * 0.5e-6 for x in range(0, 41)),
    ),
    "VLLM_HOST_STEP_SECONDS": (("vLLM",), "host_step_seconds", tuple(x * 1e-4 for x in range(0, 61))),
    "TRANSFORMERS_OP_SECONDS": (("transformers",), "host_op_seconds", tuple(x * 0.5e-6 for x in range(10, 121))),
    "QUANTIZED_MODULE_SECONDS": (
        ("transformers",),
        "quantized_linear_host_seconds",
        tuple(x * 2e-6 for x in range(0, 51)),
    ),
    "TRANSFORMERS_CACHE_BYTES_PER_SM_CYCLE": (
        ("transformers",),
        "cache_bytes_per_sm_cycle",
        tuple(x / 20 for x in range(10, 121)),
    ),
}
Effs = dict[str, GenerationEfficiency]


def with_values(values: dict[str, float], base: Effs = ENGINES) -> Effs:
    effs = dict(base)
    for name, value in values.items():
        engines, field, _ = FITTED[name]
        for engine in engines:
            effs[engine] = replace(effs[engine], **{field: value})
    return effs


def code_values() -> dict[str, float]:
    return {name: getattr(ENGINES[engines[0]], field) for name, (engines, field, _) in FITTED.items()}


def loss(rows: list[DecodeRow], effs: Effs) -> float:
    from math import log

    return sum(abs(log(predict(r, effs) / r.measured_tokens_per_s)) for r in rows) / max(len(rows), 1)


def fit(rows: list[DecodeRow], names: tuple[str, ...] = tuple(FITTED), rounds: int = 8) -> dict[str, float]:
    """Coordinate descent over the named constants' grids from the code's values, until a round changes
    nothing; constants of runtimes without rows, and those not named, keep the code's values."""
    values = code_values()
    engines = {r.engine for r in rows}
    names = tuple(n for n in names if engines & set(FITTED[n][0]))
    for _ in range(rounds):
        before = dict(values)
        for name in names:
            values[name] = min(FITTED[name][2], key=lambda v: loss(rows, with_values({**values, name: v})))
        if values == before:
            break
    return values


def _prompt(tokens: int) -> str:
    return "prompt <= 16" if tokens <= 16 else "prompt 6k-14k" if tokens <= 14336 else "prompt >= 30k"


def report(title: str, rows: list[DecodeRow], predicted: list[float]) -> None:
    measured = [r.measured_tokens_per_s for r in rows]
    print(f"\n===== {title} =====")
    for heading, keys in (
        ("per card", [r.card for r in rows]),
        ("per runtime", [r.engine for r in rows]),
        ("per runtime and weights", [f"{r.engine} {r.workload.weights}" for r in rows]),
        ("per runtime and card count", [f"{r.engine} {max(r.tensor_ways, r.stages)} card(s)" for r in rows]),
        ("per runtime and prompt", [f"{r.engine} {_prompt(r.workload.prompt_len)}" for r in rows]),
        ("per model", [r.model for r in rows]),
        ("all rows", ["all"] * len(rows)),
    ):
        breakdown(heading, keys, measured, predicted)


def targets(label: str, rows: list[DecodeRow], predicted: list[float]) -> None:
    s = summarize([r.measured_tokens_per_s for r in rows], predicted)
    print(
        f"targets (issue 24), decode, {label} ({s.rows} rows): median error {s.median_error:.1%} "
        f"(<= {TARGET_MEDIAN:.0%}: {'met' if s.median_error <= TARGET_MEDIAN else 'NOT met'}), p90 "
        f"{s.p90_error:.1%}, Spearman {s.spearman:.3f} (>= {TARGET_SPEARMAN}: "
        f"{'met' if s.spearman >= TARGET_SPEARMAN else 'NOT met'})"
    )


def held_out(
    rows: list[DecodeRow],
    keys: list[str],
    title: str,
    names: tuple[str, ...] = tuple(FITTED),
) -> list[float]:
    measured = [r.measured_tokens_per_s for r in rows]

    def model(train: list[int]) -> object:
        effs = with_values(fit([rows[i] for i in train], names))
        return lambda i: predict(rows[i], effs)

    return leave_one_out(title, keys, measured, model)  # type: ignore[arg-type]


def main(argv: list[str]) -> int:
    rows, left_out = load()
    llama, llama_prefill = llama_rows()
    everything = rows + llama
    predicted = [predict(r, ENGINES) for r in everything]
    if "--rows" in argv:
        print(f"{'card':16} {'runtime':12} {'run':40} {'measured tok/s':>14} {'predicted':>10} {'ratio':>6}  source")
        for r, p in zip(everything, predicted, strict=True):
            print(
                f"{r.card[:16]:16} {r.engine:12} {r.label:40} {r.measured_tokens_per_s:14.2f} {p:10.2f} "
                f"{p / r.measured_tokens_per_s:6.2f}  {r.source}"
            )
    print(f"\n{len(everything)} rows predicted; {len(left_out)} not expressible:", *left_out, sep="\n  ")
    fitted = fit(rows)
    print("\nfitted constants (advisor/recommend/generation_runtimes.py), refitted on all the rows here:")
    for name, value in code_values().items():
        print(f"  {name:28} in the code {value:.4g}   refitted {fitted[name]:.4g}")
    report("in-sample: the constants in the code", everything, predicted)
    targets("all rows, constants in the code", everything, predicted)
    targets("without llama.cpp", rows, predicted[: len(rows)])
    held = held_out(rows, [r.model for r in rows], "leave-one-model-out (transformers, vLLM, gpt-fast)")
    targets("leave-one-model-out", rows, held)
    shared = ("GRAPH_LAYER_SECONDS", "QUANTIZED_LINEAR_SECONDS")
    held = held_out(rows, [r.engine for r in rows], "leave-one-runtime-out (the shared constants)", shared)
    targets("leave-one-runtime-out", rows, held)
    # these rows ran on three cards: the A100 (transformers, vLLM, gpt-fast), the H20 (transformers) and an
    # MI250X GCD (gpt-fast); a constant of a runtime without rows left keeps the code's value
    held = held_out(rows, [r.card for r in rows], "leave-one-card-out (transformers, vLLM, gpt-fast)")
    targets("leave-one-card-out", rows, held)
    llama_held = llama_leave_one_card_out(llama)
    targets("llama.cpp leave-one-card-out", llama, llama_held)
    prefill_per_plan(llama_prefill)
    return 0


def llama_leave_one_card_out(llama: list[DecodeRow]) -> list[float]:
    """llama.cpp's constants fitted by benchmarks/llm_speed.py without each card's single-card rows."""
    from llm_speed import devices, load_rows

    cards, source = devices(), [r for r in load_rows() if r.count == 1]
    held = [0.0] * len(llama)
    for card in sorted({r.card for r in llama}):
        eff = fit_llama([r for r in source if r.gpu != card], cards)
        for i, r in enumerate(llama):
            if r.card == card:
                held[i] = predict(r, {**ENGINES, "llama.cpp": eff})
    breakdown(
        "llama.cpp decode leave-one-card-out", [r.card for r in llama], [r.measured_tokens_per_s for r in llama], held
    )
    return held


def prefill_per_plan(prefill: list[DecodeRow]) -> None:
    """llama-bench pp512 (one 512-token chunk): on layer-split cards the chunk passes them in turn."""
    predicted = [predict(r, ENGINES) for r in prefill]
    breakdown(
        "llama.cpp prefill (pp512) per plan",
        [f"{r.stages} cards, layer split" if r.stages > 1 else "1 card" for r in prefill],
        [r.measured_tokens_per_s for r in prefill],
        predicted,
    )


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
