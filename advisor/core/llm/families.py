"""config.json of each decoder family -> DecoderSpec. Field names and defaults are those of transformers'
configuration_<family>.py (5.x); the structural choices (biases, norms, parallel blocks) are read off each
family's modeling_<family>.py and cited per family below."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from advisor.core.errors import SpecError
from advisor.core.llm.config_reader import ConfigReader
from advisor.core.llm.decoder import DecoderSpec, MLASpec, MoESpec
from advisor.core.llm.families_gpt import LEGACY_FAMILIES, gelu_kind

# Families the analytic path does not describe: state-space and hybrid models have no KV cache per layer.
NOT_MODELLED = (
    "mamba",
    "mamba2",
    "jamba",
    "falcon_mamba",
    "zamba",
    "zamba2",
    "rwkv",
    "recurrent_gemma",
    "bamba",
    "falcon_h1",
)
# Multimodal configs whose text_config is a decoder family here (the vision tower is not counted).
TEXT_OF = {"gemma3": "gemma3_text", "llama4": "llama4_text", "mistral3": "mistral"}


def _llama_like(r: ConfigReader, name: str, model_type: str, **fields: Any) -> DecoderSpec:
    """Llama's field names (LlamaConfig), shared by most families: heads default to multi-head attention,
    head_dim to hidden / heads; attention_bias puts biases on q, k, v and o (LlamaAttention)."""
    hidden, heads = r.integer("hidden_size"), r.integer("num_attention_heads")
    bias = r.flag("attention_bias", False)
    base: dict[str, Any] = dict(
        name=name,
        model_type=model_type,
        hidden=hidden,
        layers=r.integer("num_hidden_layers"),
        heads=heads,
        kv_heads=r.integer("num_key_value_heads", heads),
        head_dim=r.integer("head_dim", hidden // heads),
        intermediate=r.integer("intermediate_size"),
        vocab=r.integer("vocab_size"),
        tied_embeddings=r.flag("tie_word_embeddings", False),
        qkv_bias=bias,
        out_bias=bias,
        mlp_bias=r.flag("mlp_bias", False),
    )
    base.update(fields)
    return DecoderSpec(**base)


def _window(r: ConfigReader, layers: int, pattern: int = 1, *, enabled: bool = True) -> dict[str, Any]:
    """Sliding-window attention: every layer (pattern 1) or all but every pattern-th layer (Gemma 2/3,
    gpt-oss), unless config layer_types says otherwise."""
    window = r.optional_int("sliding_window") if enabled else None
    if not window:
        return {}
    default = [bool((i + 1) % pattern) if pattern > 1 else True for i in range(layers)]
    return {"sliding_window": window, "sliding_layers": r.layer_types(layers, default)}


def llama(r: ConfigReader, name: str, t: str) -> DecoderSpec:
    """llama, granite, mistral (no attention bias field: False), phi3 (fused qkv/gate_up, same counts);
    smollm3 is Llama's layers with rotary positions left out of every fourth (no_rope_layers: same tensors)."""
    spec = _llama_like(r, name, t, logits_scaled=t == "granite", fused_qkv=t == "phi3", fused_gate_up=t == "phi3")
    return replace(spec, **_window(r, spec.layers, enabled=t in ("mistral", "phi3")))


def mixtral(r: ConfigReader, name: str, t: str) -> DecoderSpec:
    """MixtralSparseMoeBlock: router Linear(hidden, experts, bias=False), experts of intermediate_size."""
    spec = _llama_like(r, name, t)
    moe = MoESpec(r.integer("num_local_experts", 8), r.integer("num_experts_per_tok", 2), spec.intermediate)
    return replace(spec, moe=moe, **_window(r, spec.layers))


def qwen2(r: ConfigReader, name: str, t: str) -> DecoderSpec:
    """Qwen2Attention: q/k/v with bias, o_proj without; Qwen3 drops the biases and adds per-head q/k norms.
    Sliding windows only when use_sliding_window (Qwen2Config.layer_types)."""
    qwen3 = t.startswith("qwen3")
    spec = _llama_like(
        r, name, t, qkv_bias=not qwen3 and r.flag("qkv_bias", True), out_bias=False, qk_norm="head" if qwen3 else "none"
    )
    if qwen3:
        spec = replace(spec, qkv_bias=r.flag("attention_bias", False), out_bias=r.flag("attention_bias", False))
    if t.endswith("_moe"):
        spec = replace(spec, moe=_qwen_moe(r, spec))
    sliding = r.flag("use_sliding_window", False)
    start = r.integer("max_window_layers", spec.layers, minimum=0)
    if sliding and r.optional_int("sliding_window"):
        layers = r.layer_types(spec.layers, [i >= start for i in range(spec.layers)])
        spec = replace(spec, sliding_window=r.integer("sliding_window"), sliding_layers=layers)
    return spec


def _qwen_moe(r: ConfigReader, spec: DecoderSpec) -> MoESpec:
    """Qwen2MoeDecoderLayer: a sparse block where layer not in mlp_only_layers and (layer + 1) %
    decoder_sparse_step == 0; Qwen2-MoE adds a shared expert with a sigmoid gate Linear(hidden, 1)."""
    step, only = r.integer("decoder_sparse_step", 1), set(r.int_list("mlp_only_layers"))
    dense = tuple(i for i in range(spec.layers) if i in only or (i + 1) % step)
    qwen2 = spec.model_type == "qwen2_moe"  # defaults of Qwen2MoeConfig, else Qwen3MoeConfig
    shared = r.integer("shared_expert_intermediate_size", 5632, minimum=0) if qwen2 else 0
    return MoESpec(
        r.first_integer(("num_experts", "num_local_experts"), 60 if qwen2 else 128),
        r.integer("num_experts_per_tok", 4 if qwen2 else 8),
        r.integer("moe_intermediate_size", 1408 if qwen2 else 768),
        shared_intermediate=shared,
        shared_gate=bool(shared),
        dense_layers=dense,
        half_routing_weights=True,
    )  # router_top_value.to(router_logits.dtype)


def gemma(r: ConfigReader, name: str, t: str) -> DecoderSpec:
    """GemmaDecoderLayer: GeGLU (gelu tanh), head_dim 256, tied embeddings; Gemma 2 adds post-attention and
    post-feedforward norms (4 per layer) and alternates sliding and global layers; Gemma 3 adds per-head
    q/k norms and slides 5 of every 6 layers (sliding_window_pattern)."""
    spec = _llama_like(
        r,
        name,
        t,
        tied_embeddings=r.flag("tie_word_embeddings", True),
        activation="gelu_tanh",
        head_dim=r.integer("head_dim", 256),
        embed_scaled=True,
    )
    if t == "gemma":
        return spec
    pattern = 2 if t == "gemma2" else r.integer("sliding_window_pattern", 6)
    # Gemma2PreTrainedModel has no SDPA support (_supports_sdpa = False): eager attention, soft-capped
    capped = r.cfg.get("attn_logit_softcapping", 50.0) is not None  # Gemma2Config default 50.0; null = off
    final_cap = r.cfg.get("final_logit_softcapping", 30.0 if t == "gemma2" else None) is not None
    return replace(
        spec,
        norms_per_layer=4,
        qk_norm="head" if t != "gemma2" else "none",
        eager_attention=t == "gemma2",
        attn_softcap=t == "gemma2" and capped,
        final_softcap=final_cap,
        **_window(r, spec.layers, pattern),
    )


def phi(r: ConfigReader, name: str, t: str) -> DecoderSpec:
    """PhiDecoderLayer (phi-1/1.5/2): one LayerNorm, attention and MLP in parallel, biases everywhere, plain
    gelu_new MLP (fc1, fc2), final_layernorm, untied lm_head with bias."""
    return _llama_like(
        r,
        name,
        t,
        gated_mlp=False,
        activation=gelu_kind(r.text("hidden_act", "gelu_new")),
        norm="layer",
        norms_per_layer=1,
        parallel_block=True,
        qkv_bias=True,
        out_bias=True,
        mlp_bias=True,
        lm_head_bias=True,
        qk_norm="head" if r.flag("qk_layernorm", False) else "none",
    )


def phimoe(r: ConfigReader, name: str, t: str) -> DecoderSpec:
    """PhimoeDecoderLayer: LayerNorms with bias, attention_bias on q/k/v/o, Mixtral-style experts."""
    spec = _llama_like(r, name, t, norm="layer", lm_head_bias=r.flag("lm_head_bias", False))
    moe = MoESpec(r.integer("num_local_experts", 16), r.integer("num_experts_per_tok", 2), spec.intermediate)
    return replace(spec, moe=moe, **_window(r, spec.layers))


def granitemoe(r: ConfigReader, name: str, t: str) -> DecoderSpec:
    """GraniteMoeMoE: router Linear(hidden, experts, bias=False) and gated experts of intermediate_size;
    GraniteMoeShared adds a shared gated MLP of shared_intermediate_size."""
    spec = _llama_like(r, name, t, logits_scaled=True)
    shared = r.integer("shared_intermediate_size", 0, minimum=0) if t == "granitemoeshared" else 0
    moe = MoESpec(
        r.integer("num_local_experts", 8),
        r.integer("num_experts_per_tok", 2),
        spec.intermediate,
        shared_intermediate=shared,
    )
    return replace(spec, moe=moe)


def olmo(r: ConfigReader, name: str, t: str) -> DecoderSpec:
    """OLMo 1: LayerNorm without parameters (OlmoLayerNorm), no biases. OLMo 2: RMSNorm after attention and
    MLP (2 per layer) and q/k norms over all heads; OLMo 3 is OLMo 2 with sliding windows. OLMoE: pre-norm,
    q/k norms over all heads, experts."""
    if t == "olmo":
        return _llama_like(r, name, t, norm="layer_noparam")
    spec = _llama_like(r, name, t, qk_norm="full")
    if t == "olmo3":  # Olmo3Config.layer_types: 3 sliding layers, then a full one
        spec = replace(spec, **_window(r, spec.layers, 4))
    if t == "olmoe":
        spec = replace(
            spec,
            moe=MoESpec(
                r.integer("num_experts", 64),
                r.integer("num_experts_per_tok", 8),
                spec.intermediate,
                half_routing_weights=True,
            ),
        )  # OlmoeTopKRouter
    return spec


def cohere(r: ConfigReader, name: str, t: str) -> DecoderSpec:
    """CohereDecoderLayer: one weight-only LayerNorm, attention and MLP in parallel, tied embeddings,
    optional q/k LayerNorms shaped (heads, head_dim)."""
    return _llama_like(
        r,
        name,
        t,
        norm="cohere",
        norms_per_layer=1,
        parallel_block=True,
        logits_scaled=True,
        tied_embeddings=r.flag("tie_word_embeddings", True),
        qk_norm="full" if r.flag("use_qk_norm", False) else "none",
    )


def glm4(r: ConfigReader, name: str, t: str) -> DecoderSpec:
    """Glm4Attention: q/k/v bias from attention_bias, o_proj without; four RMSNorms per layer."""
    return _llama_like(
        r, name, t, out_bias=False, norms_per_layer=4, qkv_bias=r.flag("attention_bias", True), fused_gate_up=True
    )  # Glm4MLP.gate_up_proj


def gpt_oss(r: ConfigReader, name: str, t: str) -> DecoderSpec:
    """GptOssAttention: biases on q/k/v/o and one sink logit per head; GptOssMLP: router with bias and
    experts with biases; sliding window on every other layer."""
    spec = _llama_like(
        r,
        name,
        t,
        qkv_bias=r.flag("attention_bias", True),
        out_bias=r.flag("attention_bias", True),
        attention_sinks=True,
        head_dim=r.integer("head_dim", 64),
        eager_attention=True,
    )  # GptOssPreTrainedModel: _supports_sdpa = False
    moe = MoESpec(
        r.integer("num_local_experts", 128),
        r.integer("num_experts_per_tok", 4),
        spec.intermediate,
        router_bias=True,
        expert_bias=True,
        clamped_swiglu=True,
    )
    return replace(spec, moe=moe, **_window(r, spec.layers, 2))


def deepseek(r: ConfigReader, name: str, t: str) -> DecoderSpec:
    """DeepseekV2/V3: multi-head latent attention; the first first_k_dense_replace layers are dense, the
    others route to n_routed_experts and always run n_shared_experts shared experts."""
    spec = _llama_like(r, name, t)
    mla = MLASpec(
        r.integer("kv_lora_rank", 512),
        r.optional_int("q_lora_rank", 1536) or 0,
        r.integer("qk_nope_head_dim", 128),
        r.integer("qk_rope_head_dim", 64),
        r.integer("v_head_dim", 128),
    )
    inter = r.integer("moe_intermediate_size", 1407)
    dense = tuple(range(min(r.integer("first_k_dense_replace", 0, minimum=0), spec.layers)))
    # V3 takes its top-k weights from sigmoid(router logits), half under autocast (F.linear is on its lower-
    # precision list); V2 from a softmax with dtype=float32
    moe = MoESpec(
        r.integer("n_routed_experts", 64),
        r.integer("num_experts_per_tok", 6),
        inter,
        shared_intermediate=inter * r.integer("n_shared_experts", 2, minimum=0),
        dense_layers=dense,
        half_routing_weights=t != "deepseek_v2",
    )
    return replace(spec, mla=mla, moe=moe, head_dim=mla.v_head_dim)


def glm4_moe(r: ConfigReader, name: str, t: str) -> DecoderSpec:
    """Glm4MoeAttention: q/k/v bias from attention_bias, o_proj without, optional per-head q/k norms
    (use_qk_norm); Glm4MoeMoE: DeepSeek-V3's routing (first_k_dense_replace dense layers, n_shared_experts
    shared experts of moe_intermediate_size); two RMSNorms per layer. The MTP layers
    (num_nextn_predict_layers) are not part of Glm4MoeModel and are not built here either."""
    spec = _llama_like(r, name, t, out_bias=False, qk_norm="head" if r.flag("use_qk_norm", False) else "none")
    inter = r.integer("moe_intermediate_size", 1408)
    dense = tuple(range(min(r.integer("first_k_dense_replace", 1, minimum=0), spec.layers)))
    moe = MoESpec(
        r.integer("n_routed_experts", 128),
        r.integer("num_experts_per_tok", 8),
        inter,
        shared_intermediate=inter * r.integer("n_shared_experts", 1, minimum=0),
        dense_layers=dense,
    )
    return replace(spec, moe=moe)


def llama4(r: ConfigReader, name: str, t: str) -> DecoderSpec:
    """Llama4TextModel: MoE layers (moe_layers, else every interleave_moe_layer_step-th) route to
    num_local_experts of intermediate_size and always run a shared expert of the same width; dense layers use
    intermediate_size_mlp; layers with rotary positions attend within chunks of attention_chunk_size (the
    cache holds at most one chunk); the qk L2 norm has no weights. The text model only (no vision tower)."""
    spec = _llama_like(r, name, t, intermediate=r.integer("intermediate_size_mlp", 16384))
    step = r.integer("interleave_moe_layer_step", 1)
    moe_layers = set(r.int_list("moe_layers")) or set(range(step - 1, spec.layers, step))
    expert = r.integer("intermediate_size", 8192)
    moe = MoESpec(
        r.integer("num_local_experts", 16),
        r.integer("num_experts_per_tok", 1),
        expert,
        shared_intermediate=expert,
        dense_layers=tuple(i for i in range(spec.layers) if i not in moe_layers),
    )
    chunk = r.optional_int("attention_chunk_size", 8192)
    if not chunk:
        return replace(spec, moe=moe)
    interval = r.integer("no_rope_layer_interval", 4)
    default = [bool((i + 1) % interval) for i in range(spec.layers)]
    chunked = r.layer_types(spec.layers, default, "chunked_attention")
    return replace(spec, moe=moe, sliding_window=chunk, sliding_layers=chunked)


FAMILIES: dict[str, Callable[[ConfigReader, str, str], DecoderSpec]] = {
    **dict.fromkeys(("llama", "mistral", "granite", "phi3", "smollm3"), llama),
    "mixtral": mixtral,
    "phimoe": phimoe,
    "phi": phi,
    **dict.fromkeys(("qwen2", "qwen3", "qwen2_moe", "qwen3_moe"), qwen2),
    **dict.fromkeys(("gemma", "gemma2", "gemma3_text"), gemma),
    **dict.fromkeys(("granitemoe", "granitemoeshared"), granitemoe),
    **dict.fromkeys(("olmo", "olmo2", "olmo3", "olmoe"), olmo),
    "cohere": cohere,
    "glm4": glm4,
    "llama4_text": llama4,
    "gpt_oss": gpt_oss,
    "deepseek_v2": deepseek,
    "deepseek_v3": deepseek,
    "kimi_k2": deepseek,  # Kimi K2: DeepseekV3ForCausalLM
    "glm4_moe": glm4_moe,
}


def not_modelled(model_type: object) -> str | None:
    """Why a family known to transformers has no analytic description here, or None."""
    if model_type not in NOT_MODELLED:
        return None
    return (
        f"model_type {model_type!r} is not modelled analytically (state-space or hybrid layers, no attention "
        "KV cache per layer); use --method simulated"
    )


def decoder_from_config(cfg: dict[str, Any], name: str) -> DecoderSpec | None:
    """The decoder a config.json describes; None when its model_type is not a decoder family here (see
    not_modelled for the families known not to fit this description)."""
    model_type = cfg.get("model_type")
    if not isinstance(model_type, str):
        raise SpecError("config has no model_type (a transformers config.json names one)")
    if model_type in NOT_MODELLED:
        return None
    if model_type in TEXT_OF and isinstance(cfg.get("text_config"), dict):  # the language model of a VLM
        cfg, model_type = cfg["text_config"], TEXT_OF[model_type]
    family = FAMILIES.get(model_type) or LEGACY_FAMILIES.get(model_type)
    if family is None:
        return None
    spec = family(ConfigReader(cfg), name, model_type)
    return replace(spec, rotary_dim=_rotary_dim(cfg, spec.head_dim))


def _rotary_dim(cfg: dict[str, Any], head_dim: int) -> int | None:
    """The rotated dims of a head: GPT-J's rotary_dim, else head_dim x the partial factor (rope_parameters'
    or the top-level partial_rotary_factor of Phi, StableLM, GLM4; GPT-NeoX's rotary_pct); None: all."""
    dims = cfg.get("rotary_dim")
    if isinstance(dims, int) and not isinstance(dims, bool):
        return min(head_dim, max(0, dims))
    rope = cfg.get("rope_parameters")
    factors = [
        rope.get("partial_rotary_factor") if isinstance(rope, dict) else None,
        cfg.get("partial_rotary_factor"),
        cfg.get("rotary_pct"),
    ]
    for factor in factors:
        if isinstance(factor, (int, float)) and not isinstance(factor, bool) and 0 < factor <= 1:
            return int(head_dim * factor)
    return None
