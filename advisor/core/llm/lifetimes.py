"""Tensors a transformers decoder keeps referenced by Python locals beyond their last use in the layer graph.

The layer graph frees a tensor after its last reader; the base model's forward (LlamaModel.forward and the
copies every family makes of it, transformers 5.x) holds some longer:
- `inputs_embeds` (and GPT-2's and OPT's position embeddings) are locals until the base model returns, so
  the embedding outputs live until the LM head;
- the layer loop `hidden_states = decoder_layer(hidden_states, ...)` keeps each layer's input referenced
  until the layer returns, so in inference (where nothing is saved for backward) a layer's input is still
  allocated at the worst moment of its MLP: batch x seq x hidden in the residual stream's dtype per layer;
- inside a layer, `hidden_states = self.mlp(hidden_states)` (and the same for self_attn) keeps the norm's
  output, the module's argument, referenced until the module returns, though its last reader in the graph
  is the first projection.
The graph's node names follow the module paths, so a module is the run of nodes named `<block>.<module>.*`.
"""

from __future__ import annotations

from dataclasses import dataclass

from advisor.core.call_frames import held_arguments, submodules
from advisor.core.graph import Graph
from advisor.core.workload import Workload

# Blocks that bind the attention module's output to a local that nothing reassigns (GPT2Block,
# GPTBigCodeBlock: attn_output; FalconDecoderLayer: attention_output), so it lives until the block returns.
KEEPS_ATTENTION_OUTPUT = frozenset({"gpt2", "gpt_bigcode", "falcon"})


def held_until(graph: Graph) -> list[tuple[int, int]]:
    """Graph.holds pairs (node, until) of a decoder graph: node's output stays referenced until node `until`
    has run (the last node: to the end of the forward pass). Empty for graphs that are not transformers
    decoders."""
    names = [n.name for n in graph.nodes]
    if graph.decoder is None or "lm_head" not in names:
        return []
    head, last = names.index("lm_head"), len(names) - 1
    # inputs_embeds (and GPT-2's, OPT's position_embeds): locals of the base model until it returns
    held = [(i, head - 1) for i, n in enumerate(graph.nodes) if n.op.kind == "embedding" and not n.block]
    # LlamaForCausalLM.forward: hidden_states (the final norm's output) is a local through the LM head, the
    # logits scaling and the loss, to the end of the forward
    held += [(source, last) for source in graph.nodes[head].inputs]
    for block, members in graph.blocks():
        held += held_arguments(graph, members)
        for module in submodules(graph, block, members):
            held += held_arguments(graph, module)
            attention = any(graph.nodes[k].op.kind == "attention" for k in module)
            if attention and graph.decoder.model_type in KEEPS_ATTENTION_OUTPUT:
                held.append((module[-1], members[-1]))
    return held


# BloomAttention returns its half attention probabilities whatever output_attentions says, BloomBlock passes
# them on, and BloomModel's loop keeps the block's `outputs` tuple until the next block returns. The other
# eager families' layers unpack `hidden_states, _ = self.self_attn(...)`: `_` keeps the probabilities (the
# half copy; in fp32 the softmax itself, of which the sink-less slice is a view) until the layer returns.
RETURNS_ATTENTION_PROBS = frozenset({"bloom"})


@dataclass(frozen=True)
class HeldTensor:
    """A tensor of the base model that no layer of the graph produces (masks, rotary tables, returned
    attention probabilities): allocated once node `after` has run, freed before node `release` starts
    (release = the node count: at the end of the forward pass)."""

    what: str
    after: int
    release: int
    nbytes: int


def base_model_tensors(graph: Graph, workload: Workload) -> list[HeldTensor]:
    """What LlamaModel.forward and its copies build before the layer loop and keep until they return: the
    attention masks (masking_utils), the rotary cos/sin tables (position_ids is (1, seq): one table for the
    whole batch, in the hidden states' dtype) and the position ids; and BLOOM's returned probabilities."""
    spec, names = graph.decoder, [n.name for n in graph.nodes]
    if spec is None or "lm_head" not in names:
        return []
    embed = next(i for i, n in enumerate(graph.nodes) if n.op.kind == "embedding")
    head, seq, model = names.index("lm_head"), graph.nodes[embed].output.shape[0], workload.param_dtype_bytes
    masks = spec.eager_mask_elements(seq) * workload.batch * model + spec.sdpa_mask_bytes(seq)
    held = [HeldTensor("attention masks", embed, head, masks),
            HeldTensor("rotary cos and sin", embed, head, 2 * seq * spec.rotary_width * model),
            HeldTensor("position ids", embed, head, 8 * seq)]
    if spec.eager_attention and not workload.training:  # training saves them anyway
        held += _returned_probabilities(graph, workload, head, seq)
    return [t for t in held if t.nbytes]


def _returned_probabilities(graph: Graph, workload: Workload, head: int, seq: int) -> list[HeldTensor]:
    """Eager attention's probabilities, held by the layer (BLOOM: by the model's loop, one block longer)."""
    spec = graph.decoder
    assert spec is not None
    half = 2 if workload.amp else workload.param_dtype_bytes
    columns = seq + 1 if spec.attention_sinks and not workload.amp else seq  # fp32: a view of the softmax
    blocks = [members for _, members in graph.blocks()]
    held = []
    for k, members in enumerate(blocks):
        sdpa = next(i for i in members if graph.nodes[i].op.kind == "attention")
        release = members[-1] + 1
        if spec.model_type in RETURNS_ATTENTION_PROBS:
            release = blocks[k + 1][-1] + 1 if k + 1 < len(blocks) else head
        held.append(HeldTensor("returned attention probabilities", sdpa, release,
                               spec.heads * seq * columns * workload.batch * half))
    return held
