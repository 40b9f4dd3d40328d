"""Where a decoder's weights go when one model is split over several cards (core.generation.WeightLayout).

As vLLM builds a split model (vllm-project/vllm @5a6541db9bfa77756459722f69e8c89a0b47a14d):
- pipeline parallel: each stage builds its own blocks (vllm/distributed/utils.py get_pp_indices), the first
  stage the token embedding, the last the final norm and the LM head, and a tied head keeps its own copy of
  the embedding there (vllm/model_executor/models/llama.py: `embed_tokens` where `is_first_rank or
  (tie_word_embeddings and is_last_rank)`); llama.cpp's --split-mode layer places layers the same way with the
  output on the last card, and keeps the token embedding in system RAM (core/llm/runtime.py);
- tensor parallel: column- and row-parallel linears and the vocabulary-parallel embedding and head split N
  ways; norms, biases kept whole on every rank, MoE routers and MLA's down-projections (q_a_proj,
  kv_a_proj_with_mqa: ReplicatedLinear) are replicated; K and V projections split by KV head, with at least
  one head per rank (vllm/model_executor/layers/linear.py QKVParallelLinear: `num_kv_heads = 1`,
  `num_kv_head_replicas = tp_size // total_num_kv_heads` when tp_size >= total_num_kv_heads).
"""

from __future__ import annotations

from advisor.core.generation import WeightLayout
from advisor.core.llm.decoder import DecoderSpec
from advisor.core.llm.quant import group_bytes, weight_bytes
from advisor.core.llm.tensors import tensor_groups
from advisor.core.workload import Runtime

FIRST_STAGE = ("embed", "positions")
REPLICATED = ("vector", "router", "shared_gate", "positions", "mla_q_a", "mla_kv_a")
KV_PROJECTIONS = ("k_proj", "v_proj")


def weight_layout(spec: DecoderSpec, fmt: str, runtime: Runtime) -> WeightLayout:
    """The layout of `spec`'s weights stored as `fmt`, scaled to the bytes the estimate counts (a checkpoint's
    own bytes where they were read: quant.weight_bytes)."""
    groups = tensor_groups(spec)
    described = [group_bytes(fmt, g, spec) for g in groups]
    scale = weight_bytes(spec, fmt) / max(sum(described), 1.0)
    layers = [0.0] * spec.layers
    first = last = replicated = kv_proj = 0.0
    for group, size in zip(groups, described, strict=True):
        size *= scale
        if group.layer >= 0:
            layers[group.layer] += size
        elif group.role in FIRST_STAGE:
            embed_on_gpu = runtime != Runtime.LLAMA_CPP or group.role != "embed"
            first += size if embed_on_gpu else 0.0
            last += size if group.role == "embed" and spec.tied_embeddings else 0.0
        else:
            last += size
        replicated += size if group.role in REPLICATED else 0.0
        kv_proj += size if group.role in KV_PROJECTIONS else 0.0
    return WeightLayout(
        tuple(round(b) for b in layers),
        round(first),
        round(last),
        round(replicated),
        round(kv_proj),
        kv_heads_split=spec.mla is None,
    )
