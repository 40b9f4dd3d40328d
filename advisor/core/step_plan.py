"""What one step's replay replays, fixed before its first allocation: the layer graph with each op at the
dtype it computes in, and the facts every phase of the replay (core/memory.py) asks of a node.

Immutable: the replay's own state (what is allocated, who holds it) is core/memory.py StepReplay's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from advisor.core.call_frames import module_arguments
from advisor.core.gradients import requires_grad, trainable_params
from advisor.core.graph import Graph, Node, TensorSpec
from advisor.core.offload import gpu_weight_dtype_bytes
from advisor.core.ops.linear import Linear
from advisor.core.ops.loss import CrossEntropy
from advisor.core.step_dtypes import cast_bytes, element_bytes
from advisor.core.step_records import ExtraTensor, ModelFacts
from advisor.core.workload import Finetune, Offload, WeightFormat, Workload

SAVED_BYTES = {"float32": 4, "int64": 8, "bool": 1, "autocast_float32": 4}


@dataclass(frozen=True)
class StepPlan:
    """graph and workload as given; nodes: the graph's, each op as CUDA runs it at its compute dtype (fp32
    grouped-query attention takes the math path); specs: per node, its inputs' tensors; dtype: per node, the
    bytes per element of its output; blocks: the checkpointed segments (none unless training with
    checkpointing); outputs: the nodes whose results the caller keeps referenced until the step ends (the
    model's output, and the loss's inputs); facts: what the model's family adds (core/replay.py)."""

    graph: Graph
    workload: Workload
    facts: ModelFacts
    nodes: tuple[Node, ...]
    specs: tuple[tuple[TensorSpec, ...], ...]
    consumers: tuple[tuple[int, ...], ...]
    dtype: tuple[int, ...]
    requires_grad: tuple[bool, ...]
    blocks: tuple[tuple[int, ...], ...]
    outputs: frozenset[int]

    @classmethod
    def of(cls, graph: Graph, workload: Workload, facts: ModelFacts) -> StepPlan:
        specs = tuple(tuple(graph.input_specs(n)) for n in graph.nodes)
        consumers = tuple(tuple(users) for users in graph.consumers())
        dtype = tuple(element_bytes(graph.nodes, specs, workload))
        nodes = tuple(replace(n, op=n.op.for_dtype(d, workload.amp)) for n, d in zip(graph.nodes, dtype, strict=True))
        checkpointed = workload.checkpointing and workload.training
        # the caller keeps the model's output (and the loss) referenced until the step ends, unless its loop
        # drops the output before backward (Workload.drops_logits); an output that is the loss's fp32 copy of
        # the logits holds that copy instead (keeps_cast)
        outputs = {i for i, users in enumerate(consumers) if not users}
        loss = nodes[-1].op
        if isinstance(loss, CrossEntropy) and not workload.drops_logits and not loss.output_keeps_upcast:
            outputs.update(nodes[-1].inputs)
        return cls(
            graph,
            workload,
            facts,
            nodes,
            specs,
            consumers,
            dtype,
            requires_grad(graph, workload),
            tuple(tuple(block) for block in graph.checkpoint_segments()) if checkpointed else (),
            frozenset(outputs),
        )

    @property
    def frozen(self) -> bool:
        """LoRA/QLoRA: only the adapters train."""
        return self.workload.finetune != Finetune.FULL

    @property
    def offload(self) -> bool:
        return self.workload.offload is not None and self.workload.training

    def keeps_cast(self, i: int) -> bool:
        """The caller keeps node i's fp32 copy of its input until the step ends: the logits a transformers
        4.45 model returns (CrossEntropy.output_keeps_upcast), unless the loop drops the output."""
        op = self.nodes[i].op
        return isinstance(op, CrossEntropy) and op.output_keeps_upcast and not self.workload.drops_logits

    def drops_input_once_cast(self, i: int) -> bool:
        """Node i's 16-bit input is unreferenced as soon as its fp32 copy exists, before the op's own
        tensors: `logits = logits.float()` rebinds the only name of the 16-bit logits (transformers 4.45,
        CrossEntropy.output_keeps_upcast), so they are freed before the shifted copy is made."""
        op = self.nodes[i].op
        return isinstance(op, CrossEntropy) and op.output_keeps_upcast

    def trainable(self, i: int) -> int:
        """Parameters of node i that get gradients and optimizer state (only adapters when frozen)."""
        return trainable_params(self.nodes[i].op, self.specs[i], self.workload)

    def frozen_linear(self, i: int) -> bool:
        """A frozen Linear (no adapters of its own) keeps nothing of its input for backward."""
        return self.frozen and isinstance(self.nodes[i].op, Linear) and not self.trainable(i)

    def nbytes(self, i: int, numel: int | None = None, dtype_bytes: int | None = None) -> int:
        """Bytes of node i's output, or of something else it allocates per sample (numel given)."""
        spec = self.nodes[i].output
        batched = spec.batched if numel is None else spec.batched or any(s.batched for s in self.specs[i])
        count = spec.numel if numel is None else numel
        return count * (self.workload.batch if batched else 1) * (dtype_bytes or self.dtype[i])

    def weight_numel(self, i: int) -> int:
        op = self.nodes[i].op
        if isinstance(op, Linear) and op.tied_to:
            return self.specs[i][0].shape[-1] * op.out_features
        return op.param_count(self.specs[i])

    def cast_bytes(self, i: int, j: int, source: int) -> int:
        return cast_bytes(self.nodes[i], self.specs[i][j], self.dtype[source], self.workload)

    def dequantizes(self, i: int) -> bool:
        """A quantized weight dequantized to 16 bit in forward and again in backward (Node.stored)."""
        stored = self.nodes[i].stored
        return stored is not None and stored.dequantized_per_matmul

    def weight_cast_bytes(self, i: int) -> int | None:
        """The 16-bit copy of node i's weight its matmul runs with, or None when it makes none: bitsandbytes
        dequantizes a 4-bit weight (Node.stored), autocast casts an fp32 one for a "lower" op."""
        op, w, dequantized = self.nodes[i].op, self.workload, self.dequantizes(i)
        fp32_stored = (
            (w.training and not self.frozen)
            or w.weight_format == WeightFormat.FP32
            or (w.kbit_prepared and not dequantized and not self.int8_matmul(i))  # the fp32 LM head of QLoRA
        )  # and of LoRA on int8
        # offloaded training keeps 16-bit weights on the GPU: nothing for autocast to cast
        autocast = w.amp and op.amp == "lower" and op.casts_weight and fp32_stored and not self.offload
        return 2 * self.weight_numel(i) if dequantized or autocast else None

    def int8_matmul(self, i: int) -> bool:
        """bitsandbytes multiplies node i's int8 weight as stored (Node.stored): autocast casts nothing."""
        stored = self.nodes[i].stored
        return stored is not None and stored.int8_matmul

    def backward_weight_bytes(self, i: int) -> int:
        """The weight a bitsandbytes matmul rebuilds in backward for its input's gradient, held until that
        gradient exists: MatMul4Bit dequantizes to 16 bit; MatMul8bitLt dequantizes its int8 CB in its input's
        dtype (`CB = state.CB.to(ctx.dtype_A, copy=True).mul_(state.SCB ...)`, bitsandbytes 0.39.0 0f40fa3 and
        95f9af3 autograd/_functions.py; 0.39 on Turing/Ampere first undoes the col_turing layout of CxB, an
        int8 copy freed by then), only when that input needs a gradient (`if req_gradA`)."""
        if self.dequantizes(i):
            return 2 * self.weight_numel(i)
        op, inputs = self.nodes[i].op, self.nodes[i].inputs
        if not (self.int8_matmul(i) and isinstance(op, Linear) and inputs and self.requires_grad[inputs[0]]):
            return 0
        return self.dtype[inputs[0]] * self.specs[i][0].shape[-1] * op.out_features  # the int8 base alone

    def stored_weight_bytes(self, i: int) -> int:
        """Weights and buffers of node i as stored: trained weights in the parameter dtype; frozen or
        inference weights as the node's storage format keeps them (Node.stored; a graph no format was applied
        to keeps them in the parameter dtype)."""
        node, dtype = self.nodes[i], self.workload.param_dtype_bytes
        if self.workload.offload == Offload.PARAMS:
            return 0
        if self.workload.offload == Offload.OPTIMIZER:
            dtype = gpu_weight_dtype_bytes(self.workload)
        if (self.workload.training and not self.frozen) or node.stored is None:
            return (node.op.param_count(self.specs[i]) + node.op.buffer_count(self.specs[i])) * dtype
        return node.stored.nbytes

    def part_view(self, i: int, j: int) -> bool:
        """A view of part of its input (select, slice, chunk; or an expand, which is bigger): its backward makes
        a new gradient of the input's size (select_backward: zeros, then the slice copied in), so a tensor
        read a slice at a time, as a recurrent scan does, gets one input-sized gradient per slice, each added
        into the first (derivatives.yaml: select, slice, narrow, expand)."""
        out, whole = self.nodes[i].output, self.specs[i][j]
        return self.nodes[i].op.is_view and (out.numel, out.batched) != (whole.numel, whole.batched)

    def forward_transients(self, i: int, saving: bool) -> list[int]:
        """Bytes of what op i allocates inside its forward beyond its output and what it saves: a composite's
        workspace and the tensors a kernel returns that are dropped at once (Op.forward_transients)."""
        node, op, specs = self.nodes[i], self.nodes[i].op, self.specs[i]
        element = self.dtype[node.inputs[0]] if op.input_dtype_workspace else None
        workspace = op.forward_workspace(specs, node.output, saving)
        sizes = [self.nbytes(i, workspace, element)] if workspace else []
        return sizes + [
            self.nbytes(i, t.numel, SAVED_BYTES.get(t.dtype))  # "act": the op's own dtype
            for t in op.forward_transients(specs, node.output, saving)
        ]

    def held_references(self) -> Sequence[tuple[int, int]]:
        """Beyond Graph.holds (a traced graph's own, or a hand-built graph's Python locals): the model's, as
        its facts say (a decoder's: llm/lifetimes.py), or else the module calls' arguments of a graph with
        blocks (call_frames.py; a traced graph has none)."""
        return self.facts.held_references or module_arguments(self.graph)

    @property
    def extra_tensors(self) -> tuple[ExtraTensor, ...]:
        return self.facts.extra_tensors
