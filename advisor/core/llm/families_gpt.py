"""config.json -> DecoderSpec for the families with GPT-2-era field names (n_embd, n_layer, ffn_dim...):
GPT-2, BigCode, GPT-J, GPT-NeoX, Falcon, StarCoder2, OPT, BLOOM, StableLM. Defaults are those of
transformers' configuration classes; structure from each modeling_<family>.py."""

from __future__ import annotations

from collections.abc import Callable

from advisor.core.errors import SpecError
from advisor.core.llm.config_reader import ConfigReader
from advisor.core.llm.decoder import Activation, DecoderSpec


def _gpt(
    r: ConfigReader,
    name: str,
    t: str,
    hidden: int,
    heads: int,
    kv_heads: int,
    inner: int,
    vocab: int,
    layers_key: str = "num_hidden_layers",
    **fields: object,
) -> DecoderSpec:
    """LayerNorm with bias, plain MLP with biases, biases on attention: what these families share."""
    base: dict[str, object] = dict(
        name=name,
        model_type=t,
        hidden=hidden,
        layers=r.integer(layers_key),
        heads=heads,
        kv_heads=kv_heads,
        head_dim=hidden // heads,
        intermediate=inner,
        vocab=vocab,
        gated_mlp=False,
        activation="gelu",
        norm="layer",
        qkv_bias=True,
        out_bias=True,
        mlp_bias=True,
    )
    base.update(fields)
    return DecoderSpec(**base)  # type: ignore[arg-type]


def gelu_kind(name: str) -> Activation:
    """ACT2FN (transformers/activations.py): "gelu_new" is NewGELUActivation, the eight-op Python formula;
    the other tanh approximations are one fused kernel."""
    return "gelu_new" if name == "gelu_new" else "gelu_tanh" if "tanh" in name or name == "gelu_fast" else "gelu"


def gpt2(r: ConfigReader, name: str, t: str) -> DecoderSpec:
    """GPT2Model / GPTBigCodeModel: Conv1D layers with biases, learned positions (n_positions), tied head;
    BigCode's multi_query gives one key/value head."""
    hidden, heads = r.integer("n_embd", 768), r.integer("n_head", 12)
    kv = 1 if t == "gpt_bigcode" and r.flag("multi_query", True) else heads
    positions = r.integer("n_positions", 1024)
    return _gpt(
        r,
        name,
        t,
        hidden,
        heads,
        kv,
        r.optional_int("n_inner") or 4 * hidden,
        r.integer("vocab_size"),
        layers_key="n_layer",
        activation="gelu_tanh",
        learned_positions=positions,
        max_positions=positions,
        tied_embeddings=r.flag("tie_word_embeddings", True),
    )


def gptj(r: ConfigReader, name: str, t: str) -> DecoderSpec:
    """GPTJBlock: one ln_1, attention (q/k/v/out without bias) and MLP (fc_in/fc_out with bias) in
    parallel; untied lm_head with bias."""
    hidden = r.integer("n_embd", 4096)
    return _gpt(
        r,
        name,
        t,
        hidden,
        r.integer("n_head", 16),
        r.integer("n_head", 16),
        r.optional_int("n_inner") or 4 * hidden,
        r.integer("vocab_size"),
        layers_key="n_layer",
        activation=gelu_kind(r.text("activation_function", "gelu_new")),
        qkv_bias=False,
        out_bias=False,
        norms_per_layer=1,
        parallel_block=True,
        lm_head_bias=True,
        tied_embeddings=r.flag("tie_word_embeddings", False),
    )


def gpt_neox(r: ConfigReader, name: str, t: str) -> DecoderSpec:
    """GPTNeoXLayer: two LayerNorms, attention and MLP in parallel (use_parallel_residual), untied embed_out."""
    heads = r.integer("num_attention_heads")
    return _gpt(
        r,
        name,
        t,
        r.integer("hidden_size"),
        heads,
        heads,
        r.integer("intermediate_size"),
        r.integer("vocab_size"),
        parallel_block=r.flag("use_parallel_residual", True),
        qkv_bias=r.flag("attention_bias", True),
        out_bias=r.flag("attention_bias", True),
        tied_embeddings=r.flag("tie_word_embeddings", False),
    )


def falcon(r: ConfigReader, name: str, t: str) -> DecoderSpec:
    """FalconDecoderLayer: new_decoder_architecture has num_kv_heads and two LayerNorms (ln_attn, ln_mlp),
    older models multi-query (one kv head) and one input_layernorm when parallel_attn; `bias` switches every
    Linear's bias; the head is tied."""
    hidden, heads = r.integer("hidden_size", 4544), r.integer("num_attention_heads", 71)
    new = r.flag("new_decoder_architecture", False)
    kv = r.integer("num_kv_heads", heads) if new else (1 if r.flag("multi_query", True) else heads)
    parallel = new or r.flag("parallel_attn", True)
    norms = r.integer("num_ln_in_parallel_attn", 2) if new else (1 if parallel else 2)
    bias = r.flag("bias", False)
    return _gpt(
        r,
        name,
        t,
        hidden,
        heads,
        kv,
        r.optional_int("ffn_hidden_size") or 4 * hidden,
        r.integer("vocab_size", 65024),
        qkv_bias=bias,
        out_bias=bias,
        mlp_bias=bias,
        norms_per_layer=norms,
        parallel_block=parallel,
        tied_embeddings=r.flag("tie_word_embeddings", True),
    )


def starcoder2(r: ConfigReader, name: str, t: str) -> DecoderSpec:
    """Starcoder2DecoderLayer: LayerNorms with bias, use_bias on every Linear, gelu_tanh MLP (c_fc, c_proj),
    grouped-query attention with rotary positions, tied head, sliding window on every layer."""
    heads = r.integer("num_attention_heads")
    bias, layers = r.flag("use_bias", True), r.integer("num_hidden_layers")
    window = r.optional_int("sliding_window")
    return _gpt(
        r,
        name,
        t,
        r.integer("hidden_size"),
        heads,
        r.integer("num_key_value_heads", heads),
        r.integer("intermediate_size"),
        r.integer("vocab_size"),
        activation="gelu_tanh",
        qkv_bias=bias,
        out_bias=bias,
        mlp_bias=bias,
        tied_embeddings=r.flag("tie_word_embeddings", True),
        sliding_window=window or 0,
        sliding_layers=(True,) * layers if window else (),
    )


def opt(r: ConfigReader, name: str, t: str) -> DecoderSpec:
    """OPTDecoder: learned positions with an offset of 2 (OPTLearnedPositionalEmbedding), relu MLP (fc1, fc2),
    enable_bias on every Linear, final_layer_norm only when do_layer_norm_before, tied head."""
    hidden, heads = r.integer("hidden_size", 768), r.integer("num_attention_heads", 12)
    if r.integer("word_embed_proj_dim", hidden) != hidden:
        raise SpecError(
            "word_embed_proj_dim differs from hidden_size (OPT-350m's projections) and is not "
            "modelled analytically; use --method simulated"
        )
    bias, positions = r.flag("enable_bias", True), r.integer("max_position_embeddings", 2048)
    return _gpt(
        r,
        name,
        t,
        hidden,
        heads,
        heads,
        r.integer("ffn_dim", 3072),
        r.integer("vocab_size", 50272),
        activation="relu",
        qkv_bias=bias,
        out_bias=bias,
        mlp_bias=bias,
        learned_positions=positions + 2,
        max_positions=positions,
        final_norm=r.flag("do_layer_norm_before", True),
        tied_embeddings=r.flag("tie_word_embeddings", True),
    )


def bloom(r: ConfigReader, name: str, t: str) -> DecoderSpec:
    """BloomModel: word_embeddings_layernorm after the embedding, ALiBi (no position table), biases
    everywhere, 4 x hidden gelu MLP, tied head. BloomAttention computes its scores itself (alibi.baddbmm,
    an fp32 softmax cast back): the eager path."""
    hidden = r.integer("hidden_size", r.integer("n_embed", 64))
    heads = r.integer("n_head", 8)
    return _gpt(
        r,
        name,
        t,
        hidden,
        heads,
        heads,
        4 * hidden,
        r.integer("vocab_size", 250880),
        layers_key="n_layer",
        embed_norm=True,
        tied_embeddings=r.flag("tie_word_embeddings", True),
        eager_attention=True,
    )


def stablelm(r: ConfigReader, name: str, t: str) -> DecoderSpec:
    """StableLmDecoderLayer: LayerNorms with bias, q/k/v bias from use_qkv_bias, gated SiLU MLP without bias,
    one norm when use_parallel_residual, untied head."""
    heads, parallel = r.integer("num_attention_heads"), r.flag("use_parallel_residual", False)
    if r.flag("qk_layernorm", False):
        raise SpecError("qk_layernorm (per-head LayerNorms) is not modelled analytically; use --method simulated")
    return _gpt(
        r,
        name,
        t,
        r.integer("hidden_size"),
        heads,
        r.integer("num_key_value_heads", heads),
        r.integer("intermediate_size"),
        r.integer("vocab_size"),
        gated_mlp=True,
        activation="silu",
        qkv_bias=r.flag("use_qkv_bias", False),
        out_bias=False,
        mlp_bias=False,
        parallel_block=parallel,
        norms_per_layer=1 if parallel else 2,
        tied_embeddings=r.flag("tie_word_embeddings", False),
    )


LEGACY_FAMILIES: dict[str, Callable[[ConfigReader, str, str], DecoderSpec]] = {
    "gpt2": gpt2,
    "gpt_bigcode": gpt2,
    "gptj": gptj,
    "gpt_neox": gpt_neox,
    "falcon": falcon,
    "starcoder2": starcoder2,
    "opt": opt,
    "bloom": bloom,
    "stablelm": stablelm,
}
