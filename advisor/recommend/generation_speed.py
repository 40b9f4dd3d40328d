"""Prefill and decode speed of text generation on a card, from a roofline per forward pass.

Prefill runs the prompt through the model in chunks (llama.cpp's n_ubatch = 512; vLLM's chunked prefill is
of the same size): each chunk is a set of GEMMs, compute-bound at the card's FP16-accumulate tensor rate
(llama.cpp's cuBLAS path). Quantized weights are first expanded to FP16 for those GEMMs, once per chunk: the
card reads the quantized bytes and writes the FP16 copy (bandwidth-bound), which is why Q4_K_M prefill is
slower than F16 on the same card.

A decode step reads every active weight once and the whole KV cache of every sequence once, and does
2 FLOPs per active weight per sequence: the longer of the two at the card's rates (bandwidth-bound at batch
1, compute-bound at large batch). Each forward pass also pays a fixed cost per layer (its ~15 kernel
launches and the small ops between the GEMMs), which is what caps small models on fast cards.

The efficiencies are fitted by benchmarks/llm_speed.py on public llama.cpp measurements of 16 NVIDIA
GPUs (benchmarks/data/llm_speed.csv); it prints the fit, and the error when each GPU is left out of it.
Not modelled: AMD and Intel cards get the same efficiencies (no measurement checks them); a mixture-of-
experts decode step reads only the active experts at every batch size, although a large batch touches more
distinct experts; dequantizing inside the decode mat-vec kernels is taken as part of their bandwidth
efficiency.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from advisor.core.generation import GenerationProfile
from advisor.recommend.devices import GenerationRates

# llama.cpp's default physical batch (n_ubatch) for prompt processing.
PREFILL_CHUNK_TOKENS = 512
HALF_BYTES = 2  # activations exchanged between cards, and the FP16 copy of dequantized weights
# Latency of one small NCCL all-reduce or one activation hop between cards (nccl-tests report 10-30 us for
# small messages over PCIe and NVLink): an assumption, no measured row here checks it.
COLLECTIVE_LATENCY_S = 20e-6
# llama.cpp -ngl partial offload: the CPU runs the layers left in system RAM, streaming their weights and cache
# from host memory each decode step. Dual-channel DDR5-4800 peaks at 76.8 GB/s; a CPU mat-vec reaches about
# 80% of it: an assumption (no measured row here checks it), and the token's activations crossing PCIe twice
# per step are negligible beside it.
HOST_DECODE_BANDWIDTH = 60e9


@dataclass(frozen=True)
class GenerationEfficiency:
    tensor: float  # share of the FP16-accumulate tensor rate that prefill GEMMs reach
    memory_gddr: float  # share of the peak bandwidth a decode step streams at on GDDR cards
    memory_hbm: float  # the same on HBM cards (a mat-vec stream keeps too few bytes in flight for them)
    seconds_per_layer: float  # fixed cost of one layer in one forward pass


# Fitted by benchmarks/llm_speed.py on the 68 single-GPU rows of benchmarks/data/llm_speed.csv (llama.cpp,
# Llama 3 8B/70B, Q4_K_M/F16, 16 GPUs), with the zoo's own generation estimates of those models. Its output:
# prefill Spearman 0.970, median |error| 12.6% in-sample, 0.965 / 14.2% leave-one-GPU-out; decode 0.996 /
# 4.7%, 0.992 / 5.7%. Worst: H100 PCIe F16 prefill +84% (it reaches far less of its tensor peak than the
# other cards). Layer split over 2-8 cards, never fitted on: prefill median 11%, decode 5.0%.
FITTED = GenerationEfficiency(tensor=0.41, memory_gddr=0.88, memory_hbm=0.50, seconds_per_layer=72e-6)


@dataclass(frozen=True)
class GenerationRun:
    """What generation speed needs, independent of the card."""

    profile: GenerationProfile
    param_count: int  # every weight, counted once (an FP16 copy of them is 2 bytes each)
    batch: int  # sequences generated together
    prompt_len: int
    new_tokens: int


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
    decode_bound: str  # "memory" or "compute"


def _bandwidth(card: GenerationRates, eff: GenerationEfficiency) -> float:
    return card.bandwidth_gbs * 1e9 * (eff.memory_hbm if card.hbm else eff.memory_gddr)


def _tensor_rate(card: GenerationRates, eff: GenerationEfficiency) -> float:
    return card.fp16_accumulate_tflops * 1e12 * eff.tensor


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


def dequantized_bytes(run: GenerationRun) -> float:
    """Traffic of expanding quantized weights to FP16 for one prefill chunk: read them, write the copy
    (0 when the weights are already 16-bit or wider)."""
    dense = run.param_count * HALF_BYTES
    return run.profile.weight_bytes + dense if run.profile.weight_bytes < dense else 0.0


def prefill_seconds(run: GenerationRun, card: GenerationRates, eff: GenerationEfficiency = FITTED,
                    split: Split = Split()) -> float:
    p, ways = run.profile, split.tensor_ways
    chunks = max(math.ceil(run.batch * run.prompt_len / PREFILL_CHUNK_TOKENS), 1)
    tokens = min(run.batch * run.prompt_len, PREFILL_CHUNK_TOKENS)
    bandwidth = _bandwidth(card, eff)
    weights = max(p.weight_bytes, run.param_count * HALF_BYTES) / ways  # the GEMMs read FP16 weights
    compute = p.prefill_flops / chunks / ways / _tensor_rate(card, eff)
    chunk = (max(compute, weights / bandwidth) + dequantized_bytes(run) / ways / bandwidth
             + p.layers * eff.seconds_per_layer + _comm_s(run, split, tokens))
    # layer split: chunks flow through the stages as a pipeline (llama.cpp since 2024-03); each stage
    # holds 1/stages of the layers, so one chunk takes `chunk` in all and the pipeline fills once
    return chunk * (chunks + split.stages - 1) / split.stages


def decode_step(run: GenerationRun, card: GenerationRates, eff: GenerationEfficiency = FITTED,
                split: Split = Split()) -> tuple[float, str]:
    """Seconds of one decode step (every sequence gains a token) at the mean context, and its bound."""
    p, ways = run.profile, split.tensor_ways
    context = run.prompt_len + run.new_tokens / 2
    read = (p.active_weight_bytes + run.batch * p.kv_bytes_per_token * context - p.host_read_bytes) / ways
    memory = read / _bandwidth(card, eff) + p.host_read_bytes / HOST_DECODE_BANDWIDTH
    compute = run.batch * p.decode_flops_per_token / ways / _tensor_rate(card, eff)
    step = max(memory, compute) + p.layers * eff.seconds_per_layer + _comm_s(run, split, run.batch)
    return step, "memory" if memory >= compute else "compute"


def generation_speed(run: GenerationRun, card: GenerationRates, eff: GenerationEfficiency = FITTED,
                     split: Split = Split()) -> GenerationSpeed:
    prefill = prefill_seconds(run, card, eff, split)
    step, bound = decode_step(run, card, eff, split)
    return GenerationSpeed(prefill, step, run.batch * run.prompt_len / prefill, run.batch / step, bound)
