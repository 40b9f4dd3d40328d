"""Tensors a transformers decoder keeps referenced by Python locals beyond their last use in the layer graph.

The layer graph frees a tensor after its last reader; the base model's forward (LlamaModel.forward and the
copies every family makes of it, transformers 5.x) holds some longer:
- `inputs_embeds` is a local until the base model returns, so the embedding output lives until the LM head;
- the layer loop `hidden_states = decoder_layer(hidden_states, ...)` keeps each layer's input referenced
  until the layer returns, so in inference (where nothing is saved for backward) a layer's input is still
  allocated at the worst moment of its MLP: batch x seq x hidden in the residual stream's dtype per layer;
- inside a layer, `hidden_states = self.mlp(hidden_states)` (and the same for self_attn) keeps the norm's
  output, the module's argument, referenced until the module returns, though its last reader in the graph
  is the first projection.
The graph's node names follow the module paths, so a module is the run of nodes named `<block>.<module>.*`.
"""

from __future__ import annotations

from advisor.core.graph import Graph


def held_until(graph: Graph) -> list[tuple[int, int]]:
    """(node, release) pairs of a decoder graph: node's output stays referenced until node `release` starts.
    Empty for graphs that are not transformers decoders."""
    names = [n.name for n in graph.nodes]
    if graph.decoder is None or "embed_tokens" not in names or "lm_head" not in names:
        return []
    held = [(names.index("embed_tokens"), names.index("lm_head"))]
    for block, members in graph.blocks():
        held += _held_arguments(graph, members)
        modules: dict[str, list[int]] = {}
        for k in members:
            module, dot, _ = graph.nodes[k].name.removeprefix(block + ".").partition(".")
            if dot:
                modules.setdefault(module, []).append(k)
        for module_members in modules.values():
            held += _held_arguments(graph, module_members)
    return [(node, release) for node, release in held if release < len(names)]


def _held_arguments(graph: Graph, members: list[int]) -> list[tuple[int, int]]:
    """The outside inputs of a module (a run of nodes), held until the module's last node has run."""
    inside = set(members)
    outside = {s for k in members for s in graph.nodes[k].inputs if s not in inside}
    return [(source, members[-1] + 1) for source in sorted(outside)]
