"""How the three runtimes people generate with allocate GPU memory, each as its own code does.

- transformers (`model.generate`): the DynamicCache grows by one token per step, layer by layer
  (cache_utils.py DynamicLayer.update: `self.keys = torch.cat([self.keys, key_states], dim=-2)`, then the
  same for the values): during each cat the old and the new tensor of that layer are both allocated. The
  step keeps an fp32 copy of the last position's logits and the processed scores and probabilities
  (generation/utils.py _sample: `outputs.logits[:, -1].to(copy=True, dtype=torch.float32)`). The prefill
  holds the cache of the prompt only.
- llama.cpp: the KV cache of the whole context (`-c`, n_ctx) is allocated in f16 when the context is created
  (llama-context.cpp: `memory->init_full()` "simulate full KV cache"), and so are the compute buffers,
  sized by reserving the worst graph: n_ubatch (default 512) tokens against the full cache
  (`graph_reserve(n_tokens, n_seqs, n_tokens, ...)`, n_tokens = min(n_ctx, n_ubatch)). With flash attention
  (`-fa auto`, on where the backend supports it) the largest buffer is the logits of n_ubatch tokens in
  f32; without it the n_ctx x n_ubatch x n_head f32 attention scores (softmax reuses them in place:
  ikawrakow/ik_llama.cpp PR 237, 2025-02-28). The token embedding stays in system RAM; `-ngl N` puts the last
  N repeating layers (and their KV cache) on the GPU, the output layer only when N exceeds the layer count;
  at -ngl 0 a CUDA build still reserves the compute buffer there (llama_cpp_memory). Cache types: f16, bf16,
  q8_0 (--kv-cache int8; no fp8 in llama.cpp).
- vLLM: the engine takes gpu_memory_utilization (0.9) of the card's total memory for itself: weights, the
  activations of a profiling forward over max_num_batched_tokens, the CUDA-graph pool, and paged KV blocks
  of 16 tokens in everything that is left (vllm/v1/worker/gpu_worker.py determine_available_memory;
  vllm/config/cache.py block_size 16). A workload fits when its sequences' blocks fit in that remainder.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from advisor.core.llm.decoder import DecoderSpec
from advisor.core.llm.kv_cache import cached_tokens, kv_bytes_per_layer_token
from advisor.core.llm.quant import EXPERTS_ONLY, MXFP4_BLOCK, group_bytes
from advisor.core.llm.tensors import tensor_groups
from advisor.core.llm.vllm_graphs import VLLMEngineShape
from advisor.core.overheads import DEFAULT_OVERHEAD
from advisor.core.workload import Runtime, VLLMRelease

F32 = 4


__all__ = [
    "Runtime",
    "RuntimeMemory",
    "VLLMPool",
    "llama_cpp_context",
    "llama_cpp_memory",
    "vllm_pool",
    "vllm_profile_spec",
    "vllm_weight_bytes",
]
# llama.cpp common/common.h defaults (n_ubatch 512) and the context padding of its KV cache
LLAMA_CPP_UBATCH = 512
LLAMA_CPP_CTX_PAD = 256
# vLLM defaults: EngineArgs gpu_memory_utilization 0.9, block_size 16; the LLM class's max_num_batched_tokens
# 8192 and max_num_seqs 256 (vllm/engine/arg_utils.py EngineArgs.get_batch_defaults, below 70 GiB of card
# memory and on the A100; V1 takes 16384 tokens and 1024 sequences on larger cards: --max-num-seqs 1024);
# CUDA graphs are captured up to 512 tokens (vllm/config/compilation.py cudagraph_capture_sizes)
VLLM_GPU_MEMORY_UTILIZATION = 0.9
VLLM_BLOCK_TOKENS = 16
VLLM_PROFILE_TOKENS = 8192
VLLM_MAX_SEQS = 256
VLLM_GRAPH_TOKENS = 512
# The profile's sampler run (gpu_model_runner._dummy_sampler_run; V0's profile_run the same) samples one token
# for each of max_num_seqs sequences with top_p 0.9 and top_k vocab - 1. Bytes held per (sequence, vocabulary
# entry) at its peak, in every release: the model's logits (its dtype) and their fp32 copy (sampler.py
# `logits.to(torch.float32)`, none when they are fp32 already). Up to 0.16 the PyTorch-native top-k/top-p path
# then sorts the whole row (v1/sample/ops/topk_topp_sampler.py apply_top_k_top_p: logits.sort): the sorted
# values 4 and int64 indices 8, the sort's int64 index input 8 and its scratch, one more copy of keys and
# values 12 (PyTorch's segmented sort of many rows: cub SortPairs). From 0.17 a Triton kernel masks the fp32
# logits in place from 8 rows up (topk_topp_sampler.py `if HAS_TRITON and logits.shape[0] >= 8:
# apply_top_k_top_p_triton`, vllm 0.17.0 and 0.19.0), and the peak is the probabilities 4 (softmax in fp32) and
# random_sample's exponential draws 4 (`q = torch.empty_like(probs)`). Not counted: the kernel's cached buffer
# of min(SMs, rows) fp32 vocabulary rows (132 on an H100: 68 MB for a 128k vocabulary).
SORT_BYTES_PER_ENTRY = 4 + 8 + 8 + 12
TRITON_BYTES_PER_ENTRY = 4 + 4
SAMPLER_BYTES_PER_ENTRY = 2 + F32 + SORT_BYTES_PER_ENTRY  # = 38 with bf16 logits, up to 0.16


def sampler_bytes_per_entry(release: VLLMRelease, dtype_bytes: int) -> int:
    """Bytes per (sequence, vocabulary entry) at the sampler's peak in `release` with logits of dtype_bytes."""
    logits = dtype_bytes + (0 if dtype_bytes == F32 else F32)
    return logits + (SORT_BYTES_PER_ENTRY if release == VLLMRelease.V0_16 else TRITON_BYTES_PER_ENTRY)


@dataclass(frozen=True)
class RuntimeMemory:
    """What a runtime holds on the GPU for a generation workload, and in system RAM beside it."""

    weights_bytes: int  # weights on the GPU
    kv_cache_bytes: int  # KV cache on the GPU (llama.cpp, vLLM: allocated up front)
    workspace_bytes: int  # compute buffers / activation workspace / CUDA-graph pool on the GPU
    host_bytes: int  # system RAM the runtime needs for the weights and cache it keeps off the GPU
    host_read_bytes: int  # of those, what a decode step reads there (the CPU's layers, the output, their cache)


def llama_cpp_context(tokens: int, batch: int) -> int:
    """n_ctx for `batch` parallel sequences of `tokens` each (llama-server -np splits -c between its slots),
    padded as llama.cpp pads its cache."""
    return -(-batch * tokens // LLAMA_CPP_CTX_PAD) * LLAMA_CPP_CTX_PAD


def _kv_layer_bytes(spec: DecoderSpec, layer: int, n_ctx: int, kv_dtype: str) -> int:
    """One layer's cache in llama.cpp (f16 by default, bf16, or q8_0: Workload.kv_cache_dtype)."""
    return kv_bytes_per_layer_token(spec, kv_dtype) * cached_tokens(spec, layer, n_ctx)


def llama_cpp_memory(
    spec: DecoderSpec,
    fmt: str,
    n_ctx: int,
    gpu_layers: int | None,
    kv_dtype: str = "fp16",
    flash_attention: bool = True,
) -> RuntimeMemory:
    """GPU and host bytes of llama.cpp for a model in GGUF format `fmt` at context n_ctx with -ngl gpu_layers
    (None: every layer and the output, as -ngl 99 does). A CUDA build reserves its compute buffer on the
    card at -ngl 0 too: the context creates a backend for every GPU device whatever -ngl is, and with op
    offload on (the default; --no-op-offload turns it off) the scheduler runs a matmul whose weights sit in
    host memory on the GPU when it has 32 rows or more (ggml/src/ggml-backend.cpp
    ggml_backend_sched_backend_id_from_cur "1.off", ggml-cuda.cu ggml_backend_cuda_device_offload_op
    min_batch_size 32; ggml-org/llama.cpp 5bc7a74), as the n_ubatch-token graph the buffers are reserved with
    has. The copies of host-held weights those ops upload into that buffer (the inputs of each GPU split)
    are not counted. The KV cache of a layer left on the CPU stays in host memory (offload_kqv is per
    offloaded layer: llama-kv-cache.cpp takes the layer's device)."""
    on_gpu = spec.layers if gpu_layers is None else min(gpu_layers, spec.layers)
    output_on_gpu = gpu_layers is None or gpu_layers > spec.layers
    first_gpu_layer = spec.layers - on_gpu
    gpu = host = embed = 0.0
    for group in tensor_groups(spec):
        size = group_bytes(fmt, group, spec)
        if group.role == "embed":  # tok_embd is always on the CPU; a tied output gets a copy on the GPU
            host += size
            embed += size  # a decode step looks up one row of it
            gpu += size if spec.tied_embeddings and output_on_gpu else 0
        elif group.layer >= 0:
            gpu, host = (gpu + size, host) if group.layer >= first_gpu_layer else (gpu, host + size)
        else:  # output, output_norm, learned positions
            gpu, host = (gpu + size, host) if output_on_gpu else (gpu, host + size)
    gpu, host, embed = _as_stored(spec, fmt, gpu, host, embed)
    kv_gpu = sum(_kv_layer_bytes(spec, i, n_ctx, kv_dtype) for i in range(first_gpu_layer, spec.layers))
    kv_host = sum(_kv_layer_bytes(spec, i, n_ctx, kv_dtype) for i in range(first_gpu_layer))
    compute = llama_cpp_compute_buffer(spec, n_ctx, output_on_gpu, flash_attention)
    ubatch = min(n_ctx, LLAMA_CPP_UBATCH)
    # CUDA_Host compute buffer: the f32 input embeddings and the f32 KQ mask of n_ubatch x n_ctx; the CPU
    # runs the whole graph's stages for layers left on it
    inputs = ubatch * spec.hidden * F32 + ubatch * n_ctx * F32
    host_compute = inputs if on_gpu == spec.layers else max(inputs, compute)
    # the host output buffer holds the f32 logits of one position per sequence (n_seq_max, here 1)
    return RuntimeMemory(
        round(gpu),
        round(kv_gpu),
        compute,
        round(host + kv_host) + host_compute + spec.vocab * F32,
        round(host - embed + kv_host),
    )


def _as_stored(spec: DecoderSpec, fmt: str, gpu: float, host: float, embed: float) -> tuple[float, float, float]:
    """The described bytes scaled to a GGUF file's own (its tensor table was read): the embedding table to the
    bytes a decode step does not read, every other tensor by one factor to the rest."""
    stored = spec.stored
    if stored is None or not stored.exact_for(fmt) or stored.weight_bytes is None or stored.active_weight_bytes is None:
        return gpu, host, embed
    exact_embed = float(stored.weight_bytes - stored.active_weight_bytes)
    tied = embed if spec.tied_embeddings and gpu >= embed else 0.0
    rest = gpu - tied + host - embed
    factor = stored.active_weight_bytes / rest if rest > 0 else 1.0
    gpu = (gpu - tied) * factor + (exact_embed if tied else 0.0)
    return gpu, (host - embed) * factor + exact_embed, exact_embed


def llama_cpp_compute_buffer(spec: DecoderSpec, n_ctx: int, output: bool, flash_attention: bool) -> int:
    """The worst graph's buffer (ggml-alloc reuses a tensor's memory once its readers ran): the largest of
    the logits of n_ubatch tokens (when the output layer runs there), the MLP's gate, up and product, and
    without flash attention the f32 scores of n_ubatch queries against n_ctx keys per head; plus the hidden
    state those stages read."""
    ubatch = min(n_ctx, LLAMA_CPP_UBATCH)
    width = spec.moe.expert_intermediate * spec.moe.experts_per_token if spec.moe else spec.intermediate
    stages = [
        3 * ubatch * width * F32,
        ubatch * spec.vocab * F32 if output else 0,
        0 if flash_attention else ubatch * n_ctx * spec.heads * F32,
    ]
    return max(stages) + ubatch * spec.hidden * F32


@dataclass(frozen=True)
class VLLMPool:
    """vLLM on one card: the KV blocks left once weights, the profiled activations and the CUDA graphs are
    placed inside gpu_memory_utilization of the card, and how many sequences of a length they hold."""

    budget_bytes: int
    kv_space_bytes: int
    blocks: int
    block_bytes: int

    def concurrent_sequences(self, tokens: int) -> int:
        return self.blocks // -(-tokens // VLLM_BLOCK_TOKENS)


def vllm_block_bytes(spec: DecoderSpec, kv_dtype: str) -> int:
    """One paged block: 16 tokens of every layer (sliding-window layers keep full blocks too in vLLM's
    default single KV-cache group)."""
    return VLLM_BLOCK_TOKENS * kv_bytes_per_layer_token(spec, kv_dtype) * spec.layers


def vllm_weight_bytes(spec: DecoderSpec, fmt: str, file_bytes: int) -> int:
    """What vLLM holds of the weights: the checkpoint's bytes, and with MXFP4 experts what its Triton MoE
    backend adds (Mxfp4Backend.TRITON, Hopper's default unless VLLM_USE_FLASHINFER_MOE_MXFP4_BF16 is set;
    vllm/model_executor/layers/quantization/mxfp4.py process_weights_after_loading): _swizzle_mxfp4 makes
    new swizzled tensors of the values and scales and the old values are deleted, but the checkpoint's scales
    stay registered (layer.w13_weight_scale, w2_weight_scale), so every E8M0 scale is held twice; and the
    experts' bf16 biases become fp32 (w13_bias.to(torch.float32)): 2 more bytes each. Blackwell's FlashInfer
    backends pad the experts to multiples of 256 instead; not modelled."""
    if fmt not in EXPERTS_ONLY or spec.moe is None:
        return file_bytes
    experts = [g for g in tensor_groups(spec) if g.role.startswith("expert_")]
    scales = sum(g.count * g.rows * -(-g.cols // MXFP4_BLOCK) for g in experts)
    m = spec.moe
    moe_layers = sum(spec.is_moe_layer(i) for i in range(spec.layers))
    biases = moe_layers * m.experts * (2 * m.expert_intermediate + spec.hidden) if m.expert_bias else 0
    return file_bytes + scales + 2 * biases


def vllm_profile_spec(spec: DecoderSpec) -> DecoderSpec:
    """The decoder as vLLM's profiling forward runs it: its attention backends (FlashAttention, xFormers,
    FlashInfer, Triton) are fused kernels that take the causal and sliding-window extents as arguments
    (FlashAttention's window_size, xFormers' BlockDiagonalCausalLocalAttentionMask, gpt-oss's sinks in
    FlashAttention 3 / Triton), so no (seq, seq) mask or score matrix exists: none of transformers' eager
    attention (gpt-oss, Gemma 2) or of the boolean mask its SDPA path builds for a window shorter than the
    sequence (masking_utils.sdpa_mask). The window still bounds nothing in the profile: every block is full.
    In fp32 they stay fused (FlexAttention or Triton attention where FlashAttention needs half: vllm 0.19.0
    v1/sample/ops/topk_topp_sampler.py names "flex_attn/triton_attn fp32 inference"), where PyTorch's SDPA
    falls to its math path for grouped KV heads (ops/attention.py for_dtype)."""
    return replace(spec, eager_attention=False, sliding_window=0, sliding_layers=(), own_attention_kernel=True)


def vllm_sampler_bytes(
    spec: DecoderSpec, max_num_seqs: int, release: VLLMRelease = VLLMRelease.V0_19, dtype_bytes: int = 2
) -> int:
    """The profile's sampler run at its peak: max_num_seqs rows of the vocabulary (sampler_bytes_per_entry)."""
    return max_num_seqs * spec.vocab * sampler_bytes_per_entry(release, dtype_bytes)


def vllm_workspace_bytes(
    spec: DecoderSpec,
    profile_activation_bytes: int,
    dtype_bytes: int,
    max_num_seqs: int = VLLM_MAX_SEQS,
    profile_tokens: int = VLLM_PROFILE_TOKENS,
    enforce_eager: bool = False,
    release: VLLMRelease = VLLMRelease.V0_19,
    engine: VLLMEngineShape | None = None,
) -> int:
    """The profile's peak, the larger of its forward's activations (max_num_batched_tokens) and the sampler
    run that follows it while the forward's hidden states are still held (profile_run keeps them), plus the
    CUDA graphs (none under enforce_eager): up to 0.16 the pool of the largest captured batch's decode
    activations; from 0.17 the engine's graphs and non-torch memory on one card (core/llm/vllm_graphs.py)."""
    sampling = _profile_sampling_bytes(spec, dtype_bytes, max_num_seqs, profile_tokens, release)
    profile = max(profile_activation_bytes, sampling)
    if engine is not None:
        return profile + engine.held_bytes()
    return profile + (0 if enforce_eager else vllm_graph_bytes(spec, dtype_bytes))


def _profile_sampling_bytes(
    spec: DecoderSpec, dtype_bytes: int, max_num_seqs: int, profile_tokens: int, release: VLLMRelease
) -> int:
    """The profile's sampler run with the forward's hidden states still held."""
    hidden_states = profile_tokens * spec.hidden * dtype_bytes
    return hidden_states + vllm_sampler_bytes(spec, max_num_seqs, release, dtype_bytes)


def vllm_warmup_bytes(
    spec: DecoderSpec, dtype_bytes: int, max_num_seqs: int, profile_tokens: int, release: VLLMRelease
) -> int:
    """What 0.17-0.19's sampler warm-up needs beyond the profile's freed activations, on the last pipeline
    stage. It runs after the KV pool and the CUDA graphs (gpu_worker.py compile_or_warm_up_model, after
    capture_model: an eager _dummy_run of min(max_num_seqs, max_num_batched_tokens) tokens, then
    _dummy_sampler_run on them), holding their hidden states, the gathered last rows and their torch.rand_like
    copy beside the sampler's peak. The KV pool leaves the profile's peak activation free inside the share
    (determine_available_memory subtracts it), and that peak sampled the same rows (vllm_workspace_bytes), so
    only the excess needs room after the share. 0 up to 0.16, whose warm-up lies inside its share."""
    if release == VLLMRelease.V0_16:
        return 0
    rows = min(max_num_seqs, profile_tokens)
    warmup = rows * (3 * spec.hidden * dtype_bytes + spec.vocab * sampler_bytes_per_entry(release, dtype_bytes))
    reserve = _profile_sampling_bytes(spec, dtype_bytes, max_num_seqs, profile_tokens, release)
    return max(warmup - reserve, 0)


def vllm_graph_bytes(spec: DecoderSpec, dtype_bytes: int) -> int:
    """The CUDA-graph pool: the decode activations (a few hidden-sized tensors, the MLP's intermediates, the
    logits) of the largest captured batch, VLLM_GRAPH_TOKENS sequences."""
    width = spec.moe.expert_intermediate * spec.moe.experts_per_token if spec.moe else spec.intermediate
    return VLLM_GRAPH_TOKENS * ((4 * spec.hidden + 3 * width) * dtype_bytes + spec.vocab * dtype_bytes)


def vllm_pool(card_bytes: int, weights_bytes: int, workspace_bytes: int, block_bytes: int) -> VLLMPool:
    budget = int(card_bytes * VLLM_GPU_MEMORY_UTILIZATION)
    space = max(budget - weights_bytes - workspace_bytes, 0)
    return VLLMPool(budget, space, space // block_bytes, block_bytes)


# the CUDA context and library workspaces every fit takes off a card's usable memory (recommend/devices.py
# PROCESS_OVERHEAD_BYTES, core/overheads.py): vLLM's share is of the whole card, so they lie outside it
VLLM_OUTSIDE_SHARE_BYTES = DEFAULT_OVERHEAD.context_bytes + DEFAULT_OVERHEAD.workspace_bytes


def vllm_required_bytes(held_bytes: int, utilization: float, graph_bytes: int = 0, warmup_bytes: int = 0) -> int:
    """The usable card memory in which vLLM's share (utilization x the card) holds `held_bytes`: the card
    needs held / utilization, less what lies outside the share; never below what is held. Per card: each
    worker of a split engine takes that share of its own card (gpu_worker.py requested_memory). From 0.17 the
    CUDA graphs (graph_bytes, held) and the sampler warm-up (warmup_bytes) come after the KV pool has filled the
    share (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS off by default, vllm/envs.py of 0.19.0), so the rest of the
    card, (1 - utilization) of it, must hold them beside the CUDA context."""
    in_share = math.ceil((held_bytes - graph_bytes) / utilization) - VLLM_OUTSIDE_SHARE_BYTES
    after = graph_bytes + warmup_bytes
    if after == 0:
        return max(in_share, held_bytes)
    rest = VLLM_OUTSIDE_SHARE_BYTES + after
    card = math.ceil(rest / (1 - utilization)) if utilization < 1 else held_bytes + rest
    return max(in_share, card - VLLM_OUTSIDE_SHARE_BYTES, held_bytes)


def vllm_held_limit(usable_bytes: int, utilization: float, graph_bytes: int = 0, warmup_bytes: int = 0) -> int:
    """The most vLLM can hold on a card with `usable_bytes` (vllm_required_bytes turned round); 0 where what
    comes after the share does not fit beside it."""
    card = usable_bytes + VLLM_OUTSIDE_SHARE_BYTES
    if graph_bytes + warmup_bytes and VLLM_OUTSIDE_SHARE_BYTES + graph_bytes + warmup_bytes > card * (1 - utilization):
        return 0
    return min(usable_bytes, int(card * utilization) + graph_bytes)


def vllm_kv_bytes(spec: DecoderSpec, kv_dtype: str, tokens: int, batch: int) -> int:
    """The blocks `batch` sequences of `tokens` tokens occupy (whole blocks of 16)."""
    return batch * math.ceil(tokens / VLLM_BLOCK_TOKENS) * vllm_block_bytes(spec, kv_dtype)
