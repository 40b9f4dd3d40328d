"""The public generation runs of benchmarks/public_speed_decode.py as the advisor's own estimates: each row's
GenerationRun, card rates and split computed once, so refitting the constants only re-times them.

Runtimes: transformers and vLLM rows run as those core.workload.Runtime choices; gpt-fast (torch.compile with
CUDA graphs) with generation_runtimes.COMPILED_GRAPH; llama.cpp rows (llama-bench) as Runtime.LLAMA_CPP.
"""

from __future__ import annotations

import csv
import os
import tempfile
from dataclasses import dataclass, fields, replace
from functools import cache

from public_speed import DATA

from advisor.catalog import find_card, open_catalog
from advisor.catalog.bundled import load_bundled
from advisor.catalog.records import CardRecord
from advisor.core import zoo
from advisor.core.analytic import estimate
from advisor.core.workload import Runtime, Workload
from advisor.recommend.devices import GenerationRates, generation_rates, link
from advisor.recommend.generation_runtimes import (
    COMPILED_GRAPH,
    LLAMA_CPP,
    TRANSFORMERS,
    VLLM,
    GenerationEfficiency,
)
from advisor.recommend.generation_speed import GenerationRun, Split, generation_speed
from advisor.recommend.serving import generation_run

FILE = DATA / "public_decode_speed.csv"
QWEN3_FILE = DATA / "public_decode_speed_qwen3.csv"  # benchmarks/data/extract_qwen3_speed.py
LLAMA_FILE = DATA / "llm_speed.csv"
ENGINES: dict[str, GenerationEfficiency] = {
    "transformers": TRANSFORMERS,
    "vLLM": VLLM,
    "gpt-fast": COMPILED_GRAPH,
    "llama.cpp": LLAMA_CPP,
}
RUNTIME = {
    "transformers": Runtime.TRANSFORMERS,
    "vLLM": Runtime.VLLM,
    "gpt-fast": Runtime.TRANSFORMERS,
    "llama.cpp": Runtime.LLAMA_CPP,
}
# llama-bench's GGUF files are Llama 3 8B/70B; the zoo's Llama 3.1 presets have the same architecture and
# parameter counts (3.1 changed the RoPE scaling and the context length, neither changes the bytes)
LLAMA_ZOO = {"llama-3-8b": "llama-3.1-8b", "llama-3-70b": "llama-3.1-70b"}
LLAMA_WEIGHTS = {"q4_k_m": "q4_k_m", "f16": "fp16"}


@dataclass(frozen=True, kw_only=True)
class DecodeRow:
    model: str
    engine: str
    card: str
    tensor_ways: int
    stages: int
    workload: Workload
    measured_tokens_per_s: float
    source: str
    run: GenerationRun
    rates: GenerationRates
    link_gbs: float
    timed: str  # "generate": new tokens over the whole call; "decode" / "prefill": that phase alone

    @property
    def label(self) -> str:
        w = self.workload
        split = f"tp{self.tensor_ways}" if self.tensor_ways > 1 else f"split{self.stages}" if self.stages > 1 else "x1"
        return f"{self.model} {w.weights} {split} p{w.prompt_len}+{w.new_tokens}"


@cache
def _run(model: str, workload: Workload) -> GenerationRun:
    run = generation_run(estimate(zoo.build(model, workload.prompt_len + workload.new_tokens), workload))
    if run is None:
        raise SystemExit(f"{FILE.name}: {model} has no generation profile")
    return run


def predict(r: DecodeRow, effs: dict[str, GenerationEfficiency]) -> float:
    """Tokens/s of the row's timed phase with the runtimes' constants `effs`."""
    speed = generation_speed(r.run, r.rates, effs[r.engine], Split(r.tensor_ways, r.stages, r.link_gbs))
    if r.timed == "decode":
        return speed.decode_tokens_per_s
    if r.timed == "prefill":
        return speed.prefill_tokens_per_s
    new = r.workload.new_tokens
    return new / (speed.prefill_s + new * speed.decode_step_s)


def load() -> tuple[list[DecodeRow], list[str]]:
    """The expressible rows of public_decode_speed.csv and public_decode_speed_qwen3.csv (cards talk over their
    own link: NVLink on A100), and a line for each one left out."""
    rows, left_out = [], []
    with tempfile.TemporaryDirectory() as tmp:
        catalog = open_catalog(os.path.join(tmp, "catalog.sqlite3"))
        with catalog.read() as session, FILE.open(newline="") as handle, QWEN3_FILE.open(newline="") as qwen3:
            for r in (*csv.DictReader(handle), *csv.DictReader(qwen3)):
                if r["excluded"]:
                    left_out.append(f"{r['source_model']} {r['weights']} x{r['count']} on {r['card']}: {r['excluded']}")
                    continue
                workload = Workload(
                    "generate",
                    int(r["batch"]),
                    r["precision"],  # type: ignore[arg-type]
                    weights=r["weights"],  # type: ignore[arg-type]
                    kv_cache=r["precision"],  # type: ignore[arg-type]
                    prompt_len=int(r["prompt_len"]),
                    new_tokens=int(r["new_tokens"]),
                    runtime=RUNTIME[r["engine"]],
                )
                card = find_card(session, r["card"])
                rows.append(
                    DecodeRow(
                        model=r["model"],
                        engine=r["engine"],
                        card=r["card"],
                        tensor_ways=int(r["tensor_ways"]),
                        stages=int(r["stages"]),
                        workload=workload,
                        measured_tokens_per_s=float(r["tokens_per_s"]),
                        source=r["source"],
                        run=_run(r["model"], workload),
                        rates=generation_rates(card),
                        link_gbs=link(card)[0],
                        timed="generate",
                    )
                )
        catalog.close()
    return rows, left_out


def llama_rows() -> tuple[list[DecodeRow], list[DecodeRow]]:
    """llama-bench's tg512 (decode) and pp512 (prefill) rows of llm_speed.csv; RunPod's multi-GPU pods talk
    over PCIe (no NVLink bridges), and llama.cpp splits layers over them."""
    cards = {
        spec.name: CardRecord(**{f.name: getattr(spec, f.name) for f in fields(spec)}) for spec in load_bundled().cards
    }
    decode, prefill = [], []
    with LLAMA_FILE.open(newline="") as handle:
        for r in csv.DictReader(handle):
            if r["excluded"]:
                continue
            tokens, is_prefill = int(r["test"][2:]), r["test"].startswith("pp")
            prompt, new = (tokens, 1) if is_prefill else (1, tokens)
            workload = Workload(
                "generate",
                1,
                "fp16",
                weights=LLAMA_WEIGHTS[r["weights"]],  # type: ignore[arg-type]
                kv_cache="fp16",
                prompt_len=prompt,
                new_tokens=new,
                runtime=Runtime.LLAMA_CPP,
            )
            card, count = cards[r["gpu"]], int(r["count"])
            row = DecodeRow(
                model=LLAMA_ZOO[r["model"]],
                engine="llama.cpp",
                card=r["gpu"],
                tensor_ways=1,
                stages=count,
                workload=workload,
                measured_tokens_per_s=float(r["tokens_per_s"]),
                source=f"{r['source_url']} (read {r['date_read']})",
                run=_run(LLAMA_ZOO[r["model"]], workload),
                rates=generation_rates(card),
                link_gbs=link(replace(card, link_kind="none"))[0],
                timed="prefill" if is_prefill else "decode",
            )
            (prefill if is_prefill else decode).append(row)
    return decode, prefill
