"""A DecoderSpec -> the layer graph of its ForCausalLM model, module by module as transformers builds it
(names follow the Llama module paths below the base model: embed_tokens, layers.N.self_attn.q_proj, ...).
The Llama graph of the zoo is the plain case of this builder."""

from __future__ import annotations

from dataclasses import replace
from typing import Literal

from advisor.core.errors import SpecError
from advisor.core.graph import Graph, GraphBuilder, Node
from advisor.core.llm.decoder import DecoderSpec
from advisor.core.ops import (
    GELU,
    Add,
    Attention,
    Concat,
    Embedding,
    Input,
    LayerNorm,
    Linear,
    Mul,
    ReLU,
    RMSNorm,
    Rotary,
    Sigmoid,
    SiLU,
    Slice,
    Tanh,
)
from advisor.core.ops.base import Op
from advisor.core.ops.moe import MoEExperts
from advisor.core.ops.shape import Reshape
from advisor.core.ops.text_ops import GELUTanhComposite, ScaleBy
from advisor.core.workload import AttentionImpl, Workload

# RMSNorms that multiply the weight in fp32 before casting to the input's dtype (Gemma*RMSNorm,
# Olmo2RMSNorm, GptOssRMSNorm); the others follow LlamaRMSNorm (see RMSNorm)
FP32_WEIGHT_NORMS = frozenset({"gemma", "gemma2", "gemma3_text", "olmo2", "gpt_oss"})


def norm_op(spec: DecoderSpec) -> Op:
    if spec.norm == "rms":
        return RMSNorm(llama_cast=spec.model_type not in FP32_WEIGHT_NORMS)
    return LayerNorm(affine=spec.norm != "layer_noparam", bias=spec.norm == "layer", composite=spec.norm == "cohere")


def activation_op(spec: DecoderSpec) -> Op:
    if spec.activation == "silu":
        return SiLU()
    if spec.activation == "relu":
        return ReLU()
    composite = spec.activation == "gelu_new" or spec.model_type in ("gpt2", "gpt_bigcode")
    return GELUTanhComposite() if composite else GELU(approximate="tanh" if spec.activation == "gelu_tanh" else "none")


def _qk_norm(b: GraphBuilder, spec: DecoderSpec, x: int, heads: int, name: str) -> int:
    if spec.qk_norm == "none":
        return x
    if spec.qk_norm == "full":
        return b.add(norm_op(spec), [x], name)
    seq = b.spec(x).shape[0]
    x = b.add(Reshape((seq, heads, spec.head_dim)), [x], name + "_view")
    x = b.add(norm_op(spec), [x], name)
    return b.add(Reshape((seq, heads * spec.head_dim)), [x], name + "_flat")


def _projections(b: GraphBuilder, h: int, widths: dict[str, int], prefix: str, bias: bool, fused: str) -> list[int]:
    """One Linear per projection, or one fused Linear whose column slices (views) they are (Phi-3's qkv_proj
    and gate_up_proj, GLM4's gate_up_proj): autocast then casts the shared input once, not once a projection."""
    if not fused:
        return [b.add(Linear(width, bias=bias), [h], prefix + name) for name, width in widths.items()]
    both = b.add(Linear(sum(widths.values()), bias=bias), [h], prefix + fused)
    views, start = [], 0
    for name, width in widths.items():
        views.append(b.add(Slice(dim=1, start=start, stop=start + width), [both], prefix + name.removesuffix("_proj")))
        start += width
    return views


def _attention(b: GraphBuilder, spec: DecoderSpec, h: int, layer: int) -> int:
    """q/k/v projections, optional q/k norms, rotary positions (none with a learned table), causal sdpa."""
    q, k, v = _projections(
        b,
        h,
        {
            "q_proj": spec.heads * spec.head_dim,
            "k_proj": spec.kv_heads * spec.head_dim,
            "v_proj": spec.kv_heads * spec.head_dim,
        },
        "self_attn.",
        spec.qkv_bias,
        "qkv_proj" if spec.fused_qkv else "",
    )
    q = _qk_norm(b, spec, q, spec.heads, "self_attn.q_norm")
    k = _qk_norm(b, spec, k, spec.kv_heads, "self_attn.k_norm")
    if spec.rotary_width:  # none with a learned table or ALiBi (BLOOM)
        q = b.add(Rotary(), [q], "self_attn.rotary_q")
        k = b.add(Rotary(), [k], "self_attn.rotary_k")
    seq = b.spec(h).shape[0]
    masked = not spec.eager_attention and spec.is_sliding(layer) and seq >= spec.sliding_window
    a = b.add(
        Attention(
            heads=spec.heads,
            kv_heads=spec.kv_heads,
            causal=True,
            sinks=spec.attention_sinks,
            kernel="eager" if spec.eager_attention else "fused",
            softcap=spec.attn_softcap,
            scores_held=spec.model_type == "bloom",  # modeling_bloom.py BloomAttention.forward
            # masked calls keep a second output-sized tensor in the simulated step (kernel
            # output and its copy): only unmasked flash calls are counted as one
            mask_bias=masked,
            token_major=not masked,
            enable_gqa=spec.model_type != "falcon",
            own_kernel=spec.own_attention_kernel,
        ),  # FalconAttention broadcasts its K/V heads
        [q, k, v],
        "self_attn.sdpa",
    )
    return b.add(Linear(spec.hidden, bias=spec.out_bias), [a], "self_attn.o_proj")


def _mla(b: GraphBuilder, spec: DecoderSpec, h: int) -> int:
    """DeepseekV2Attention: the latent (kv_lora_rank) is normalised and expanded to per-head nope keys and
    values; the rotary key (qk_rope_head_dim) is shared by every head."""
    assert spec.mla is not None
    m, heads = spec.mla, spec.heads
    if m.q_lora_rank:
        q = b.add(Linear(m.q_lora_rank, bias=False), [h], "self_attn.q_a_proj")
        q = b.add(RMSNorm(llama_cast=True), [q], "self_attn.q_a_layernorm")
        q = b.add(Linear(heads * m.qk_head_dim, bias=False), [q], "self_attn.q_b_proj")
    else:
        q = b.add(Linear(heads * m.qk_head_dim, bias=False), [h], "self_attn.q_proj")
    q = b.add(Rotary(), [q], "self_attn.rotary_q")
    kv = b.add(Linear(m.kv_lora_rank + m.qk_rope_head_dim, bias=False), [h], "self_attn.kv_a_proj_with_mqa")
    latent = b.add(Slice(dim=1, start=0, stop=m.kv_lora_rank), [kv], "self_attn.latent")
    rope = b.add(Slice(dim=1, start=m.kv_lora_rank, stop=m.kv_lora_rank + m.qk_rope_head_dim), [kv], "self_attn.k_rope")
    rope = b.add(Rotary(), [rope], "self_attn.rotary_k")
    latent = b.add(RMSNorm(llama_cast=True), [latent], "self_attn.kv_a_layernorm")
    kv = b.add(Linear(heads * (m.qk_nope_head_dim + m.v_head_dim), bias=False), [latent], "self_attn.kv_b_proj")
    k = b.add(Slice(dim=1, start=0, stop=heads * m.qk_nope_head_dim), [kv], "self_attn.k_nope")
    v = b.add(
        Slice(dim=1, start=heads * m.qk_nope_head_dim, stop=heads * (m.qk_nope_head_dim + m.v_head_dim)),
        [kv],
        "self_attn.value",
    )
    k = b.add(Concat(dim=1), [k, rope], "self_attn.key")
    a = b.add(
        Attention(heads=heads, causal=True, v_head_dim=m.v_head_dim, shared_rope_dim=m.qk_rope_head_dim),
        [q, k, v],
        "self_attn.sdpa",
    )  # torch.cat((q_pass, q_rot)) makes q head-major: a copy follows
    return b.add(Linear(spec.hidden, bias=False), [a], "self_attn.o_proj")


def _dense_mlp(b: GraphBuilder, spec: DecoderSpec, h: int, width: int, prefix: str = "mlp.") -> int:
    """down(act(gate(h)) * up(h)), or down(act(up(h))) for a plain MLP (fc1/fc2, c_fc/c_proj)."""
    if not spec.gated_mlp:
        h = b.add(Linear(width, bias=spec.mlp_bias), [h], prefix + "up_proj")
        h = b.add(activation_op(spec), [h], prefix + "act_fn")
        return b.add(Linear(spec.hidden, bias=spec.mlp_bias), [h], prefix + "down_proj")
    gate, up = _projections(
        b,
        h,
        {"gate_proj": width, "up_proj": width},
        prefix,
        spec.mlp_bias,
        "gate_up_proj" if spec.fused_gate_up else "",
    )
    gate = b.add(activation_op(spec), [gate], prefix + "act_fn")
    h = b.add(Mul(), [gate, up], prefix + "mul")
    return b.add(Linear(spec.hidden, bias=spec.mlp_bias), [h], prefix + "down_proj")


def _moe(b: GraphBuilder, spec: DecoderSpec, h: int) -> int:
    assert spec.moe is not None
    m = spec.moe
    logits = b.add(Linear(m.experts, bias=m.router_bias), [h], "mlp.gate")  # the router
    out = b.add(
        MoEExperts(
            m.experts,
            m.experts_per_token,
            m.expert_intermediate,
            spec.gated_mlp,
            m.expert_bias,
            m.half_routing_weights,
            m.clamped_swiglu,
        ),
        [h, logits],
        "mlp.experts",
    )
    if not m.shared_intermediate:
        return out
    shared = _dense_mlp(b, spec, h, m.shared_intermediate, "mlp.shared_experts.")
    if m.shared_gate:
        gate = b.add(Linear(1, bias=False), [h], "mlp.shared_expert_gate")
        gate = b.add(Sigmoid(), [gate], "mlp.shared_expert_gate_act")
        shared = b.add(Mul(), [gate, shared], "mlp.shared_scaled")
    return b.add(Add(), [out, shared], "mlp.add_shared")


def _mlp(b: GraphBuilder, spec: DecoderSpec, h: int, layer: int) -> int:
    return _moe(b, spec, h) if spec.is_moe_layer(layer) else _dense_mlp(b, spec, h, spec.intermediate)


def _layer(b: GraphBuilder, spec: DecoderSpec, x: int, layer: int) -> int:
    """Pre-norm residual block; Gemma 2/3 and GLM4 also normalise each branch's output; parallel blocks
    (GPT-J, NeoX, Falcon, Cohere, Phi-2) add attention and MLP of the same input to the residual."""
    h = b.add(norm_op(spec), [x], "input_layernorm")
    a = _mla(b, spec, h) if spec.mla else _attention(b, spec, h, layer)
    if spec.norms_per_layer == 4:
        a = b.add(norm_op(spec), [a], "post_self_attn_layernorm")
    if spec.parallel_block:
        m_in = h if spec.norms_per_layer == 1 else b.add(norm_op(spec), [x], "post_attention_layernorm")
        m = _mlp(b, spec, m_in, layer)
        a = b.add(Add(), [a, m], "add_branches")
        return b.add(Add(), [x, a], "add_residual")
    x = b.add(Add(), [x, a], "add_attn")  # residual + hidden_states
    h = b.add(norm_op(spec), [x], "post_attention_layernorm")
    h = _mlp(b, spec, h, layer)
    if spec.norms_per_layer == 4:
        h = b.add(norm_op(spec), [h], "post_mlp_layernorm")
    return b.add(Add(), [x, h], "add_mlp")


def _embeddings(b: GraphBuilder, spec: DecoderSpec, ids: int) -> int:
    x = b.add(Embedding(spec.vocab, spec.hidden, "input"), [ids], "embed_tokens")
    if spec.embed_scaled:
        x = b.add(ScaleBy(), [x], "embed_scale")
    if spec.learned_positions:
        pos = b.add(Embedding(spec.learned_positions, spec.hidden, "position"), [ids], "embed_positions")
        x = b.add(Add(), [x, pos], "add_positions")
    if spec.embed_norm:
        x = b.add(norm_op(spec), [x], "word_embeddings_layernorm")
    return x


def decoder_graph(spec: DecoderSpec, seq_len: int, *, last_token_logits: bool = False) -> Graph:
    """The ForCausalLM graph at seq_len tokens. last_token_logits: the LM head sees only the last position,
    as generate() asks for (logits_to_keep=1) during prefill."""
    if seq_len < 1:
        raise SpecError(f"seq_len: {spec.name} needs at least 1 token, got {seq_len}")
    if spec.max_positions is not None and seq_len > spec.max_positions:
        raise SpecError(
            f"seq_len: {spec.name} has {spec.max_positions} learned positions "
            f"(max_position_embeddings), got seq_len {seq_len}"
        )
    b = GraphBuilder(spec.name, task="language_model", decoder=spec)
    ids = b.add(Input((seq_len,), "int64"), [], "input_ids")
    x = _embeddings(b, spec, ids)
    for i in range(spec.layers):
        with b.block(f"layers.{i}"):
            x = _layer(b, spec, x, i)
    if spec.final_norm:
        x = b.add(norm_op(spec), [x], "norm")
    if last_token_logits:
        x = b.add(Slice(dim=0, start=seq_len - 1, stop=seq_len), [x], "last_token")
    x = b.add(
        Linear(spec.vocab, bias=spec.lm_head_bias, tied_to="embed_tokens" if spec.tied_embeddings else ""),
        [x],
        "lm_head",
    )
    if spec.logits_scaled:  # a second logits-sized tensor (modeling_granite.py, modeling_cohere.py)
        x = b.add(ScaleBy(), [x], "logits_scale")
    if spec.final_softcap:  # Gemma2ForCausalLM: three more, tanh's result kept for backward
        x = b.add(ScaleBy(), [x], "logits_softcap_div")
        x = b.add(Tanh(), [x], "logits_softcap_tanh")
        b.add(ScaleBy(), [x], "logits_softcap_mul")
    return b.build()


def with_attention(graph: Graph, w: Workload) -> Graph:
    """The graph with the workload's attention implementation (--attention): a decoder rebuilt with eager
    attention on or off (its masks and returned probabilities follow), any other graph's attention ops given
    the eager or the fused kernel. flash (attn_implementation="flash_attention_2") keeps what SDPA's flash
    backend keeps (output and log-sum-exp) and is modelled as sdpa. Idempotent."""
    if w.attention is None:
        return graph
    eager = w.attention == AttentionImpl.EAGER
    spec = graph.decoder
    if spec is not None:
        if spec.eager_attention == eager:
            return graph
        last = any(node.name == "last_token" for node in graph.nodes)
        return decoder_graph(
            replace(spec, eager_attention=eager), graph.nodes[0].output.shape[0], last_token_logits=last
        )
    kernel: Literal["eager", "fused"] = "eager" if eager else "fused"

    def swap(node: Node) -> Op:
        return replace(node.op, kernel=kernel) if isinstance(node.op, Attention) else node.op

    return GraphBuilder.copy_of(graph, swap).build()


def with_repeated_kv(graph: Graph) -> Graph:
    """A decoder as transformers up to 4.45 runs its SDPA attention (Attention.repeats_kv): grouped K/V heads
    repeated to every head before the kernel, so it needs no enable_gqa. Other graphs as they are."""
    if graph.decoder is None:
        return graph

    def repeat(node: Node) -> Op:
        op = node.op
        if isinstance(op, Attention) and op.kernel == "fused" and not op.own_kernel:
            return replace(op, repeats_kv=True, enable_gqa=False)
        return op

    return GraphBuilder.copy_of(graph, repeat).build()
