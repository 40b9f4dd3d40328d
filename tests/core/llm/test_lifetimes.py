"""What transformers' base model keeps referenced beyond the layer graph's last use (core/llm/lifetimes.py)."""

from dataclasses import replace

from advisor.core.estimate import estimate
from advisor.core.llm.decoder import DecoderSpec, MoESpec
from advisor.core.llm.graph import decoder_graph
from advisor.core.llm.lifetimes import held_until
from advisor.core.workload import Workload

SPEC = DecoderSpec("tiny", "llama", hidden=64, layers=2, heads=4, kv_heads=2, head_dim=16, intermediate=128,
                   vocab=1000, moe=MoESpec(4, 2, 128))


def test_the_layer_loop_holds_each_layer_input_until_the_layer_returns() -> None:
    graph = decoder_graph(SPEC, 128)
    names = [n.name for n in graph.nodes]
    held = [(names[node], names[release]) for node, release in held_until(graph)]
    assert held == [("embed_tokens", "lm_head"),  # inputs_embeds, a local of the base model
                    ("embed_tokens", "layers.1.input_layernorm"),  # layer 0's input, until layer 1 starts
                    ("layers.0.add_mlp", "norm")]  # layer 1's input, until the final norm


def test_inference_inside_an_moe_layer_still_holds_the_layer_input() -> None:
    graph, infer = decoder_graph(SPEC, 128), Workload("infer", 4, "amp_bf16")
    held, bare = (estimate(g, infer).memory for g in (graph, replace(graph, decoder=None)))
    assert held.peak_layer == "layers.1.mlp.experts"
    # the embedding output and layer 1's input, each batch 4 x 128 tokens x 64 hidden in fp32
    assert held.peak_bytes - bare.peak_bytes == 2 * 4 * 128 * 64 * 4
