"""What generation with a KV cache needs from a decoder, independent of the card: the bytes a decode step
reads, the bytes each token adds to the cache, and the FLOPs of prefill and decode.

The recommend layer turns this into prefill and decode tokens per second on each card (a roofline: prefill
is bound by FLOPs, decode by reading the active weights and the KV cache once per generated token).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from advisor.core.llm.vllm_graphs import VLLMEngineShape


@dataclass(frozen=True)
class WeightLayout:
    """The stored weights as the plans that split one model over cards divide them (advisor.recommend.plans):
    a pipeline stage takes whole blocks, the first stage the embedding, the last the output; tensor parallel
    splits every matrix except those it replicates. Bytes as stored, summing to the profile's weight_bytes."""

    layer_bytes: tuple[int, ...]  # each block's weights
    first_bytes: int  # token embedding (and learned positions) on the GPU: the first stage's
    last_bytes: int  # final norm and LM head (a tied head: its own copy of the embedding): the last stage's
    replicated_bytes: int  # held whole on every tensor-parallel card: norms, biases, routers, MLA down-projections
    kv_proj_bytes: int  # k_proj and v_proj: split by KV head, at least one head on every card
    kv_heads_split: bool = True  # the KV cache divides by KV head (MLA's one latent per token does not)


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
    layout: WeightLayout | None = None  # how split plans divide the weights (None: evenly by layer)
    # vLLM 0.17-0.19: held CUDA-graph bytes and the sampler warm-up's peak, both allocated after the KV pool
    # has filled gpu_memory_utilization of the card (core/llm/runtime.py vllm_required_bytes); 0 otherwise
    after_share_graph_bytes: int = 0
    after_share_warmup_bytes: int = 0
    # vLLM 0.17-0.19: what its CUDA graphs and non-torch memory take on one card under a plan; None otherwise
    vllm_engine: VLLMEngineShape | None = None


__all__ = ["GenerationProfile", "WeightLayout"]
