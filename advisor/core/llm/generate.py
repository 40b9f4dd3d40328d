"""The analytic estimate of generation (--mode generate): prefill the prompts, then decode new tokens one at a
time with a KV cache. Memory = weights in their storage format + the KV cache of every token of every
sequence + the larger of the prefill's activations and one decode step's workspace."""

from __future__ import annotations

from dataclasses import replace

from advisor.core.budget import REPLAY_UNCERTAINTY, replayed_required_bytes
from advisor.core.errors import SpecError
from advisor.core.estimate import Estimate, MemoryEstimate, layer_rows, memory_estimate
from advisor.core.generation import GenerationProfile
from advisor.core.graph import Graph
from advisor.core.llm.decoder import DecoderSpec
from advisor.core.llm.graph import decoder_graph
from advisor.core.llm.kv_cache import cached_tokens, kv_cache_bytes
from advisor.core.llm.quant import active_weight_bytes, weight_bytes
from advisor.core.llm.tensors import tensor_groups
from advisor.core.memory import MemoryProfile, replay_step
from advisor.core.tracker import CategoryBytes, TimelinePoint
from advisor.core.workload import Workload, default_notes

FP32_BYTES = 4
# generate() keeps the step's fp32 logits, their processed copy and the sampling probabilities
# (transformers generation/utils.py _sample: next_token_logits.to(float32), logits_processor, softmax).
LOGIT_COPIES = 3


def decoder_of(graph: Graph) -> DecoderSpec:
    if graph.decoder is None:
        raise SpecError(f"mode generate: {graph.name} is not a decoder language model the analytic path "
                        "describes (zoo LLMs, hf:CONFIG.json, .safetensors with config.json)")
    return graph.decoder


def decode_flops_per_token(spec: DecoderSpec, context: int) -> float:
    """2 x the multiply-adds of the matrices one token uses (chosen experts only, the LM head, not the
    embedding lookup) + attention over `context` keys per layer (QK^T and AV)."""
    macs = sum(g.numel * g.active // g.count for g in tensor_groups(spec)
               if g.is_matrix and g.role not in ("embed", "positions"))
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
    return GenerationProfile(
        weight_bytes(spec, w.weight_format), active_weight_bytes(spec, w.weight_format),
        -(-kv // tokens), prefill_flops, decode_flops_per_token(spec, w.prompt_len + w.new_tokens // 2),
        spec.layers, spec.hidden, spec.kv_heads, spec.heads)


def _memory(profile: MemoryProfile, spec: DecoderSpec, w: Workload, weights: int) -> MemoryEstimate:
    kv = kv_cache_bytes(spec, w.kv_cache_dtype, w.prompt_len + w.new_tokens, w.batch)
    dtype_bytes = 4 if w.precision == "fp32" else 2
    prefill = profile.peak_bytes - profile.at_peak.weights
    decode = _decode_workspace(spec, w, dtype_bytes)
    if prefill >= decode:
        at = profile.at_peak
        cats = CategoryBytes(weights, 0, 0, at.activations, at.temporaries, at.inputs, kv)
        phase, layer = "prefill", profile.peak_layer
    else:
        cats = CategoryBytes(weights, 0, 0, 0, decode, 0, kv)
        phase, layer = "decode", "lm_head"
    peak = cats.total
    # the prefill pass replayed through the allocator under a limit: what its churn leaves unusable
    fragmentation = max(replayed_required_bytes(profile.events) - profile.peak_bytes, 0)
    return memory_estimate(peak_bytes=peak, at_peak=cats, peak_phase=phase, peak_layer=layer, batch=w.batch,
                           replayed_reserved_bytes=peak, replayed_required_bytes=peak + fragmentation)


def estimate_generation(graph: Graph, w: Workload) -> Estimate:
    spec = decoder_of(graph)
    if spec.max_positions and w.prompt_len + w.new_tokens > spec.max_positions:
        raise SpecError(f"new_tokens: {spec.name} has {spec.max_positions} learned positions; prompt_len "
                        f"{w.prompt_len} + new_tokens {w.new_tokens} exceeds them")
    prefill_graph = decoder_graph(spec, w.prompt_len, last_token_logits=True)
    prefill = replace(w, mode="infer")  # the prefill pass: a forward without autograd
    profile = replay_step(prefill_graph, prefill)
    rows = layer_rows(prefill_graph, prefill, profile.kept_bytes,
                      2 if w.precision != "fp32" else 4)
    forward_flops = sum(r.forward_flops for r in rows)
    gen = generation_profile(spec, w, float(forward_flops))
    weights = gen.weight_bytes
    memory = _memory(profile, spec, w, weights)
    shift = weights - profile.at_peak.weights + kv_cache_bytes(spec, w.kv_cache_dtype, w.prompt_len + w.new_tokens,
                                                                w.batch)
    timeline = tuple(TimelinePoint("prefill", p.layer, p.total_bytes + shift) for p in profile.timeline)
    step_flops = forward_flops + int(gen.decode_flops_per_token * w.new_tokens * w.batch)
    return Estimate(model=graph.name, workload=w, method="analytic", param_count=prefill_graph.param_count,
                    trainable_param_count=0,
                    layers=tuple(rows), forward_macs=sum(r.forward_macs for r in rows), forward_flops=forward_flops,
                    step_flops=step_flops, memory=memory, timeline=timeline, assumptions=_assumptions(spec, w),
                    generation=gen)


def _assumptions(spec: DecoderSpec, w: Workload) -> tuple[str, ...]:
    notes = [
        f"Generation: prefill of {w.prompt_len} prompt tokens, then {w.new_tokens} tokens decoded one at a time "
        f"for each of {w.batch} sequences; FLOPs = prefill + every decode step.",
        f"Weights stored as {w.weight_format} with their real bytes (quantization scales and zero points "
        "included; embeddings, norms and lm_head stay 16-bit where the format keeps them so).",
        f"KV cache ({w.kv_cache_dtype}) for all {w.prompt_len + w.new_tokens} tokens of every sequence is "
        "counted from the start, as servers that preallocate it (vLLM) do; sliding-window layers hold at most "
        "their window" + ("; multi-head latent attention caches the latent and the rotary key." if spec.mla
                          else "."),
        "Prefill activations come from replaying the forward pass without autograd; the LM head sees only the "
        "last position (generate() asks for logits_to_keep=1); bitsandbytes nf4 dequantizes each weight to "
        "16 bit for its matmul.",
        "required_bytes = the peak + what the caching allocator, limited to a budget, cannot reuse while the "
        f"prefill pass allocates and frees (replayed) + {REPLAY_UNCERTAINTY:.0%} of the peak.",
        "decode_flops_per_token is taken at the mean context length (prompt + half the new tokens).",
    ]
    if spec.moe:
        notes.append(f"Mixture of experts: all {spec.moe.experts} experts per layer in memory, "
                     f"{spec.moe.experts_per_token} per token in compute and in the bytes a decode step reads.")
    return tuple(notes + default_notes(w))
