"""The transformer zoo: exact parameter counts, forward MACs against torch's FlopCounterMode, structure that
mirrors HuggingFace's modules, and errors that name the field."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from advisor.core.errors import SpecError
from advisor.core.graph import Graph, Node
from advisor.core.ops import GELU, Attention, CrossEntropy, Embedding, Input, Linear, Rotary
from advisor.core.ops.text_ops import GELUTanhComposite
from advisor.core.replay import replay_step
from advisor.core.workload import Precision, Workload
from advisor.core.zoo.text import MODELS, llama

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
FLOP_COUNTER = SHARED / "calibration" / "h200" / "torch_flop_counter.csv"


def macs(graph: Graph) -> int:
    return sum(n.op.forward_macs(graph.input_specs(n), n.output) for n in graph.nodes)


def with_loss(graph: Graph) -> Graph:
    last = len(graph.nodes) - 1
    op = CrossEntropy()
    spec = op.output_spec([graph.nodes[last].output], "loss")
    return Graph(graph.name, (*graph.nodes, Node("loss", op, (last,), spec)), graph.task)


def _bert(vocab: int, hidden: int, layers: int, inter: int) -> int:
    embeddings = vocab * hidden + 512 * hidden + 2 * hidden + 2 * hidden  # word, position, token type, LN
    layer = (
        4 * (hidden * hidden + hidden)  # query, key, value, attention.output.dense
        + (hidden * inter + inter)
        + (inter * hidden + hidden)  # intermediate.dense, output.dense
        + 2 * 2 * hidden
    )  # two LayerNorms
    pooler = hidden * hidden + hidden
    return embeddings + layers * layer + pooler


def _gpt2(hidden: int, layers: int) -> int:
    embeddings = 50257 * hidden + 1024 * hidden  # wte (also the tied lm_head, counted once), wpe
    layer = (
        2 * 2 * hidden  # ln_1, ln_2
        + (hidden * 3 * hidden + 3 * hidden)
        + (hidden * hidden + hidden)  # attn.c_attn, attn.c_proj
        + (hidden * 4 * hidden + 4 * hidden)
        + (4 * hidden * hidden + hidden)
    )  # mlp.c_fc, mlp.c_proj
    return embeddings + layers * layer + 2 * hidden  # + ln_f


def _llama(hidden: int, layers: int, heads: int, kv: int, inter: int, vocab: int) -> int:
    kv_width = kv * (hidden // heads)
    layer = 2 * hidden * hidden + 2 * hidden * kv_width + 3 * hidden * inter + 2 * hidden  # q,o k,v mlp norms
    return 2 * vocab * hidden + layers * layer + hidden  # embed_tokens + untied lm_head, layers, final norm


def test_bert_parameter_counts_are_exact() -> None:
    # bert-base: embeddings 23440896 + 393216 + 1536 + 1536 = 23837184;
    # layer 4 * 590592 + 2362368 + 2360064 + 3072 = 7087872, x12 = 85054464; pooler 590592 -> 109482240
    assert _bert(30522, 768, 12, 3072) == 109482240
    assert MODELS["bert-base"](128).param_count == 109482240 + (768 * 2 + 2)  # classifier: 1538 -> 109483778
    assert MODELS["bert-base"](128).param_count == 109483778
    # bert-large: embeddings 31254528 + 524288 + 2048 + 2048 = 31782912;
    # layer 4 * 1049600 + 4198400 + 4195328 + 4096 = 12596224, x24 = 302309376; pooler 1049600 -> 335141888
    assert _bert(30522, 1024, 24, 4096) == 335141888
    assert MODELS["bert-large"](128).param_count == 335141888 + (1024 * 2 + 2)  # classifier 2050 -> 335143938
    assert MODELS["bert-large"](128).param_count == 335143938


@pytest.mark.parametrize(
    ("name", "hidden", "layers", "expected"),
    [
        # gpt2: wte 38597376 + wpe 786432 + 12 * 7087872 + ln_f 1536
        ("gpt2", 768, 12, 124439808),
        # gpt2-medium: 51463168 + 1048576 + 24 * 12596224 + 2048
        ("gpt2-medium", 1024, 24, 354823168),
        # gpt2-large: 64328960 + 1310720 + 36 * 19677440 + 2560
        ("gpt2-large", 1280, 36, 774030080),
        # gpt2-xl: 80411200 + 1638400 + 48 * 30740800 + 3200
        ("gpt2-xl", 1600, 48, 1557611200),
    ],
)
def test_gpt2_parameter_counts_are_exact(name: str, hidden: int, layers: int, expected: int) -> None:
    assert _gpt2(hidden, layers) == expected
    assert MODELS[name](1024).param_count == expected


def test_llama_parameter_counts_are_exact() -> None:
    # llama-7b: 2 * 32000 * 4096 = 262144000; layer 2*4096^2 + 2*4096*4096 + 3*4096*11008 + 8192 = 202383360,
    # x32 = 6476267520; + norm 4096 -> 6738415616
    assert _llama(4096, 32, 32, 32, 11008, 32000) == 6738415616
    assert MODELS["llama-7b"](16).param_count == 6738415616
    # tinyllama-1.1b: 2 * 32000 * 2048 = 131072000; kv width 4 * 64 = 256;
    # layer 2*2048^2 + 2*2048*256 + 3*2048*5632 + 4096 = 44044288, x22 = 968974336; + norm 2048 -> 1100048384
    assert _llama(2048, 22, 32, 4, 5632, 32000) == 1100048384
    assert MODELS["tinyllama-1.1b"](16).param_count == 1100048384
    # llama-13b: 2 * 32000 * 5120 = 327680000; layer 4*5120^2 + 3*5120*13824 + 10240 = 317204480, x40 =
    # 12688179200; + norm 5120 -> 13015864320 (LLaMA's 13.0B)
    assert _llama(5120, 40, 40, 40, 13824, 32000) == 13015864320
    assert MODELS["llama-13b"](16).param_count == 13015864320
    # llama-2-70b: 2 * 32000 * 8192 = 524288000; kv width 8 * 128 = 1024; layer 2*8192^2 + 2*8192*1024 +
    # 3*8192*28672 + 16384 = 855654400, x80 = 68452352000; + norm 8192 -> 68976648192 (Llama 2's 69.0B)
    assert _llama(8192, 80, 64, 8, 28672, 32000) == 68976648192
    assert MODELS["llama-2-70b"](16).param_count == 68976648192


# FlopCounterMode at batch 1 (../shared/calibration/h200/torch_flop_counter.csv): fwd_flops = 2 x MACs.
# bert-base@128: per layer 128 * (4*768*768 + 2*768*3072) = 905969664 linear + 2*12*128*128*64 = 25165824
#   attention -> 931135488, x12 = 11173625856; pooler 768*768 = 589824; classifier 768*2 = 1536
#   -> 11174217216 MACs = 22348434432 FLOPs.
# gpt2@1024: per layer 1024 * (768*2304 + 768*768 + 2*768*3072) = 7247757312 + 2*12*1024*1024*64 = 1610612736
#   -> 8858370048, x12 = 106300440576; lm_head 1024*768*50257 = 39523713024 -> 145824153600 MACs.
#   (The counter counts causal attention in full, as the Attention op does.)
REFERENCE_FWD_FLOPS = {("bert-base", 128): 22348434432, ("gpt2", 1024): 291648307200}


@pytest.mark.parametrize(("name", "seq_len"), list(REFERENCE_FWD_FLOPS))
def test_forward_macs_match_torch_flop_counter(name: str, seq_len: int) -> None:
    reference = REFERENCE_FWD_FLOPS[(name, seq_len)]
    assert macs(MODELS[name](seq_len)) == pytest.approx(reference / 2, rel=0.01)
    assert {"bert-base": 11174217216, "gpt2": 145824153600}[name] == reference // 2


def test_reference_numbers_agree_with_the_shared_file() -> None:
    if not FLOP_COUNTER.exists():
        pytest.skip("shared calibration data not present")
    with FLOP_COUNTER.open() as fh:
        rows = {r["model"]: r for r in csv.DictReader(fh)}
    for (name, seq_len), flops in REFERENCE_FWD_FLOPS.items():
        row = rows[f"hf:{name}@{seq_len}"]
        assert int(row["fwd_flops"]) == flops
        assert int(row["n_params"]) == MODELS[name](seq_len).param_count


@pytest.mark.parametrize(
    ("name", "limit"), [("bert-base", 512), ("bert-large", 512), ("gpt2", 1024), ("gpt2-xl", 1024)]
)
def test_seq_len_beyond_the_position_table_is_an_error(name: str, limit: int) -> None:
    with pytest.raises(SpecError, match=r"seq_len.*max_position_embeddings.*got seq_len") as err:
        MODELS[name](limit + 1)
    assert str(limit) in str(err.value)
    with pytest.raises(SpecError, match="seq_len"):
        MODELS[name](0)


def test_every_sequence_length_up_to_the_maximum_builds() -> None:
    for name, limit in (("bert-base", 512), ("gpt2", 1024)):
        for seq_len in range(1, limit + 1):
            graph = MODELS[name](seq_len)
            assert graph.nodes[0].output.shape == (seq_len,)
    for name in MODELS:
        for seq_len in (1, 2, 512):
            MODELS[name](seq_len)


@pytest.mark.parametrize("name", list(MODELS))
def test_names_are_unique_and_the_input_is_token_ids(name: str) -> None:
    graph = MODELS[name](64)
    names = [n.name for n in graph.nodes]
    assert len(names) == len(set(names))
    first = graph.nodes[0]
    assert isinstance(first.op, Input) and first.op.shape == (64,) and first.output.dtype == "int64"
    assert not any(isinstance(n.op, CrossEntropy) for n in graph.nodes)  # the estimator appends the loss


def test_bert_is_a_two_label_sequence_classifier() -> None:
    graph = MODELS["bert-base"](128)
    assert graph.task == "classification"
    assert graph.nodes[-1].name == "classifier" and graph.nodes[-1].output.shape == (2,)
    assert [name for name, _ in graph.blocks()] == [f"encoder.layer.{i}" for i in range(12)]
    kinds = {n.name.split(".")[-1]: n.op for n in graph.nodes if n.block == "encoder.layer.0"}
    assert isinstance(kinds["sdpa"], Attention) and kinds["sdpa"].dropout == 0.1 and not kinds["sdpa"].causal
    act = kinds["intermediate_act_fn"]
    assert isinstance(act, GELU) and act.approximate == "none"
    embeddings = {n.name: n for n in graph.nodes if isinstance(n.op, Embedding)}
    assert embeddings["embeddings.position_embeddings"].output.batched is False  # (1, seq) buffer: shared
    assert embeddings["embeddings.token_type_embeddings"].output.batched is True  # expanded to the batch


def test_gpt2_is_a_tied_language_model_with_the_python_gelu() -> None:
    graph = MODELS["gpt2"](1024)
    assert graph.task == "language_model"
    head = graph.nodes[-1]
    assert isinstance(head.op, Linear) and head.op.tied_to == "wte" and not head.op.bias
    assert head.output.shape == (1024, 50257)
    assert any(n.name == "wte" for n in graph.nodes)
    block = {n.name: n.op for n in graph.nodes if n.block == "h.0"}
    assert isinstance(block["h.0.mlp.act"], GELUTanhComposite)
    sdpa = block["h.0.attn.sdpa"]
    assert isinstance(sdpa, Attention) and sdpa.causal and sdpa.dropout == 0.1
    assert len(graph.blocks()) == 12


def test_llama_layers_use_rotary_grouped_query_attention_and_an_untied_head() -> None:
    graph = MODELS["tinyllama-1.1b"](256)
    block = {n.name: n for n in graph.nodes if n.block == "layers.0"}
    assert isinstance(block["layers.0.self_attn.rotary_q"].op, Rotary)
    assert block["layers.0.self_attn.k_proj"].output.shape == (256, 256)  # 4 kv heads x 64
    sdpa = block["layers.0.self_attn.sdpa"].op
    assert isinstance(sdpa, Attention) and sdpa.kv_heads == 4 and sdpa.causal
    head = graph.nodes[-1]
    assert isinstance(head.op, Linear) and not head.op.tied_to and head.output.shape == (256, 32000)
    assert graph.task == "language_model"


def test_llama_rejects_heads_that_do_not_divide() -> None:
    with pytest.raises(SpecError, match="kv_heads"):
        llama(4096, 2, 32, 5, 11008, 32000, 16)
    with pytest.raises(SpecError, match="seq_len"):
        llama(512, 2, 8, 8, 1024, 1000, 0)


def test_gelu_new_keeps_its_input_and_three_intermediates() -> None:
    graph = MODELS["gpt2"](1024)
    act = next(i for i, n in enumerate(graph.nodes) if n.name == "h.0.mlp.act")
    node = graph.nodes[act]
    saved = node.op.extra_saved(graph.input_specs(node), node.output, True)
    assert [s.numel for s in saved] == [1024 * 3072] * 3
    profile = replay_step(with_loss(graph), Workload(batch=1, precision="fp32", optimizer="adamw"))
    assert profile.kept_bytes[act] == 4 * 1024 * 3072 * 4  # x (kept by pow), tanh(.), 0.5*x, 1 + tanh(.)


@pytest.mark.parametrize("precision", ["fp32", "amp_bf16", "bf16"])
def test_a_training_step_simulates(precision: Precision) -> None:
    for name in ("bert-base", "gpt2", "tinyllama-1.1b"):
        graph = with_loss(MODELS[name](128))
        workload = Workload(batch=2, precision=precision, optimizer="adamw", checkpointing=True)
        profile = replay_step(graph, workload)
        assert profile.peak_bytes > graph.param_count * 2
