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
# Attention that splits q and k at the rotary width in its own body and concatenates the rotated part back
# (modeling_phi.py PhiAttention.forward: query_rot, query_pass = query_states[..., :rotary_ndims], ...; the
# same in modeling_stablelm.py, modeling_persimmon.py and modeling_gptj.py): the pass-through slices are
# views of q and k, and they and the rotated halves are locals until the attention returns, so the rotary
# inputs outlive the concatenation. Families that split inside apply_rotary_pos_emb (GPT-NeoX, GLM-4) free
# them as that function returns.
SPLITS_PARTIAL_ROTARY = frozenset({"phi", "stablelm", "persimmon", "gptj"})


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
            held += [(graph.nodes[k].inputs[0], module[-1]) for k in _split_rotaries(graph, module)]
    return held


def _split_rotaries(graph: Graph, module: list[int]) -> list[int]:
    """The rotary nodes of an attention module whose family splits q and k at a partial rotary width."""
    spec = graph.decoder
    if spec is None or spec.model_type not in SPLITS_PARTIAL_ROTARY or spec.rotary_width >= spec.head_dim:
        return []
    return [k for k in module if graph.nodes[k].op.kind == "rotary"]


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
    held = [
        HeldTensor("attention masks", embed, head, masks),
        HeldTensor("rotary cos and sin", embed, head, 2 * seq * spec.rotary_width * model),
        HeldTensor("position ids", embed, head, 8 * seq),
    ]
    if spec.eager_attention and not workload.training:  # training saves them anyway
        held += _returned_probabilities(graph, workload, head, seq)
    held += _rotated_halves(graph, workload)
    return [t for t in held if t.nbytes]


def _rotated_halves(graph: Graph, workload: Workload) -> list[HeldTensor]:
    """SPLITS_PARTIAL_ROTARY: the rotated part of q and k, a local until the attention module returns, in the
    rotary's dtype (fp32 under autocast: the fp32 cos/sin tables promote it)."""
    spec = graph.decoder
    assert spec is not None
    element = 4 if workload.amp else workload.param_dtype_bytes
    held = []
    for block, members in graph.blocks():
        for module in submodules(graph, block, members):
            for k in _split_rotaries(graph, module):
                numel = graph.nodes[k].output.numel * spec.rotary_width // spec.head_dim
                held.append(HeldTensor("rotated half", k, module[-1] + 1, numel * workload.batch * element))
    return held


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
        held.append(
            HeldTensor(
                "returned attention probabilities", sdpa, release, spec.heads * seq * columns * workload.batch * half
            )
        )
    return held
