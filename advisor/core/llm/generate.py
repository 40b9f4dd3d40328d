"""The analytic estimate of generation (--mode generate): prefill the prompts, then decode new tokens one at a
time with a KV cache. Memory = weights in their storage format + the KV cache of every token of every
sequence + the larger of the prefill's activations and one decode step's workspace."""

from __future__ import annotations

import math
from dataclasses import replace

from advisor.core.budget import REPLAY_MARGIN_BYTES, replayed_required_bytes
from advisor.core.errors import SpecError
from advisor.core.estimate import Estimate, MemoryEstimate, layer_rows, memory_estimate
from advisor.core.generation import GenerationProfile
from advisor.core.graph import Graph
from advisor.core.llm.decoder import DecoderSpec
from advisor.core.llm.graph import decoder_graph
from advisor.core.llm.kv_cache import cached_tokens, kv_bytes_per_layer_token, kv_cache_bytes
from advisor.core.llm.layout import weight_layout
from advisor.core.llm.quant import active_weight_bytes, weight_bytes
from advisor.core.llm.runtime import (
    llama_cpp_context,
    llama_cpp_memory,
    vllm_kv_bytes,
    vllm_profile_spec,
    vllm_required_bytes,
    vllm_warmup_bytes,
    vllm_weight_bytes,
    vllm_workspace_bytes,
)
from advisor.core.llm.tensors import tensor_groups
from advisor.core.llm.vllm_graphs import VLLMEngineShape, vllm_engine_shape
from advisor.core.replay import replay_step
from advisor.core.step_records import MemoryProfile
from advisor.core.tracker import CategoryBytes, TimelinePoint
from advisor.core.workload import (
    AttentionImpl,
    Mode,
    Runtime,
    VLLMRelease,
    WeightFormat,
    Workload,
    default_notes,
)

FP32_BYTES = 4
# generate() keeps the step's fp32 logits, their processed copy and the sampling probabilities
# (transformers generation/utils.py _sample: next_token_logits.to(float32), logits_processor, softmax).
LOGIT_COPIES = 3


def not_a_decoder(name: str) -> SpecError:
    return SpecError(
        f"mode generate: {name} is not a decoder language model the analytic path "
        "describes (zoo LLMs, hf:CONFIG.json, .safetensors with config.json)"
    )


def decoder_of(graph: Graph) -> DecoderSpec:
    if graph.decoder is None:
        raise not_a_decoder(graph.name)
    return graph.decoder


def decode_flops_per_token(spec: DecoderSpec, context: int) -> float:
    """2 x the multiply-adds of the matrices one token uses (chosen experts only, the LM head, not the
    embedding lookup) + attention over `context` keys per layer (QK^T and AV)."""
    macs = sum(
        g.numel * g.active // g.count
        for g in tensor_groups(spec)
        if g.is_matrix and g.role not in ("embed", "positions")
    )
    if spec.tied_embeddings:
        macs += spec.vocab * spec.hidden  # the LM head multiplies by the shared embedding matrix
    qk = spec.mla.qk_head_dim if spec.mla else spec.head_dim
    v = spec.mla.v_head_dim if spec.mla else spec.head_dim
    attention = sum(spec.heads * cached_tokens(spec, i, context) * (qk + v) for i in range(spec.layers))
    return 2.0 * (macs + attention)


def _decode_workspace(spec: DecoderSpec, w: Workload, dtype_bytes: int) -> int:
    """One decode step: a few hidden-sized tensors and the widest MLP intermediates per sequence, plus the
    fp32 logits generate() keeps."""
    width = spec.moe.expert_intermediate * spec.moe.experts_per_token if spec.moe else spec.intermediate
    return w.batch * ((4 * spec.hidden + 3 * width) * dtype_bytes + LOGIT_COPIES * spec.vocab * FP32_BYTES)


def generation_profile(spec: DecoderSpec, w: Workload, prefill_flops: float) -> GenerationProfile:
    tokens = w.prompt_len + w.new_tokens
    kv = kv_cache_bytes(spec, w.kv_cache_dtype, tokens, 1)
    graphs, warmup = vllm_after_share(spec, w)
    return GenerationProfile(
        weight_bytes(spec, w.weight_format),
        active_weight_bytes(spec, w.weight_format),
        -(-kv // tokens),
        prefill_flops,
        decode_flops_per_token(spec, w.prompt_len + w.new_tokens // 2),
        spec.layers,
        spec.hidden,
        spec.kv_heads,
        spec.heads,
        w.runtime_used.value,
        *host_bytes(spec, w),
        layout=weight_layout(spec, w.weight_format, w.runtime_used),
        after_share_graph_bytes=graphs,
        after_share_warmup_bytes=warmup,
        vllm_engine=vllm_engine(spec, w),
    )


def vllm_engine(spec: DecoderSpec, w: Workload) -> VLLMEngineShape | None:
    """The graphs and non-torch memory of vLLM 0.17-0.19 (core/llm/vllm_graphs.py); None for other runtimes
    and releases (up to 0.16 the graph pool lies in the workspace: runtime.vllm_graph_bytes)."""
    if w.runtime_used != Runtime.VLLM or w.vllm_version == VLLMRelease.V0_16:
        return None
    mxfp4 = w.weight_format == WeightFormat.MXFP4  # gpt-oss's experts: the 'TRITON' Mxfp4 backend
    return vllm_engine_shape(spec, w.activation_bytes, w.max_num_seqs, w.enforce_eager, mxfp4)


def vllm_after_share(spec: DecoderSpec, w: Workload) -> tuple[int, int]:
    """vLLM's CUDA graphs and sampler warm-up where its release allocates them after the share (0.17-0.19)."""
    engine = vllm_engine(spec, w)
    if engine is None:
        return 0, 0
    graphs = engine.graph_bytes()
    tokens = _vllm_profile_tokens(spec, w)
    return graphs, vllm_warmup_bytes(spec, w.activation_bytes, w.max_num_seqs, tokens, w.vllm_version)


def _vllm_profile_tokens(spec: DecoderSpec, w: Workload) -> int:
    """The profiling forward's tokens: max_num_batched_tokens, no more than a model with learned positions has."""
    return min(w.max_num_batched_tokens, spec.max_positions or w.max_num_batched_tokens)


def _cat_transient(spec: DecoderSpec, w: Workload) -> int:
    """DynamicLayer.update's torch.cat: the new keys (then values) of one layer at the full length, while the
    old ones still exist (transformers cache_utils.py)."""
    return w.batch * kv_bytes_per_layer_token(spec, w.kv_cache_dtype) // 2 * (w.prompt_len + w.new_tokens)


def _memory(profile: MemoryProfile, spec: DecoderSpec, w: Workload, weights: int) -> MemoryEstimate:
    if w.runtime_used == Runtime.LLAMA_CPP:
        return _llama_cpp_memory(spec, w)
    kv = kv_cache_bytes(spec, w.kv_cache_dtype, w.prompt_len + w.new_tokens, w.batch)
    if w.runtime_used == Runtime.VLLM:
        return _vllm_memory(spec, w, weights)
    # transformers: the prefill fills the cache with the prompt; decode grows it to the end
    prompt_kv = kv_cache_bytes(spec, w.kv_cache_dtype, w.prompt_len, w.batch)
    dtype_bytes = w.activation_bytes
    prefill = profile.peak_bytes - profile.at_peak.weights + prompt_kv
    decode = _decode_workspace(spec, w, dtype_bytes) + _cat_transient(spec, w) + kv
    if prefill >= decode:
        at = profile.at_peak
        cats = CategoryBytes(weights, 0, 0, at.activations, at.temporaries, at.inputs, prompt_kv)
        phase, layer = "prefill", profile.peak_layer
    else:
        cats = CategoryBytes(weights, 0, 0, 0, decode - kv, 0, kv)
        phase, layer = "decode", "lm_head"
    peak = cats.total
    # the prefill pass replayed through the allocator under a limit: what its churn leaves unusable
    fragmentation = max(replayed_required_bytes(profile.events, w.expandable_segments) - profile.peak_bytes, 0)
    return memory_estimate(
        peak_bytes=peak,
        at_peak=cats,
        peak_phase=phase,
        peak_layer=layer,
        batch=w.batch,
        replayed_reserved_bytes=peak,
        replayed_required_bytes=peak + fragmentation,
    )


def _fixed(w: Workload, cats: CategoryBytes, phase: str) -> MemoryEstimate:
    """An estimate of a runtime that allocates its buffers once, with cudaMalloc and no caching allocator (ggml's
    backend buffers): no churn and nothing the replay could miss, so reserved = required = peak."""
    memory = memory_estimate(
        peak_bytes=cats.total,
        at_peak=cats,
        peak_phase=phase,
        peak_layer="",
        batch=w.batch,
        replayed_reserved_bytes=cats.total,
        replayed_required_bytes=cats.total,
    )
    return replace(memory, required_bytes=cats.total)


def _llama_cpp_memory(spec: DecoderSpec, w: Workload) -> MemoryEstimate:
    n_ctx = llama_cpp_context(w.prompt_len + w.new_tokens, w.batch)
    m = llama_cpp_memory(
        spec, w.weight_format, n_ctx, w.gpu_layers, w.kv_cache_dtype, w.attention != AttentionImpl.EAGER
    )
    return _fixed(w, CategoryBytes(m.weights_bytes, 0, 0, 0, m.workspace_bytes, 0, m.kv_cache_bytes), "context created")


def _vllm_memory(spec: DecoderSpec, w: Workload, weights: int) -> MemoryEstimate:
    """What vLLM needs inside its gpu_memory_utilization share: weights, the profiled activations, the CUDA
    graphs and the blocks of the workload's sequences. The share is of the card's whole memory and the CUDA
    context lies outside it, in the rest (vllm/v1/worker/gpu_worker.py: requested_memory = total_memory x
    gpu_memory_utilization, checked against the memory free once the context exists), so the card memory
    needed is held / 0.9; required_bytes is that less the context and workspaces every fit takes off a card's
    usable memory (recommend/devices.py PROCESS_OVERHEAD_BYTES, core/overheads.py), never below what is held."""
    tokens = _vllm_profile_tokens(spec, w)
    profiled = replay_step(
        decoder_graph(vllm_profile_spec(spec), tokens, last_token_logits=True),
        Workload(Mode.INFER, 1, w.precision, weights=w.weights),
    )
    dtype_bytes = w.activation_bytes
    activations = profiled.peak_bytes - profiled.at_peak.weights
    workspace = vllm_workspace_bytes(
        spec, activations, dtype_bytes, w.max_num_seqs, tokens, w.enforce_eager, w.vllm_version, vllm_engine(spec, w)
    )
    kv = vllm_kv_bytes(spec, w.kv_cache_dtype, w.prompt_len + w.new_tokens, w.batch)
    cats = CategoryBytes(vllm_weight_bytes(spec, w.weight_format, weights), 0, 0, 0, workspace, 0, kv)
    share = math.ceil(cats.total / w.gpu_memory_utilization)
    required = vllm_required_bytes(cats.total, w.gpu_memory_utilization, *vllm_after_share(spec, w))
    memory = memory_estimate(
        peak_bytes=cats.total,
        at_peak=cats,
        peak_phase="engine started",
        peak_layer="",
        batch=w.batch,
        replayed_reserved_bytes=share,
        replayed_required_bytes=required,
    )
    return replace(memory, required_bytes=required)  # vLLM's own pool: no caching-allocator margin applies


def host_bytes(spec: DecoderSpec, w: Workload) -> tuple[int, int]:
    """System RAM the runtime keeps beside the card (llama.cpp's token embedding and the layers, and their
    cache, -ngl leaves off the GPU; 0 for the CUDA runtimes, whose host copies are freed after loading), and
    what the CPU reads of it per decode step."""
    if w.runtime_used != Runtime.LLAMA_CPP:
        return 0, 0
    n_ctx = llama_cpp_context(w.prompt_len + w.new_tokens, w.batch)
    m = llama_cpp_memory(
        spec, w.weight_format, n_ctx, w.gpu_layers, w.kv_cache_dtype, w.attention != AttentionImpl.EAGER
    )
    return m.host_bytes, m.host_read_bytes


def estimate_generation(graph: Graph, w: Workload) -> Estimate:
    spec = decoder_of(graph)
    if spec.max_positions and w.prompt_len + w.new_tokens > spec.max_positions:
        raise SpecError(
            f"new_tokens: {spec.name} has {spec.max_positions} learned positions; prompt_len "
            f"{w.prompt_len} + new_tokens {w.new_tokens} exceeds them"
        )
    prefill_graph = decoder_graph(spec, w.prompt_len, last_token_logits=True)
    prefill = replace(w, mode=Mode.INFER, runtime=None, gpu_layers=None)  # the prefill: a forward without autograd
    profile = replay_step(prefill_graph, prefill)
    rows = layer_rows(prefill_graph, prefill, profile.kept_bytes, w.activation_bytes)
    forward_flops = sum(r.forward_flops for r in rows)
    gen = generation_profile(spec, w, float(forward_flops))
    weights = gen.weight_bytes
    memory = _memory(profile, spec, w, weights)
    shift = (
        weights - profile.at_peak.weights + kv_cache_bytes(spec, w.kv_cache_dtype, w.prompt_len + w.new_tokens, w.batch)
    )
    timeline = tuple(TimelinePoint("prefill", p.layer, p.total_bytes + shift) for p in profile.timeline)
    step_flops = forward_flops + int(gen.decode_flops_per_token * w.new_tokens * w.batch)
    return Estimate(
        model=graph.name,
        workload=w,
        method="analytic",
        param_count=prefill_graph.param_count,
        trainable_param_count=0,
        layers=tuple(rows),
        forward_macs=sum(r.forward_macs for r in rows),
        forward_flops=forward_flops,
        step_flops=step_flops,
        memory=memory,
        timeline=timeline,
        assumptions=_assumptions(spec, w),
        generation=gen,
    )


def _assumptions(spec: DecoderSpec, w: Workload) -> tuple[str, ...]:
    notes = [
        f"Generation: prefill of {w.prompt_len} prompt tokens, then {w.new_tokens} tokens decoded one at a time "
        f"for each of {w.batch} sequences; FLOPs = prefill + every decode step.",
        f"Weights stored as {w.weight_format} with their real bytes (quantization scales and zero points "
        "included; embeddings, norms and lm_head stay 16-bit where the format keeps them so).",
        *_runtime_notes(w),
        f"KV cache {w.kv_cache_dtype}; sliding-window layers hold at most their window"
        + ("; multi-head latent attention caches the latent and the rotary key." if spec.mla else "."),
        "Prefill activations come from replaying the forward pass without autograd; the LM head sees only the "
        "last position (generate() asks for logits_to_keep=1); bitsandbytes nf4 dequantizes each weight to "
        "16 bit for its matmul.",
        "required_bytes = the peak + what the caching allocator, limited to a budget, cannot reuse while the "
        f"prefill pass allocates and frees (replayed) + {REPLAY_MARGIN_BYTES // 2**20} MiB (one large-pool "
        "segment, the replay's granule)."
        if w.runtime_used == Runtime.TRANSFORMERS
        else "",
        "decode_flops_per_token is taken at the mean context length (prompt + half the new tokens).",
    ]
    if spec.moe:
        notes.append(
            f"Mixture of experts: all {spec.moe.experts} experts per layer in memory, "
            f"{spec.moe.experts_per_token} per token in compute and in the bytes a decode step reads."
        )
    return tuple(note for note in notes + default_notes(w) if note)


# llama.cpp's names for the cache types --kv-cache selects (Workload.kv_cache_dtype)
_LLAMA_CPP_CACHE = {"fp16": "f16", "bf16": "bf16", "q8_0": "q8_0 (34 bytes per 32 values)", "fp32": "f32"}
_NGL_0_NOTE = (
    "-ngl 0: none of the model's weights and none of its KV cache are on the card (both in system RAM); a "
    "CUDA build still reserves its compute buffer there (the memory above), because the scheduler runs the "
    "prompt's matmuls of 32 or more rows on the GPU, uploading the weights each one reads (those per-op "
    "copies are not counted). A CPU-only build, or --no-op-offload, uses no GPU memory."
)


def _graph_pool(w: Workload) -> str:
    if w.enforce_eager:
        return (
            "no CUDA-graph pool (--enforce-eager: no graphs are captured; decode time is still estimated as "
            "graph replay)"
        )
    if w.vllm_version == VLLMRelease.V0_16:
        return "the CUDA-graph pool"
    return (
        "the CUDA-graph pool (0.17-0.19 capture it, then warm the sampler up, after the KV pool fills the "
        "share: in the rest of the card)"
    )


def _sampler_note(w: Workload) -> str:
    """How the release's startup samples (core/llm/runtime.py sampler_bytes_per_entry)."""
    if w.vllm_version == VLLMRelease.V0_16:
        return "vLLM up to 0.16 (--vllm-version 0.16): each row sorted, 38 B per entry with bf16 logits"
    return (
        "vLLM 0.17-0.19 (--vllm-version 0.19, the default): top-k/top-p masked in place, 14 B per entry with "
        "bf16 logits: logits, their fp32 copy, probabilities, random draws"
    )


def _runtime_notes(w: Workload) -> list[str]:
    """Which runtime, why (given or following the weights), and how it allocates."""
    how = "--runtime" if w.runtime is not None else f"the default for {w.weight_format} weights"
    tokens = w.prompt_len + w.new_tokens
    if w.runtime_used == Runtime.LLAMA_CPP:
        n_ctx = llama_cpp_context(tokens, w.batch)
        layers = "all layers and the output" if w.gpu_layers is None else f"{w.gpu_layers} layers (-ngl)"
        return [
            f"Runtime llama.cpp ({how}): the {_LLAMA_CPP_CACHE[w.kv_cache_dtype]} KV cache of the whole "
            f"context (n_ctx {n_ctx} = {w.batch} x {tokens} tokens, padded to 256) and the compute buffers "
            "(worst graph of n_ubatch 512 tokens, flash attention) are allocated when the context is created; "
            f"{layers} on the GPU, the token embedding and the rest in system RAM (generation.host_bytes).",
            _NGL_0_NOTE if w.gpu_layers == 0 else "",
        ]
    if w.runtime_used == Runtime.VLLM:
        return [
            f"Runtime vLLM ({how}): the engine claims gpu_memory_utilization {w.gpu_memory_utilization} "
            "of the card; inside it the weights, the activations of a profiling forward over "
            f"{w.max_num_batched_tokens} tokens (--max-num-batched-tokens) or its sampler over "
            f"{w.max_num_seqs} vocabulary rows (--max-num-seqs; {_sampler_note(w)}), {_graph_pool(w)} and "
            "paged KV blocks of 16 tokens; peak_bytes "
            f"counts the blocks of {w.batch} sequences of {tokens} tokens, required_bytes the card memory "
            "whose share holds that, less the CUDA context that lies outside the share (vLLM fills the "
            "rest of its share with more blocks).",
            "MXFP4 experts in vLLM: its Triton MoE backend (Hopper's default) keeps the checkpoint's scales beside "
            "their swizzled copy and holds the experts' biases in fp32 (counted in the weights)."
            if w.weight_format == WeightFormat.MXFP4
            else "",
        ]
    return [
        f"Runtime transformers ({how}): generate() grows the DynamicCache by torch.cat each step (the old "
        "and new keys of a layer live during the cat), keeps fp32 logits, scores and probabilities of the "
        "last position; the prefill holds the prompt's cache."
    ]
