"""GPT-2 and BERT zoo graphs as transformers runs them: Python locals that outlive their last reader, the
fused attention output read in place, and GELU's half-precision 0.5 * x, with the arithmetic written out."""

import pytest

from advisor.core.graph import Graph, GraphBuilder
from advisor.core.llm.lifetimes import held_until
from advisor.core.ops import Attention, Input, Linear
from advisor.core.ops.text_ops import GELUTanhComposite
from advisor.core.replay import replay_step
from advisor.core.step_plan import StepPlan
from advisor.core.workload import Workload
from advisor.core.zoo.text import BertConfig, GPT2Config, bert, gpt2

TINY_GPT2 = GPT2Config(hidden=64, layers=2, heads=4, vocab=1000, max_positions=128)


def test_gpt2_keeps_its_embeddings_and_block_locals_until_they_go_out_of_scope(monkeypatch: pytest.MonkeyPatch) -> None:
    # the plain graph without any held reference: not even the module calls' arguments of a hand-built graph
    monkeypatch.setattr(StepPlan, "held_references", lambda self: held_until(self.graph))
    graph = gpt2(TINY_GPT2, 128, "gpt2")
    names = [n.name for n in graph.nodes]
    # as for every decoder; (a, b): held until b has run, i.e. released as node b + 1 starts
    held = {(names[a], names[b + 1]) for a, b in held_until(graph) if b + 1 < len(names)}
    assert {
        ("wte", "lm_head"),
        ("wpe", "lm_head"),
        ("h.1.ln_1", "h.1.add_attn"),
        ("h.1.ln_2", "h.1.add_mlp"),
        ("h.1.attn.resid_dropout", "ln_f"),
    } <= held
    # inference at batch 4, fp32, right after h.1's GELU: besides what any order of freeing keeps, the wte
    # output 4*128*64*4 = 131,072 B and wpe's shared (1, 128, 64) rows 32,768 B are held, and so are block
    # 0's output, ln_2's and attn_output (131,072 B each); the base model also keeps its position ids,
    # (1, 128) int64 = 1,024 B (lifetimes.base_model_tensors), which the graph without a decoder lacks
    plain = type(graph)(graph.name, graph.nodes, graph.task)
    w = Workload("infer", 4, "fp32")

    def after_gelu(g: Graph) -> int:
        return next(p.total_bytes for p in replay_step(g, w).timeline if p.layer == "h.1.mlp.act")

    assert after_gelu(graph) - after_gelu(plain) == 131_072 * 4 + 32_768 + 1_024


def test_bert_keeps_its_embedding_output_through_the_encoder() -> None:
    graph = bert(BertConfig(hidden=64, layers=2, heads=4, intermediate=128, vocab=1000), 128, "bert")
    names = [n.name for n in graph.nodes]
    held = {(names[a], names[b] if b >= 0 else "") for a, b in graph.holds}
    assert ("embeddings.dropout", "pooler.activation") in held
    assert ("encoder.layer.1.output.LayerNorm", "classifier") in held


def _attention(**kw: bool) -> Graph:
    b = GraphBuilder("attn")
    x = b.add(Input((128, 64)), [])
    qkv = b.add(Linear(192), [x], "qkv")
    a = b.add(Attention(heads=4, **kw), [qkv], "sdpa")
    b.add(Linear(64), [a], "c_proj")
    return b.build()


def test_fused_attention_read_in_place_keeps_its_output_once() -> None:
    w = Workload("train", 2, "amp_bf16", "sgd")
    # read in place: the bf16 output 2*128*64*2 = 32,768 B, kept by the kernel and by c_proj, plus the
    # float32 log-sum-exp 2*4*128*4 = 4,096 B; with a copy, c_proj keeps the copy and the kernel its output
    assert replay_step(_attention(token_major=True), w).kept_bytes[2] == 32_768 + 4_096
    assert replay_step(_attention(), w).kept_bytes[2] == 2 * 32_768 + 4_096


def test_gelu_new_keeps_half_of_x_in_x_dtype() -> None:
    b = GraphBuilder("mlp")
    x = b.add(Input((128, 64)), [])
    h = b.add(Linear(256), [x], "c_fc")
    b.add(GELUTanhComposite(), [h], "act")
    kept = replay_step(b.build(), Workload("train", 2, "amp_bf16", "sgd")).kept_bytes
    # E = 2*128*256 = 65,536 elements: pow's float32 copy of x (4E), tanh's t and 1 + t in float32 (4E
    # each) and a = 0.5 * x in x's bf16 (2E)
    assert kept[2] == 65_536 * (4 + 4 + 4 + 2)


def test_gelu_new_without_autograd_holds_half_of_x_beside_its_result() -> None:
    b = GraphBuilder("mlp")
    x = b.add(Input((128, 64)), [])
    h = b.add(Linear(256), [x], "c_fc")
    b.add(GELUTanhComposite(), [h], "act")
    profile = replay_step(b.build(), Workload("infer", 2, "amp_bf16"))
    live = 0
    for key, size in profile.events:
        live += size
        if key[:2] == ("fwd_workspace", 2):
            break
    before = live - next(size for key, size in profile.events if key[:2] == ("fwd_workspace", 2))
    # E = 2*128*256 = 65,536: while the product is made, beside x (bf16, 2E), pow's float32 copy (4E) and the
    # float32 result (4E), a = 0.5 * x lives in x's bf16: 2E = 131,072 B more
    assert live - before == 2 * 65_536
