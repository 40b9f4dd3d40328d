"""The graph a step runs: training adds a loss head the user's network (and the zoo) does not have."""

from __future__ import annotations

from advisor.core.graph import Graph, GraphBuilder
from advisor.core.llm.fused_loss import with_fused_loss
from advisor.core.llm.graph import with_attention, with_repeated_kv
from advisor.core.llm.lora import with_adapters
from advisor.core.ops.loss import CrossEntropy
from advisor.core.workload import LossImpl, TransformersRelease, Workload


def with_loss_head(graph: Graph, release: TransformersRelease = TransformersRelease.V5) -> Graph:
    """Training needs a loss: cross-entropy on the model's output (the estimator adds it, the zoo does not).
    Language models upcast the logits to fp32 first, as transformers' loss functions do; up to 4.45 the
    model's output keeps that fp32 copy (CrossEntropy.output_keeps_upcast)."""
    if graph.nodes[-1].op.kind == "cross_entropy":
        return graph
    language = graph.task == "language_model"
    loss = CrossEntropy(upcast=language, output_keeps_upcast=language and release == TransformersRelease.V4_45)
    builder = GraphBuilder.copy_of(graph)
    builder.add(loss, [len(graph.nodes) - 1], "loss")
    return builder.build()


def step_graph(graph: Graph, workload: Workload) -> Graph:
    """The graph one step of `workload` runs: with the loss head when training, as it is for inference.
    Every memory figure (estimate, curves, make-it-fit) goes through this, so none can forget the head, the
    attention implementation the workload names or its LoRA adapters (the ranking's curves once replayed a
    LoRA step as a full fine-tune, so the largest batch disagreed with the estimate by half)."""
    graph = with_attention(graph, workload)
    if workload.training and workload.transformers_version == TransformersRelease.V4_45:
        graph = with_repeated_kv(graph)
    if workload.adapters:
        graph = with_adapters(graph, workload)
    if workload.training and workload.loss == LossImpl.FUSED:
        graph = with_fused_loss(graph)
    return with_loss_head(graph, workload.transformers_version) if workload.training else graph
