"""The analytic replay of one step, told what the model's family and storage format say.

core/memory.py replays any layer graph and knows no model family; what a decoder language model adds (its
weights in a quantized storage format, the tensors transformers' Python code keeps alive) comes from
core/llm and reaches the replay as ModelFacts, built here.
"""

from __future__ import annotations

from advisor.core.graph import Graph
from advisor.core.llm.lifetimes import base_model_tensors, held_until
from advisor.core.llm.quant import exact_scale, plain_dtype_bytes, quantized_matrices, stored_bytes
from advisor.core.memory import StepReplay
from advisor.core.ops.linear import Linear
from advisor.core.step_records import MemoryProfile, ModelFacts
from advisor.core.workload import Workload


def model_facts(graph: Graph, workload: Workload) -> ModelFacts:
    w, fmt = workload, workload.weight_format
    plain = plain_dtype_bytes(fmt, w.kbit_prepared)
    stored = [
        stored_bytes(node.op, graph.input_specs(node), node.name, fmt, w.trainable_dtype_bytes, plain)
        for node in graph.nodes
    ]
    # a checkpoint whose tensor table was read (GGUF) stores exactly its file's bytes: the layers' described
    # bytes are scaled to that total
    spec = graph.decoder
    exact = spec is not None and spec.stored is not None and spec.stored.exact_for(fmt)
    scale = exact_scale(spec, fmt, sum(stored)) if exact else 1.0
    # bitsandbytes' MatMul4Bit dequantizes an nf4 weight to 16 bit in forward and again in backward; the LM
    # head stays 16-bit (core/llm/quant.py)
    dequantizes = tuple(isinstance(node.op, Linear) and fmt == "nf4" and node.name != "lm_head" for node in graph.nodes)
    int8 = (i for i, n in enumerate(graph.nodes) if quantized_matrices(n.op, graph.input_specs(n), n.name))
    return ModelFacts(
        stored_weight_bytes=tuple(round(b * scale) for b in stored),
        dequantizes=dequantizes,
        held_references=tuple(held_until(graph)),
        extra_tensors=tuple(base_model_tensors(graph, workload)),
        int8_matmuls=frozenset(int8) if fmt == "int8" else frozenset(),
    )


def step_replay(graph: Graph, workload: Workload) -> StepReplay:
    return StepReplay(graph, workload, model_facts(graph, workload))


def replay_step(graph: Graph, workload: Workload) -> MemoryProfile:
    """Every allocation and free of one step of `graph`, replayed analytically."""
    return step_replay(graph, workload).run()
