"""Scaled-dot-product attention as CUDA runs it.

CPU and meta execution of F.scaled_dot_product_attention take the math path (a seq x seq score matrix kept
for backward); on CUDA the dispatcher picks a fused kernel (aten/src/ATen/native/transformers/cuda/
sdp_utils.cpp, default priority flash > memory-efficient > math) that keeps only the output and a
log-sum-exp. The simulator calls the chosen fused op itself: its meta kernel (torch/_meta_registrations.py)
allocates the same outputs as the CUDA kernel and its derivative (tools/autograd/derivatives.yaml) saves
the same tensors. Backward workspaces the CUDA kernels take from the caching allocator are added by
`backward_workspace_bytes`.
"""

from __future__ import annotations

import math
from typing import Any

import torch

aten = torch.ops.aten
HALF = (torch.float16, torch.bfloat16)


def _round_up(value: int, multiple: int) -> int:
    return -(-value // multiple) * multiple


def choose_backend(
    query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, attn_mask: torch.Tensor | None, enable_gqa: bool
) -> str:
    """sdp_utils.cpp checks, reduced to what decides the backend on an sm80+ card: flash needs half
    precision, no explicit mask, head_dim <= 256 and one head_dim for q, k and v (check_head_dim_size_flash);
    memory-efficient takes float32, masks and a narrower v too (DeepSeek's MLA) and needs head dims aligned
    (4 for float32, 8 for half); both need 4-D inputs."""
    if query.dim() != 4 or key.dim() != 4 or query.size(-1) != key.size(-1):
        return "math"
    head_dim, same_v = query.size(-1), value.size(-1) == query.size(-1)
    if enable_gqa and query.size(1) != key.size(1):
        return "flash" if query.dtype in HALF and attn_mask is None and head_dim <= 256 and same_v else "math"
    if query.dtype in HALF and attn_mask is None and head_dim <= 256 and head_dim % 8 == 0 and same_v:
        return "flash"
    align = 4 if query.dtype == torch.float32 else 8
    if query.dtype in (*HALF, torch.float32) and head_dim % align == 0 and value.size(-1) % align == 0:
        return "efficient"
    return "math"


def cuda_sdpa(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attn_mask: torch.Tensor | None = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale: float | None = None,
    enable_gqa: bool = False,
) -> Any:
    """F.scaled_dot_product_attention with the backend CUDA would pick (math falls through to torch)."""
    backend = choose_backend(query, key, value, attn_mask, enable_gqa)
    if backend == "flash":  # flash_api.cpp mha_fwd takes num_heads_k < num_heads: GQA/MQA without copies
        return aten._scaled_dot_product_flash_attention(query, key, value, dropout_p, is_causal, False, scale=scale)[0]
    if backend == "efficient":
        needs_lse = torch.is_grad_enabled() and any(t.requires_grad for t in (query, key, value))
        bias = attn_mask
        if bias is not None and bias.dtype == torch.bool:  # attention.cpp convert_boolean_attn_mask: zeros_like,
            # then masked_fill_ in place with the mask's logical_not
            bias = torch.zeros(bias.shape, dtype=query.dtype, device=bias.device).masked_fill_(~bias, -math.inf)
        if bias is not None:
            bias = bias.expand(query.size(0), query.size(1), query.size(2), key.size(2))
        return aten._scaled_dot_product_efficient_attention(
            query, key, value, bias, needs_lse, dropout_p, is_causal, scale=scale
        )[0]
    # The math path (attention.cpp _scaled_dot_product_attention_math) repeat_interleaves K and V to the
    # query's heads under enable_gqa and keeps the seq x seq scores; calling it by its aten name rather than
    # F.scaled_dot_product_attention keeps the semantics mode from choosing a backend for it again.
    return aten._scaled_dot_product_attention_math(
        query, key, value, attn_mask, dropout_p, is_causal, None, scale=scale, enable_gqa=enable_gqa
    )[0]


def backward_workspace_bytes(func: Any, args: tuple[Any, ...]) -> list[int]:
    """Temporaries the CUDA backward kernels allocate beside their outputs (freed when they return).

    Flash (aten/src/ATen/native/transformers/cuda/flash_attn/flash_api.cpp, mha_bwd): softmax_d
    (batch, heads, seqlen_q rounded to 128) and dq_accum (batch, seqlen_q rounded to 128, heads, head_dim
    rounded to 32) in float32. Memory-efficient (attention_backward.cu): delta (batch, heads, seqlen_q) in
    float32."""
    if func is aten._scaled_dot_product_flash_attention_backward.default:
        query = args[1]
        batch, heads, seq, dim = query.shape
        seq_r, dim_r = _round_up(seq, 128), (_round_up(dim, 32) if dim <= 192 else 256)
        return [batch * heads * seq_r * 4, batch * seq_r * heads * dim_r * 4]
    if func is aten._scaled_dot_product_efficient_attention_backward.default:
        query = args[1]
        batch, heads, seq, _ = query.shape
        return [batch * heads * seq * 4]
    return []
