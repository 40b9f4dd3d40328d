"""The built-in transformer zoo: BERT, GPT-2 and Llama-style decoders, module by module as HuggingFace
transformers builds them (sdpa attention, training mode), so the graph holds the tensors the real model
creates and autograd saves. Layer names follow the HF module paths below the base model.

- BERT: BertForSequenceClassification with 2 labels (models/bert/modeling_bert.py), task "classification".
- GPT-2: GPT2LMHeadModel (models/gpt2/modeling_gpt2.py), LM head tied to wte, task "language_model".
- Llama: LlamaForCausalLM (models/llama/modeling_llama.py), untied head, task "language_model".
The loss is not part of the graph: the estimator appends cross-entropy on the last node's output.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from advisor.core.errors import SpecError
from advisor.core.graph import Graph, GraphBuilder
from advisor.core.llm.decoder import DecoderSpec
from advisor.core.llm.graph import decoder_graph
from advisor.core.ops import (
    GELU,
    Add,
    Attention,
    Dropout,
    Embedding,
    Input,
    LayerNorm,
    Linear,
    Slice,
    Tanh,
)
from advisor.core.ops.text_ops import GELUTanhComposite


def _check_seq_len(model: str, seq_len: int, max_positions: int | None) -> None:
    if seq_len < 1:
        raise SpecError(f"seq_len: {model} needs at least 1 token, got {seq_len}")
    if max_positions is not None and seq_len > max_positions:
        raise SpecError(
            f"seq_len: {model} has {max_positions} learned positions (max_position_embeddings), got seq_len {seq_len}"
        )


# ---------------------------------------------------------------- BERT


@dataclass(frozen=True)
class BertConfig:
    hidden: int = 768
    layers: int = 12
    heads: int = 12
    intermediate: int = 3072
    vocab: int = 30522
    max_positions: int = 512
    type_vocab: int = 2
    labels: int = 2
    dropout: float = 0.1  # hidden_dropout_prob = attention_probs_dropout_prob = 0.1


def _bert_embeddings(b: GraphBuilder, cfg: BertConfig, ids: int) -> int:
    """BertEmbeddings.forward: word + token_type (the all-zeros buffer expanded to the batch), then + position
    (position_ids is a (1, seq) buffer, so its embedding is shared by the batch), LayerNorm, dropout."""
    word = b.add(Embedding(cfg.vocab, cfg.hidden, "input"), [ids], "embeddings.word_embeddings")
    types = b.add(Embedding(cfg.type_vocab, cfg.hidden, "constant"), [ids], "embeddings.token_type_embeddings")
    x = b.add(Add(), [word, types], "embeddings.add_token_type")
    pos = b.add(Embedding(cfg.max_positions, cfg.hidden, "position"), [ids], "embeddings.position_embeddings")
    x = b.add(Add(), [x, pos], "embeddings.add_position")
    x = b.add(LayerNorm(), [x], "embeddings.LayerNorm")
    return b.add(Dropout(cfg.dropout), [x], "embeddings.dropout")


def _bert_layer(b: GraphBuilder, cfg: BertConfig, x: int) -> int:
    """BertLayer: separate query/key/value Linears over the same input (each addmm keeps it), sdpa without a
    mask (none is passed, so the fused kernel runs with dropout_p 0.1), then BertSelfOutput (dense, dropout,
    LayerNorm(h + input)), BertIntermediate (dense, exact erf GELU: ACT2FN["gelu"] is F.gelu), BertOutput."""
    q = b.add(Linear(cfg.hidden), [x], "attention.self.query")
    k = b.add(Linear(cfg.hidden), [x], "attention.self.key")
    v = b.add(Linear(cfg.hidden), [x], "attention.self.value")
    context = b.add(Attention(heads=cfg.heads, dropout=cfg.dropout, token_major=True), [q, k, v], "attention.self.sdpa")
    a = b.add(Linear(cfg.hidden), [context], "attention.output.dense")
    dropped = b.add(Dropout(cfg.dropout), [a], "attention.output.dropout")
    a = b.add(Add(), [dropped, x], "attention.output.add")
    attended = b.add(LayerNorm(), [a], "attention.output.LayerNorm")
    h = b.add(Linear(cfg.intermediate), [attended], "intermediate.dense")
    act = b.add(GELU(), [h], "intermediate.intermediate_act_fn")
    h = b.add(Linear(cfg.hidden), [act], "output.dense")
    out_dropped = b.add(Dropout(cfg.dropout), [h], "output.dropout")
    h = b.add(Add(), [out_dropped, attended], "output.add")
    out = b.add(LayerNorm(), [h], "output.LayerNorm")
    # Python locals: BertAttention keeps the context and BertSelfOutput its dropped projection until their
    # LayerNorm has run; BertLayer keeps attention_output and BertIntermediate/BertOutput theirs to the end
    for node, until in ((context, attended), (dropped, attended), (attended, out), (act, out), (out_dropped, out)):
        b.hold(node, until)
    return out


def bert(cfg: BertConfig, seq_len: int, name: str) -> Graph:
    """BertForSequenceClassification: BertModel (pooler: first token, dense, tanh), dropout, classifier."""
    _check_seq_len(name, seq_len, cfg.max_positions)
    b = GraphBuilder(name, task="classification")
    ids = b.add(Input((seq_len,), "int64"), [], "input_ids")
    embedded = x = _bert_embeddings(b, cfg, ids)
    for i in range(cfg.layers):
        with b.block(f"encoder.layer.{i}"):
            layer_input, x = x, _bert_layer(b, cfg, x)
        if i:  # the encoder's loop variable keeps a layer's input until the layer returns
            b.hold(layer_input, x)
    last = x
    x = b.add(Slice(dim=0, start=0, stop=1, keep_dim=False), [x], "pooler.first_token")  # hidden[:, 0]
    x = b.add(Linear(cfg.hidden), [x], "pooler.dense")
    pooled = b.add(Tanh(), [x], "pooler.activation")
    b.hold(embedded, pooled)  # BertModel.forward keeps embedding_output until it returns
    x = b.add(Dropout(cfg.dropout), [pooled], "dropout")  # classifier_dropout None -> hidden_dropout_prob
    classifier = b.add(Linear(cfg.labels), [x], "classifier")
    b.hold(last, classifier)  # BertForSequenceClassification keeps BertModel's outputs until it returns
    b.hold(pooled, classifier)
    return b.build()


# ---------------------------------------------------------------- GPT-2


@dataclass(frozen=True)
class GPT2Config:
    hidden: int = 768  # n_embd
    layers: int = 12  # n_layer
    heads: int = 12  # n_head
    vocab: int = 50257
    max_positions: int = 1024  # n_positions
    dropout: float = 0.1  # embd_pdrop = attn_pdrop = resid_pdrop = 0.1


def _gpt2_block(b: GraphBuilder, cfg: GPT2Config, x: int) -> int:
    """GPT2Block: ln_1, attn (c_attn is a Conv1D = addmm into one packed qkv tensor; q, k, v are views of it
    that the sdpa kernel keeps; is_causal because no mask is passed), c_proj, resid_dropout, residual add;
    ln_2, mlp (c_fc, gelu_new = NewGELUActivation's Python formula, c_proj, dropout), residual add."""
    normed = b.add(LayerNorm(), [x], "ln_1")
    h = b.add(Linear(3 * cfg.hidden), [normed], "attn.c_attn")
    h = b.add(Attention(heads=cfg.heads, causal=True, dropout=cfg.dropout, token_major=True), [h], "attn.sdpa")
    h = b.add(Linear(cfg.hidden), [h], "attn.c_proj")
    attn_output = b.add(Dropout(cfg.dropout), [h], "attn.resid_dropout")
    x = b.add(Add(), [attn_output, x], "add_attn")  # attn_output + residual
    h = b.add(LayerNorm(), [x], "ln_2")
    h = b.add(Linear(4 * cfg.hidden), [h], "mlp.c_fc")  # n_inner None -> 4 * n_embd
    h = b.add(GELUTanhComposite(), [h], "mlp.act")
    h = b.add(Linear(cfg.hidden), [h], "mlp.c_proj")
    h = b.add(Dropout(cfg.dropout), [h], "mlp.dropout")
    # GPT2Block's and GPT2Model's Python locals (ln outputs, attn_output, the block's input, the embeddings)
    # outlive their last reader: as for every transformers decoder, core/llm/lifetimes.py holds them
    return b.add(Add(), [x, h], "add_mlp")  # residual + feed_forward_hidden_states


def gpt2_decoder(cfg: GPT2Config, name: str) -> DecoderSpec:
    """The same model in the general decoder description (generation, quantization, LoRA use it)."""
    return DecoderSpec(
        name,
        "gpt2",
        cfg.hidden,
        cfg.layers,
        cfg.heads,
        cfg.heads,
        cfg.hidden // cfg.heads,
        4 * cfg.hidden,
        cfg.vocab,
        tied_embeddings=True,
        gated_mlp=False,
        activation="gelu_tanh",
        norm="layer",
        qkv_bias=True,
        out_bias=True,
        mlp_bias=True,
        learned_positions=cfg.max_positions,
        max_positions=cfg.max_positions,
    )


def gpt2(cfg: GPT2Config, seq_len: int, name: str) -> Graph:
    """GPT2LMHeadModel: wte + wpe (position_ids is (1, seq): shared by the batch), drop, blocks, ln_f, and the
    bias-free lm_head whose weight is wte's (tie_word_embeddings)."""
    _check_seq_len(name, seq_len, cfg.max_positions)
    b = GraphBuilder(name, task="language_model", decoder=gpt2_decoder(cfg, name))
    ids = b.add(Input((seq_len,), "int64"), [], "input_ids")
    tok = b.add(Embedding(cfg.vocab, cfg.hidden, "input"), [ids], "wte")
    pos = b.add(Embedding(cfg.max_positions, cfg.hidden, "position"), [ids], "wpe")
    x = b.add(Add(), [tok, pos], "add_embeddings")
    x = b.add(Dropout(cfg.dropout), [x], "drop")
    for i in range(cfg.layers):
        with b.block(f"h.{i}"):
            x = _gpt2_block(b, cfg, x)
    x = b.add(LayerNorm(), [x], "ln_f")
    b.add(Linear(cfg.vocab, bias=False, tied_to="wte"), [x], "lm_head")
    return b.build()


# ---------------------------------------------------------------- Llama


@dataclass(frozen=True)
class LlamaConfig:
    hidden: int
    layers: int
    heads: int
    kv_heads: int
    intermediate: int
    vocab: int

    @property
    def head_dim(self) -> int:
        return self.hidden // self.heads


def llama(
    hidden: int,
    layers: int,
    heads: int,
    kv_heads: int,
    intermediate: int,
    vocab: int,
    seq_len: int,
    name: str = "llama",
) -> Graph:
    """A Llama-style decoder (LlamaForCausalLM): embed_tokens, decoder layers, final RMSNorm, untied lm_head.
    Rotary positions have no learned table, so any seq_len >= 1 builds. The plain case of the general
    decoder builder (core/llm/graph.py)."""
    if hidden % heads or heads % kv_heads:
        raise SpecError(f"{name}: heads {heads} must divide hidden {hidden}, and kv_heads {kv_heads} must divide heads")
    _check_seq_len(name, seq_len, None)
    spec = DecoderSpec(name, "llama", hidden, layers, heads, kv_heads, hidden // heads, intermediate, vocab)
    return decoder_graph(spec, seq_len)


# ---------------------------------------------------------------- registry

BERT_CONFIGS: dict[str, BertConfig] = {
    "bert-base": BertConfig(),
    "bert-large": BertConfig(hidden=1024, layers=24, heads=16, intermediate=4096),
}
GPT2_CONFIGS: dict[str, GPT2Config] = {
    "gpt2": GPT2Config(),
    "gpt2-medium": GPT2Config(hidden=1024, layers=24, heads=16),
    "gpt2-large": GPT2Config(hidden=1280, layers=36, heads=20),
    "gpt2-xl": GPT2Config(hidden=1600, layers=48, heads=25),
}
LLAMA_CONFIGS: dict[str, LlamaConfig] = {
    "llama-7b": LlamaConfig(hidden=4096, layers=32, heads=32, kv_heads=32, intermediate=11008, vocab=32000),
    # LLaMA 13B (Touvron et al. 2023, Table 2: dimension 5120, 40 heads, 40 layers; FFN 13824 as in its config.json)
    "llama-13b": LlamaConfig(hidden=5120, layers=40, heads=40, kv_heads=40, intermediate=13824, vocab=32000),
    "tinyllama-1.1b": LlamaConfig(hidden=2048, layers=22, heads=32, kv_heads=4, intermediate=5632, vocab=32000),
    # Llama 2 70B (meta-llama/Llama-2-70b-hf config.json: hidden_size 8192, 80 layers, 64 heads, 8 KV heads,
    # intermediate_size 28672, vocab_size 32000; Touvron et al. 2023, "Llama 2", GQA for 34B/70B): Answer.AI's
    # FSDP+QLoRA benchmarks train it (benchmarks/public_speed.py)
    "llama-2-70b": LlamaConfig(hidden=8192, layers=80, heads=64, kv_heads=8, intermediate=28672, vocab=32000),
}


def _llama_preset(name: str, seq_len: int) -> Graph:
    c = LLAMA_CONFIGS[name]
    return llama(c.hidden, c.layers, c.heads, c.kv_heads, c.intermediate, c.vocab, seq_len, name=name)


def _bert_preset(name: str, seq_len: int) -> Graph:
    return bert(BERT_CONFIGS[name], seq_len, name)


def _gpt2_preset(name: str, seq_len: int) -> Graph:
    return gpt2(GPT2_CONFIGS[name], seq_len, name)


MODELS: dict[str, Callable[[int], Graph]] = {
    **{n: partial(_bert_preset, n) for n in BERT_CONFIGS},
    **{n: partial(_gpt2_preset, n) for n in GPT2_CONFIGS},
    **{n: partial(_llama_preset, n) for n in LLAMA_CONFIGS},
}

__all__ = ["MODELS", "BertConfig", "GPT2Config", "LlamaConfig", "bert", "gpt2", "llama"]
