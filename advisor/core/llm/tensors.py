"""Every weight tensor of a decoder, grouped by role, as transformers' modeling_*.py creates them. One list
serves the exact parameter count, the bytes of each quantized format (which tensors a format quantizes and
at what row length), and the bytes a decode step reads."""

from __future__ import annotations

from dataclasses import dataclass

from advisor.core.llm.decoder import DecoderSpec


@dataclass(frozen=True)
class TensorGroup:
    role: str  # q_proj ... down_proj, expert_*, shared_*, router, mla_*, embed, positions, lm_head, vector
    layer: int  # -1 outside the blocks
    rows: int  # output features (1 for vectors)
    cols: int  # input features: the row length quantizers block along
    count: int = 1  # identical tensors (the experts of one layer)
    active: int = 1  # of those, read for one token (MoE: experts per token)

    @property
    def numel(self) -> int:
        return self.rows * self.cols * self.count

    @property
    def is_matrix(self) -> bool:
        return self.rows > 1


def _vec(layer: int, length: int, copies: int = 1) -> list[TensorGroup]:
    return [TensorGroup("vector", layer, 1, length) for _ in range(copies)] if length else []


def _norm_params(spec: DecoderSpec, width: int) -> int:
    return {"rms": width, "layer": 2 * width, "layer_nobias": width, "layer_noparam": 0, "cohere": width}[spec.norm]


def _attention(spec: DecoderSpec, i: int) -> list[TensorGroup]:
    h, hd, q, kv = spec.hidden, spec.head_dim, spec.heads * spec.head_dim, spec.kv_heads * spec.head_dim
    groups = [
        TensorGroup("q_proj", i, q, h),
        TensorGroup("k_proj", i, kv, h),
        TensorGroup("v_proj", i, kv, h),
        TensorGroup("o_proj", i, h, q),
    ]
    if spec.qkv_bias:
        groups += _vec(i, q + 2 * kv)
    if spec.out_bias:
        groups += _vec(i, h)
    if spec.qk_norm == "head":
        groups += _vec(i, _norm_params(spec, hd), 2)
    elif spec.qk_norm == "full":
        groups += _vec(i, _norm_params(spec, q)) + _vec(i, _norm_params(spec, kv))
    if spec.attention_sinks:
        groups += _vec(i, spec.heads)
    return groups


def _mla(spec: DecoderSpec, i: int) -> list[TensorGroup]:
    """DeepseekV2Attention: q_proj (or q_a_proj, q_a_layernorm, q_b_proj), kv_a_proj_with_mqa to the latent
    plus the rope key, kv_a_layernorm, kv_b_proj to per-head nope keys and values, o_proj."""
    assert spec.mla is not None
    m, h, heads = spec.mla, spec.hidden, spec.heads
    if m.q_lora_rank:
        groups = [
            TensorGroup("mla_q_a", i, m.q_lora_rank, h),
            *_vec(i, m.q_lora_rank),
            TensorGroup("q_proj", i, heads * m.qk_head_dim, m.q_lora_rank),
        ]
    else:
        groups = [TensorGroup("q_proj", i, heads * m.qk_head_dim, h)]
    return [
        *groups,
        TensorGroup("mla_kv_a", i, m.kv_lora_rank + m.qk_rope_head_dim, h),
        *_vec(i, m.kv_lora_rank),
        TensorGroup("mla_kv_b", i, heads * (m.qk_nope_head_dim + m.v_head_dim), m.kv_lora_rank),
        TensorGroup("o_proj", i, h, heads * m.v_head_dim),
    ]


def _mlp(spec: DecoderSpec, i: int, width: int, prefix: str = "") -> list[TensorGroup]:
    h = spec.hidden
    if spec.gated_mlp:
        groups = [TensorGroup(prefix + "gate_proj", i, width, h), TensorGroup(prefix + "up_proj", i, width, h)]
    else:
        groups = [TensorGroup(prefix + "up_proj", i, width, h)]
    groups.append(TensorGroup(prefix + "down_proj", i, h, width))
    if spec.mlp_bias:
        groups += _vec(i, width * (2 if spec.gated_mlp else 1) + h)
    return groups


def _moe(spec: DecoderSpec, i: int) -> list[TensorGroup]:
    assert spec.moe is not None
    m, h = spec.moe, spec.hidden
    e, k, w = m.experts, m.experts_per_token, m.expert_intermediate
    groups = [TensorGroup("router", i, e, h), *_vec(i, e if m.router_bias else 0)]
    groups += [
        TensorGroup("expert_gate_proj", i, w, h, e, k),
        TensorGroup("expert_up_proj", i, w, h, e, k),
        TensorGroup("expert_down_proj", i, h, w, e, k),
    ]
    if m.expert_bias:  # gpt-oss: gate_up_proj_bias (E, 2w) and down_proj_bias (E, h)
        groups += _vec(i, e * (2 * w + h))
    if m.shared_intermediate:
        groups += _mlp(spec, i, m.shared_intermediate, "shared_")
        if m.shared_gate:
            groups.append(TensorGroup("shared_gate", i, 1, h))
    return groups


def _block(spec: DecoderSpec, i: int) -> list[TensorGroup]:
    groups = _vec(i, _norm_params(spec, spec.hidden), spec.norms_per_layer)
    groups += _mla(spec, i) if spec.mla else _attention(spec, i)
    groups += _moe(spec, i) if spec.is_moe_layer(i) else _mlp(spec, i, spec.intermediate)
    return groups


def tensor_groups(spec: DecoderSpec) -> list[TensorGroup]:
    h = spec.hidden
    groups = [TensorGroup("embed", -1, spec.vocab, h)]
    if spec.learned_positions:
        groups.append(TensorGroup("positions", -1, spec.learned_positions, h))
    if spec.embed_norm:
        groups += _vec(-1, _norm_params(spec, h))
    for i in range(spec.layers):
        groups += _block(spec, i)
    if spec.final_norm:
        groups += _vec(-1, _norm_params(spec, h))
    if not spec.tied_embeddings:
        groups.append(TensorGroup("lm_head", -1, spec.vocab, h))
    groups += _vec(-1, spec.vocab if spec.lm_head_bias else 0)
    return groups


def param_count(spec: DecoderSpec) -> int:
    return sum(g.numel for g in tensor_groups(spec))


def active_param_count(spec: DecoderSpec) -> int:
    """Parameters one token computes with: routed experts counted for the experts it picks."""
    return sum(g.numel * g.active // g.count for g in tensor_groups(spec))
