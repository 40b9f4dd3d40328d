"""What generation with a KV cache needs from a decoder, independent of the card: the bytes a decode step
reads, the bytes each token adds to the cache, and the FLOPs of prefill and decode.

The recommend layer turns this into prefill and decode tokens per second on each card (a roofline: prefill
is bound by FLOPs, decode by reading the active weights and the KV cache once per generated token).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class GenerationProfile:
    weight_bytes: int  # all stored weights incl. quantization scales/zeros (every MoE expert)
    active_weight_bytes: int  # weight bytes read per decode step (MoE: routed + shared experts only)
    # KV-cache bytes one token adds for one sequence, all layers; with sliding-window layers, the cache of the
    # whole generation (prompt_len + new_tokens) divided by its tokens, so tokens x this = the cache at the end
    kv_bytes_per_token: int
    prefill_flops: float  # forward FLOPs of the prompts, whole batch (2 x MACs + attention)
    decode_flops_per_token: float  # FLOPs per generated token per sequence at mean context length
    layers: int
    hidden_size: int  # activations exchanged by tensor-parallel all-reduces
    kv_heads: int  # tensor parallel splits KV heads at most this many ways
    attention_heads: int
    runtime: str  # transformers, llama.cpp or vllm (core.workload.Runtime)
    host_bytes: int  # system RAM the runtime keeps beside the card (llama.cpp: what -ngl leaves off the GPU)
    host_read_bytes: int  # of those, read by the CPU in each decode step (llama.cpp partial offload)


__all__ = ["GenerationProfile"]
