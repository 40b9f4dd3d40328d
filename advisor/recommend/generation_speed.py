"""Prefill and decode speed of text generation on a card: the bytes and FLOPs of each forward pass at what the
runtime's kernels reach of the card, plus the host work the runtime does for every forward.

A decode step (every sequence gains a token) reads every active weight once and every sequence's KV cache
once, and does 2 FLOPs per active weight per sequence: the longer of the two at the card's achievable rates
(bandwidth-bound at batch 1, compute-bound at a large batch). Each forward pass also costs the device a fixed
time per layer (kernel gaps and the small kernels between the GEMMs) and, in an eager runtime, the host one
Python dispatch per op: launches are asynchronous, so the step takes the longer of the host's and the device's
time, plus whatever host work the runtime does between steps (vLLM's scheduler and sampler).
Quantized weights (GPTQ/AWQ/GGUF) are read as their stored bytes: the mat-vec kernels dequantize in registers.

Prefill runs the prompts as GEMMs, compute-bound at the runtime's tensor rate, in chunks (llama.cpp's
n_ubatch, vLLM's chunked prefill) or as one forward (transformers). llama.cpp first expands quantized weights
to FP16 for those GEMMs, once per chunk, which is why its Q4_K_M prefill is slower than F16.

The per-runtime constants and their sources are in advisor.recommend.generation_runtimes.
Not modelled: a mixture-of-experts decode step reads only the active experts at every batch size, although a
large batch touches more distinct experts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from advisor.core.generation import GenerationProfile
from advisor.core.workload import Runtime
from advisor.recommend.devices import GenerationRates
from advisor.recommend.generation_runtimes import (
    COLLECTIVE_LATENCY_S,
    HALF_BYTES,
    HOST_DECODE_BANDWIDTH,
    LLAMA_CPP,
    RUNTIMES,
    GenerationEfficiency,
)
from advisor.recommend.kernels import tensor_ceiling

__all__ = [
    "FITTED",
    "HOST_DECODE_BANDWIDTH",
    "PREFILL_CHUNK_TOKENS",
    "GenerationEfficiency",
    "GenerationRun",
    "GenerationSpeed",
    "Split",
    "decode_step",
    "dequantized_bytes",
    "efficiency",
    "generation_speed",
    "prefill_seconds",
]

FITTED = LLAMA_CPP  # llama.cpp's constants (benchmarks/llm_speed.py fits them)
PREFILL_CHUNK_TOKENS = LLAMA_CPP.prefill_chunk_tokens


@dataclass(frozen=True, kw_only=True)
class GenerationRun:
    """What generation speed needs, independent of the card."""

    profile: GenerationProfile
    param_count: int  # every weight, counted once (an FP16 copy of them is 2 bytes each)
    batch: int  # sequences generated together
    prompt_len: int
    new_tokens: int
    host_ops: int  # ops an eager runtime's Python dispatches per forward (the estimate's rows, as timing counts)
    quantized_linears: int  # linear layers per forward whose weights are stored quantized (GPTQ/AWQ/GGUF)


@dataclass(frozen=True)
class Split:
    """How the model is divided between cards: tensor-parallel ways, or layer-split stages."""

    tensor_ways: int = 1
    stages: int = 1
    link_gbs: float = 0.0  # per direction between the cards


@dataclass(frozen=True)
class GenerationSpeed:
    prefill_s: float  # the whole batch's prompts
    decode_step_s: float  # one token for every sequence, at the mean context length
    prefill_tokens_per_s: float
    decode_tokens_per_s: float  # over all sequences
    decode_bound: str  # "memory", "compute" or "host"


def efficiency(runtime: str) -> GenerationEfficiency:
    """The constants of the runtime a generation profile names (core.workload.Runtime)."""
    return RUNTIMES[Runtime(runtime)]


def _bandwidth(card: GenerationRates, eff: GenerationEfficiency) -> float:
    return card.bandwidth_gbs * 1e9 * (eff.memory_hbm if card.hbm else eff.memory_gddr)


def _tensor_rate(card: GenerationRates, eff: GenerationEfficiency) -> float:
    """llama.cpp: its fitted share of the FP16-accumulate rate; the PyTorch runtimes: the FP32-accumulate
    half-precision rate at the share a large GEMM holds under the board's power limit, by the die's energy rule
    as in training (kernels.tensor_ceiling, recommend.tensor_power)."""
    if eff.fp16_accumulate:
        return card.fp16_accumulate_tflops * 1e12 * eff.tensor
    return card.half_tflops * 1e12 * eff.tensor * tensor_ceiling(card.half_tflops, card.tdp_w, card.tensor_power)


def _comm_s(run: GenerationRun, split: Split, tokens: int) -> float:
    """Tensor parallel: two ring all-reduces of tokens x hidden FP16 activations per layer, each sending
    2 (N-1)/N of it per card. Layer split: one hop of tokens x hidden per stage boundary."""
    size = tokens * run.profile.hidden_size * HALF_BYTES
    link = split.link_gbs * 1e9 if split.link_gbs else math.inf
    seconds = 0.0
    if split.tensor_ways > 1:
        ring = 2 * (split.tensor_ways - 1) / split.tensor_ways
        seconds += 2 * run.profile.layers * (ring * size / link + COLLECTIVE_LATENCY_S)
    if split.stages > 1:
        seconds += (split.stages - 1) * (size / link + COLLECTIVE_LATENCY_S)
    return seconds


def dequantized_bytes(run: GenerationRun, eff: GenerationEfficiency = LLAMA_CPP) -> float:
    """Traffic of expanding quantized weights to FP16 for one prefill chunk: read them, write the copy (0 when
    the weights are already 16-bit or wider, or the runtime's GEMMs dequantize in registers)."""
    dense = run.param_count * HALF_BYTES
    expands = eff.prefill_dequantizes and run.profile.weight_bytes < dense
    return run.profile.weight_bytes + dense if expands else 0.0


def _host_seconds(run: GenerationRun, eff: GenerationEfficiency) -> float:
    """Host time of one forward that overlaps the device's queue (eager dispatch)."""
    return run.host_ops * eff.host_op_seconds + run.quantized_linears * eff.quantized_linear_host_seconds


def prefill_seconds(
    run: GenerationRun, card: GenerationRates, eff: GenerationEfficiency | None = None, split: Split = Split()
) -> float:
    eff = eff or efficiency(run.profile.runtime)
    p, ways = run.profile, split.tensor_ways
    tokens_all = run.batch * run.prompt_len
    chunk_tokens = eff.prefill_chunk_tokens or tokens_all
    chunks = max(math.ceil(tokens_all / chunk_tokens), 1)
    tokens = min(tokens_all, chunk_tokens)
    bandwidth = _bandwidth(card, eff)
    dense = max(p.weight_bytes, run.param_count * HALF_BYTES) if eff.prefill_dequantizes else p.weight_bytes
    compute = p.prefill_flops / chunks / ways / _tensor_rate(card, eff)
    device = (
        max(compute, dense / ways / bandwidth)
        + dequantized_bytes(run, eff) / ways / bandwidth
        + p.layers * eff.seconds_per_layer
        + _comm_s(run, split, tokens)
    )
    chunk = max(device, _host_seconds(run, eff)) + eff.host_step_seconds
    # layer split: one sequence's tokens pass the stages in turn, so one chunk takes `chunk` in all; chunks
    # flow through the stages as a pipeline (llama.cpp since 2024-03, vLLM's pipeline parallel), so the
    # pipeline fills once. A single chunk (transformers' whole prompt, llama-bench's pp512) gains nothing.
    return chunk * (chunks + split.stages - 1) / split.stages


def _device_decode(
    run: GenerationRun, card: GenerationRates, eff: GenerationEfficiency, split: Split
) -> tuple[float, float]:
    """(bytes time, FLOPs time) of one decode step on the device."""
    p, ways = run.profile, split.tensor_ways
    context = run.prompt_len + run.new_tokens / 2
    cache = run.batch * p.kv_bytes_per_token * context
    # transformers reads the cache once per query head (repeat_kv before eager/sdpa attention; flash-attn
    # at one query token likewise), at a rate the multiprocessors' cycles set (generation_runtimes.TRANSFORMERS)
    groups = p.attention_heads / max(p.kv_heads, 1) if eff.cache_per_query_head else 1.0
    cache_rate = _bandwidth(card, eff)
    if eff.cache_bytes_per_sm_cycle:
        cache_rate = min(cache_rate, card.sm_cycles_per_s * eff.cache_bytes_per_sm_cycle)
    # under tensor parallel a card holds kv_heads / ways KV heads, but one at least (vLLM replicates a KV head
    # on ways / kv_heads cards: plans.tensor_parallel_fits); read per query head, the cache still divides by ways
    kv_heads = max(p.kv_heads, 1)
    read = cache * groups / ways if eff.cache_per_query_head else cache * max(1, kv_heads // ways) / kv_heads
    weights = (p.active_weight_bytes - p.host_read_bytes) / ways / _bandwidth(card, eff)
    memory = weights + read / cache_rate + p.host_read_bytes / HOST_DECODE_BANDWIDTH
    compute = run.batch * p.decode_flops_per_token / ways / _tensor_rate(card, eff)
    return memory, compute


def decode_step(
    run: GenerationRun, card: GenerationRates, eff: GenerationEfficiency | None = None, split: Split = Split()
) -> tuple[float, str]:
    """Seconds of one decode step (every sequence gains a token) at the mean context, and its bound."""
    eff = eff or efficiency(run.profile.runtime)
    memory, compute = _device_decode(run, card, eff, split)
    fixed = (
        run.profile.layers * eff.seconds_per_layer
        + run.quantized_linears * eff.quantized_linear_seconds
        + _comm_s(run, split, run.batch)
    )
    device, host = max(memory, compute) + fixed, _host_seconds(run, eff)
    bound = "host" if host > device else "memory" if memory >= compute else "compute"
    return max(device, host) + eff.host_step_seconds, bound


def generation_speed(
    run: GenerationRun, card: GenerationRates, eff: GenerationEfficiency | None = None, split: Split = Split()
) -> GenerationSpeed:
    prefill = prefill_seconds(run, card, eff, split)
    step, bound = decode_step(run, card, eff, split)
    return GenerationSpeed(prefill, step, run.batch * run.prompt_len / prefill, run.batch / step, bound)
