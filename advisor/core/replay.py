"""The analytic replay of one step, told what the model's family and storage format say.

core/memory.py replays any layer graph and knows no model family; what a decoder language model adds (its
weights in a quantized storage format, the tensors transformers' Python code keeps alive) comes from
core/llm: the stored weights on each node (Node.stored), the tensor lifetimes as ModelFacts, both built here.
"""

from __future__ import annotations

from dataclasses import replace

from advisor.core.graph import Graph, StoredWeights
from advisor.core.llm.lifetimes import base_model_tensors, held_until
from advisor.core.llm.quant import (
    dequantized_per_matmul,
    exact_scale,
    plain_dtype_bytes,
    quantized_matrices,
    require_experts,
    stored_bytes,
)
from advisor.core.memory import StepReplay
from advisor.core.step_plan import StepPlan
from advisor.core.step_records import MemoryProfile, ModelFacts
from advisor.core.workload import WeightFormat, Workload


def stored_graph(graph: Graph, workload: Workload) -> Graph:
    """`graph` with each node's weights as the workload's storage format keeps them when they do not train."""
    w, fmt = workload, workload.weight_format
    require_experts(fmt, [node.op for node in graph.nodes], graph.name)
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
    nodes = tuple(
        replace(
            node,
            stored=StoredWeights(
                round(b * scale),
                dequantized_per_matmul(node.op, node.name, fmt),
                # bitsandbytes' MatMul8bitLt multiplies the int8 weights of the layers it quantized as they are
                int8_matmul=fmt == WeightFormat.INT8
                and bool(quantized_matrices(node.op, graph.input_specs(node), node.name)),
            ),
        )
        for node, b in zip(graph.nodes, stored, strict=True)
    )
    return replace(graph, nodes=nodes)


def model_facts(graph: Graph, workload: Workload) -> ModelFacts:
    return ModelFacts(
        held_references=tuple(held_until(graph)),
        extra_tensors=tuple(base_model_tensors(graph, workload)),
    )


def step_plan(graph: Graph, workload: Workload) -> StepPlan:
    """What the replay of one step of `graph` replays (its checkpointed blocks, which outputs need a gradient)."""
    return StepPlan.of(stored_graph(graph, workload), workload, model_facts(graph, workload))


def replay_step(graph: Graph, workload: Workload) -> MemoryProfile:
    """Every allocation and free of one step of `graph`, replayed analytically."""
    return StepReplay(step_plan(graph, workload)).run()
