"""What transformers' base model keeps referenced beyond the layer graph's last use (core/llm/lifetimes.py)."""

from dataclasses import replace

import pytest

from advisor.core.analytic import estimate
from advisor.core.graph import Graph
from advisor.core.llm.decoder import DecoderSpec, MoESpec
from advisor.core.llm.graph import decoder_graph
from advisor.core.llm.lifetimes import held_until
from advisor.core.replay import replay_step
from advisor.core.step_plan import StepPlan
from advisor.core.workload import Workload

SPEC = DecoderSpec(
    "tiny",
    "llama",
    hidden=64,
    layers=2,
    heads=4,
    kv_heads=2,
    head_dim=16,
    intermediate=128,
    vocab=1000,
    moe=MoESpec(4, 2, 128),
)


def test_layer_and_module_arguments_are_held_until_they_return() -> None:
    graph = decoder_graph(SPEC, 128)
    names = [n.name for n in graph.nodes]
    # (node, until): held until `until` has run, i.e. released as the next node starts
    held = [(names[node], names[until + 1] if until + 1 < len(names) else "end") for node, until in held_until(graph)]
    assert held == [
        ("embed_tokens", "lm_head"),  # inputs_embeds, a local of the base model
        ("norm", "end"),  # hidden_states of the ForCausalLM forward, through the LM head and loss
        ("embed_tokens", "layers.1.input_layernorm"),  # layer 0's input, until layer 1 starts
        ("layers.0.input_layernorm", "layers.0.add_attn"),  # self_attn's argument
        ("layers.0.post_attention_layernorm", "layers.0.add_mlp"),  # the mlp's argument
        ("layers.0.add_mlp", "norm"),  # layer 1's input, until the final norm
        ("layers.1.input_layernorm", "layers.1.add_attn"),
        ("layers.1.post_attention_layernorm", "layers.1.add_mlp"),
    ]


def test_inference_inside_an_moe_layer_still_holds_the_layer_input(monkeypatch: pytest.MonkeyPatch) -> None:
    # the bare graph without any held reference: not even the module calls' arguments of a hand-built graph
    monkeypatch.setattr(StepPlan, "held_references", lambda self: held_until(self.graph))
    graph, infer = decoder_graph(SPEC, 128), Workload("infer", 4, "amp_bf16")
    held, bare = (estimate(g, infer).memory for g in (graph, replace(graph, decoder=None)))
    assert held.peak_layer == "layers.1.mlp.experts"
    # the embedding output and layer 1's input, each batch 4 x 128 tokens x 64 hidden in fp32, and the base
    # model's rotary cos and sin (2 x 128 x 16 head dims in fp32) and position ids (128 x int64)
    assert held.peak_bytes - bare.peak_bytes == 2 * 4 * 128 * 64 * 4 + 2 * 128 * 16 * 4 + 128 * 8


def test_a_dense_mlp_keeps_its_norm_input_to_the_down_projection() -> None:
    graph = decoder_graph(replace(SPEC, moe=None), 128)
    m = replay_step(graph, Workload("infer", 4, "amp_bf16"))
    names = [n.name for n in graph.nodes]
    norm, down = names.index("layers.1.post_attention_layernorm"), names.index("layers.1.mlp.down_proj")
    frees = [i for i, (key, size) in enumerate(m.events) if key == ("out", norm, 0) and size < 0]
    down_alloc = next(i for i, (key, size) in enumerate(m.events) if key == ("out", down, 0) and size > 0)
    # the norm's fp32 output (4 x 128 tokens x 64 hidden x 4 bytes) is freed after down_proj, not after up_proj
    assert len(frees) == 1 and frees[0] > down_alloc
    assert m.events[frees[0]][1] == -4 * 128 * 64 * 4


def test_gpt2_blocks_keep_the_attention_output_and_both_embeddings() -> None:
    from advisor.core.zoo.text import GPT2Config, gpt2

    graph = gpt2(GPT2Config(64, 2, 4, 1000, 256, 0.1), 128, "gpt2")
    graph = replace(graph, decoder=replace(SPEC, model_type="gpt2", moe=None))
    names = [n.name for n in graph.nodes]
    held = {(names[node], names[until + 1]) for node, until in held_until(graph) if until + 1 < len(names)}
    # GPT2Model: inputs_embeds and position_embeds are locals to the end; GPT2Block: attn_output
    assert {
        ("wte", "lm_head"),
        ("wpe", "lm_head"),
        ("h.0.attn.resid_dropout", "h.1.ln_1"),
        ("h.1.attn.resid_dropout", "ln_f"),
    } <= held


def test_a_sliding_window_shorter_than_the_sequence_needs_a_boolean_sdpa_mask() -> None:
    windowed = replace(SPEC, sliding_window=64)
    assert windowed.sdpa_mask_bytes(128) == 128 * 128  # seq x seq bools, broadcast over the batch
    assert windowed.sdpa_mask_bytes(32) == 0  # the window covers the sequence: the causal kernel suffices
    assert SPEC.sdpa_mask_bytes(128) == 0


def test_rotary_tables_cover_the_rotated_dims_only() -> None:
    from advisor.core.llm.families import decoder_from_config

    base = {
        "model_type": "gpt_neox",
        "hidden_size": 64,
        "num_attention_heads": 4,
        "num_hidden_layers": 2,
        "intermediate_size": 128,
        "vocab_size": 1000,
    }
    neox = decoder_from_config({**base, "rotary_pct": 0.25}, "neox")
    five = decoder_from_config({**base, "rope_parameters": {"partial_rotary_factor": 0.5}}, "neox")
    assert neox is not None and five is not None
    assert (neox.rotary_width, five.rotary_width) == (16 // 4, 16 // 2)  # head_dim 64 / 4 heads = 16
    assert replace(SPEC, learned_positions=256).rotary_width == 0


def _probabilities(model_type: str, mode: str) -> list[tuple[int, str, str]]:
    """(bytes, allocated after, freed before) of the eager probabilities the base model tensors hold."""
    from advisor.core.llm.lifetimes import base_model_tensors

    graph = decoder_graph(replace(SPEC, model_type=model_type, moe=None, eager_attention=True), 128)
    names = [*(n.name for n in graph.nodes), "end"]
    return [
        (t.nbytes, names[t.after], names[t.release])
        for t in base_model_tensors(graph, Workload(mode, 4, "amp_bf16"))
        if "probabilities" in t.what
    ]


def test_bloom_keeps_the_previous_block_probabilities_in_inference() -> None:
    # heads x seq x seq x batch, bf16: 4 x 128 x 128 x 4 x 2 bytes, per layer, until the next block returns
    probs = 4 * 128 * 128 * 4 * 2
    assert _probabilities("bloom", "infer") == [
        (probs, "layers.0.self_attn.sdpa", "norm"),
        (probs, "layers.1.self_attn.sdpa", "lm_head"),
    ]
    assert not _probabilities("bloom", "train")  # saved for backward anyway


def test_eager_layers_keep_their_returned_probabilities_until_they_return() -> None:
    # `hidden_states, _ = self.self_attn(...)`: the half copy, 4 heads x 128 x 128 x batch 4 x 2 bytes
    probs = 4 * 128 * 128 * 4 * 2
    assert _probabilities("gemma2", "infer") == [
        (probs, "layers.0.self_attn.sdpa", "layers.1.input_layernorm"),
        (probs, "layers.1.self_attn.sdpa", "norm"),
    ]


def test_phi_keeps_the_rotary_inputs_and_the_rotated_halves_until_its_attention_returns() -> None:
    """PhiAttention splits q and k at the rotary width and concatenates the rotated part back: the slices'
    storage (the projections) and the rotated halves live until the attention returns, past the sdpa."""
    phi = replace(SPEC, model_type="phi", moe=None, rotary_dim=8)  # half of each 16-dim head rotates
    llama = replace(phi, model_type="llama")  # the same shapes, rotation inside apply_rotary_pos_emb
    graph, infer = decoder_graph(phi, 128), Workload("infer", 4, "fp32")
    names = [n.name for n in graph.nodes]
    sdpa, o_proj = names.index("layers.1.self_attn.sdpa"), names.index("layers.1.self_attn.o_proj")
    held = [(names[node], names[until]) for node, until in held_until(graph)]
    assert ("layers.1.self_attn.q_proj", "layers.1.self_attn.o_proj") in held
    assert ("layers.1.self_attn.k_proj", "layers.1.self_attn.o_proj") in held

    def at_sdpa(g: Graph) -> int:
        return next(p.total_bytes for p in replay_step(g, infer).timeline if p.layer == names[sdpa])

    # batch 4 x 128 tokens, fp32: q 64 wide (131,072 B) and k 32 wide (65,536 B) still held, and the rotated
    # halves, 32 and 16 wide (65,536 + 32,768 B): 294,912 B more than where the split is inside the helper
    assert at_sdpa(graph) - at_sdpa(decoder_graph(llama, 128)) == 131_072 + 65_536 + 65_536 + 32_768
    assert o_proj > sdpa
