"""How each generation runtime's forward pass runs on a card and its host: the constants of
advisor.recommend.generation_speed, one record per core.workload.Runtime, each cited or marked fitted.

Fitted constants are fitted by benchmarks/public_speed_decode.py (transformers, vLLM and gpt-fast runs) and
benchmarks/llm_speed.py (llama.cpp), which print them with the leave-one-card-out, leave-one-runtime-out
and leave-one-model-out errors. No constant is set from one row.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from advisor.core.workload import Runtime
from advisor.recommend.kernels import BANDWIDTH_CEILING

HALF_BYTES = 2  # activations exchanged between cards, and the FP16 copy of dequantized weights
# Latency of one small NCCL all-reduce or one activation hop between cards (nccl-tests report 10-30 us for
# small messages over PCIe and NVLink): an assumption, no measured row here checks it alone.
COLLECTIVE_LATENCY_S = 20e-6
# llama.cpp -ngl partial offload: the CPU runs the layers left in system RAM, streaming their weights and cache
# from host memory each decode step. Dual-channel DDR5-4800 peaks at 76.8 GB/s; a CPU mat-vec reaches about
# 80% of it: an assumption (no measured row here checks it), and the token's activations crossing PCIe twice
# per step are negligible beside it.
HOST_DECODE_BANDWIDTH = 60e9


@dataclass(frozen=True, kw_only=True)
class GenerationEfficiency:
    tensor: float  # share of the runtime's tensor rate that prefill GEMMs reach
    fp16_accumulate: bool  # prefill GEMMs accumulate in FP16 (llama.cpp's cuBLAS path), else FP32
    memory_gddr: float  # share of the peak bandwidth a decode step's weight reads reach on GDDR cards
    memory_hbm: float  # the same on HBM cards
    seconds_per_layer: float  # device time of one layer in one forward beyond its bytes (kernel gaps, small ops)
    quantized_linear_seconds: float  # device time of one quantized linear beyond its bytes (its extra kernels)
    host_op_seconds: float  # host time of one op an eager runtime dispatches per forward (0: graph replay)
    quantized_linear_host_seconds: float  # extra host time of one quantized linear module (its Python)
    host_step_seconds: float  # host work per forward that does not overlap the device (scheduler, sampler)
    cache_per_query_head: bool  # the attention reads the KV cache once per query head, not per KV head
    cache_bytes_per_sm_cycle: float  # cache bytes the attention reads per multiprocessor cycle (0: at the
    # weights' bandwidth)
    prefill_chunk_tokens: int  # tokens per prefill forward (0: the whole prompt at once)
    prefill_dequantizes: bool  # quantized weights are expanded to FP16 for each prefill chunk


# llama.cpp (CUDA backend): fitted by benchmarks/llm_speed.py on the 68 single-GPU rows of
# benchmarks/data/llm_speed.csv (llama-bench, Llama 3 8B/70B, Q4_K_M/F16, 16 GPUs). Its output: prefill
# Spearman 0.970, median |error| 12.6% in-sample, 0.965 / 14.2% leave-one-GPU-out; decode 0.996 / 4.7%,
# 0.992 / 5.7%. Its mat-vec kernels reach less of an HBM card's peak (a single mat-vec stream keeps too few
# bytes in flight for it) and their dequantization is part of that share. Decode runs as a CUDA graph
# (llama.cpp since 2024-05), so there is no per-op host cost. Prefill: n_ubatch = 512 tokens per chunk.
LLAMA_CPP = GenerationEfficiency(
    tensor=0.41,
    fp16_accumulate=True,
    memory_gddr=0.88,
    memory_hbm=0.50,
    seconds_per_layer=72e-6,
    quantized_linear_seconds=0.0,
    host_op_seconds=0.0,
    quantized_linear_host_seconds=0.0,
    host_step_seconds=0.0,
    cache_per_query_head=False,
    cache_bytes_per_sm_cycle=0.0,
    prefill_chunk_tokens=512,
    prefill_dequantizes=True,
)

# The PyTorch runtimes stream weights with cuBLAS/Marlin/Triton mat-vec kernels at the device-copy share
# measured on the H200 (kernels.BANDWIDTH_CEILING = 0.87); their GEMMs accumulate in FP32 at the share a
# large GEMM holds under the board's power limit (kernels.tensor_ceiling, tensor = 1).
# Fitted by benchmarks/public_speed_decode.py on all its runs: GRAPH_LAYER_SECONDS, the device time of one
# decoder layer beyond its bytes (~15 small kernels and the gaps between them), and
# QUANTIZED_LINEAR_SECONDS, what a GPTQ/AWQ/int8 linear adds (its extra kernels).
GRAPH_LAYER_SECONDS = 54e-6
QUANTIZED_LINEAR_SECONDS = 4e-6

# gpt-fast (torch.compile mode="reduce-overhead": the decode step is a CUDA graph, no host work between
# steps). It is not a --runtime choice; benchmarks/public_speed_decode.py checks its published runs with it.
COMPILED_GRAPH = GenerationEfficiency(
    tensor=1.0,
    fp16_accumulate=False,
    memory_gddr=BANDWIDTH_CEILING,
    memory_hbm=BANDWIDTH_CEILING,
    seconds_per_layer=GRAPH_LAYER_SECONDS,
    quantized_linear_seconds=QUANTIZED_LINEAR_SECONDS,
    host_op_seconds=0.0,
    quantized_linear_host_seconds=0.0,
    host_step_seconds=0.0,
    cache_per_query_head=False,
    cache_bytes_per_sm_cycle=0.0,
    prefill_chunk_tokens=0,
    prefill_dequantizes=False,
)

# vLLM 0.6 with CUDA graphs (enforce_eager=False): the decode forward is one graph replay; the engine's
# scheduler, input preparation and sampler run on the host between forwards (VLLM_HOST_STEP_SECONDS,
# fitted). Prefill is one forward over the prompt (chunked prefill off below 32k tokens).
VLLM_HOST_STEP_SECONDS = 1.9e-3
VLLM = replace(COMPILED_GRAPH, host_step_seconds=VLLM_HOST_STEP_SECONDS)

# transformers' eager generate(): Python dispatches every op of every layer for every token, and the
# launches queue asynchronously, so a small model's step is the host's. TRANSFORMERS_OP_SECONDS is the host
# time of one op under torch.no_grad (nn.Module __call__, the op's Python, the dispatcher and the launch),
# counted over the estimate's rows as the training time model counts them (timing.FITTED's 48 us is the
# same cost with autograd recording). It is the host's: the A100 runs (transformers 4.46, PyTorch 2.3.1,
# 2024) take about this, the H20 runs (4.51, 2.6, 2025) about half, and the fit follows the A100's 283
# rows. QUANTIZED_MODULE_SECONDS: the extra Python of one GPTQ/AWQ QuantLinear forward (reshapes, the
# kernel's wrapper). Both fitted.
# The cache: repeat_kv copies every KV head to its query heads before eager/sdpa attention
# (transformers models/llama/modeling_llama.py, v4.46), and flash-attn 2.5/2.7 at one query token runs one
# thread block per query head over the whole cache, without splitting it (Flash-Decoding blog, T. Dao et al.,
# 2023-10-12: at batch 1 "the GPU is underutilized"), so the cache is read once per query head, at a rate set
# by the multiprocessors' cycles rather than the memory: the A100 (108 SMs x 1.41 GHz) and the H20 (78 x
# 2.2 GHz, twice the A100's bandwidth) runs read it at about the same 1.8 bytes per SM cycle
# (TRANSFORMERS_CACHE_BYTES_PER_SM_CYCLE, fitted on their long-prompt runs).
TRANSFORMERS_OP_SECONDS = 22e-6
QUANTIZED_MODULE_SECONDS = 36e-6
TRANSFORMERS_CACHE_BYTES_PER_SM_CYCLE = 1.8
TRANSFORMERS = replace(
    COMPILED_GRAPH,
    host_op_seconds=TRANSFORMERS_OP_SECONDS,
    quantized_linear_host_seconds=QUANTIZED_MODULE_SECONDS,
    cache_per_query_head=True,
    cache_bytes_per_sm_cycle=TRANSFORMERS_CACHE_BYTES_PER_SM_CYCLE,
)

RUNTIMES: dict[Runtime, GenerationEfficiency] = {
    Runtime.LLAMA_CPP: LLAMA_CPP,
    Runtime.VLLM: VLLM,
    Runtime.TRANSFORMERS: TRANSFORMERS,
}
