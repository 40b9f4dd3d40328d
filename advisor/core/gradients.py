"""Which parameters train and which layer outputs autograd tracks: one rule for the memory replay
(core.memory), the per-layer backward FLOPs (core.estimate.layer_rows) and everything built on them."""

from __future__ import annotations

from collections.abc import Sequence

from advisor.core.graph import Graph, TensorSpec
from advisor.core.ops.base import Op
from advisor.core.ops.embedding import Embedding
from advisor.core.ops.linear import Linear
from advisor.core.workload import Finetune, Workload


def trainable_params(op: Op, inputs: Sequence[TensorSpec], workload: Workload) -> int:
    """Parameters that get gradients and optimizer state: all of them in full fine-tuning, only the LoRA
    adapters when the base model is frozen (PEFT sets requires_grad=False on every base weight)."""
    return op.adapter_count(inputs) if workload.finetune != Finetune.FULL else op.param_count(inputs)


def trained_tensors(op: Op, inputs: Sequence[TensorSpec], workload: Workload) -> list[tuple[int, int]]:
    """(rows, cols) of each tensor of a layer that trains (cols 1 for a vector), for optimizers whose state
    depends on the tensor's shape or size (core/optimizers.py)."""
    if workload.finetune != Finetune.FULL:
        return op.adapter_tensors(inputs)
    if isinstance(op, Linear):
        weight = [] if op.tied_to else [(op.out_features, inputs[0].shape[-1])]
        return weight + ([(op.out_features, 1)] if op.bias else [])
    if isinstance(op, Embedding):
        return [(op.num_embeddings, op.embedding_dim)]
    numel = trainable_params(op, inputs, workload)
    return [(numel, 1)] if numel else []


def trainable_count(graph: Graph, workload: Workload) -> int:
    """Parameters the step computes gradients for (a tied weight once: its second user counts none); 0
    outside training."""
    if not workload.training:
        return 0
    return sum(trainable_params(n.op, graph.input_specs(n), workload) for n in graph.nodes)


def requires_grad(graph: Graph, workload: Workload) -> tuple[bool, ...]:
    """Per node: does autograd track its output? Only floating-point tensors can require grad; a node's
    output does when the node has trainable parameters (or a weight tied to a trained one, as GPT-2's LM head
    reuses the token embedding) or any input does (torch's requires_grad propagation)."""
    full = workload.finetune == Finetune.FULL
    flags: list[bool] = []
    for node in graph.nodes:
        inputs = graph.input_specs(node)
        tied = full and bool(getattr(node.op, "tied_to", ""))
        own = tied or trainable_params(node.op, inputs, workload) > 0
        flags.append(node.output.dtype == "float" and (own or any(flags[s] for s in node.inputs)))
    return tuple(flags)
