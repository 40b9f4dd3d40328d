"""The kernels of every layer of a graph under a workload (core.kernel_formulas applied node by node), with
what the formulas cannot see from one op: the dtype each layer computes in and the copies autocast makes of
its inputs (core.step_dtypes, the memory replay's rule), which gradients backward computes
(core.gradients), and which weights autocast casts or QLoRA dequantizes."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from advisor.core.gradients import trainable_params
from advisor.core.graph import Graph, TensorSpec
from advisor.core.kernel_formulas import OpStep, op_kernels
from advisor.core.kernels import Kernel, Pass, Stream
from advisor.core.llm.lora import LoRALinear
from advisor.core.ops.conv import Conv, ConvTranspose
from advisor.core.ops.linear import Linear
from advisor.core.step_dtypes import cast_bytes, element_bytes
from advisor.core.workload import Finetune, Workload


@dataclass(frozen=True, kw_only=True)
class LayerKernels:
    kernels: tuple[Kernel, ...]
    host_ops: int  # forward ops that launch a kernel, as Python dispatches them
    autograd_nodes: int  # of those, the ones that record a node backward runs (training only)
    param_tensors: int  # trainable parameter tensors the optimizer walks


def weight_tensors(op: object, inputs: Sequence[TensorSpec], adapters_only: bool) -> tuple[int, ...]:
    """Elements of each parameter tensor of a conv or linear layer (weight, then bias; a LoRA layer's base
    weight, bias, A and B), or of the adapters alone when the base is not a float32 tensor (QLoRA)."""
    if isinstance(op, LoRALinear):
        k, n, r = inputs[0].shape[-1], op.out_features, op.lora_rank
        base = () if adapters_only else (k * n, *((n,) if op.bias else ()))
        return (*base, r * k, n * r)
    if isinstance(op, Linear):
        return (inputs[0].shape[-1] * op.out_features, *((op.out_features,) if op.bias else ()))
    if isinstance(op, Conv | ConvTranspose):
        bias = op.out_channels if op.bias else 0
        return tuple(n for n in (op.param_count(inputs) - bias, bias) if n)
    return ()


def _param_tensors(op: object, inputs: Sequence[TensorSpec], trainable: int) -> int:
    if not trainable:
        return 0
    if isinstance(op, LoRALinear):
        return 2
    return len(weight_tensors(op, inputs, False)) or (2 if trainable > 1 else 1)


def _node_step(
    graph: Graph, i: int, w: Workload, out_bytes: list[int], needs_grad: tuple[bool, ...], trainable: int
) -> tuple[OpStep, list[Kernel]]:
    node = graph.nodes[i]
    specs = graph.input_specs(node)
    casts: list[Kernel] = []
    reads = []
    for source, spec in zip(node.inputs, specs, strict=True):
        scale = w.batch if spec.batched else 1
        stored = spec.numel * scale * out_bytes[source]
        cast = cast_bytes(node, spec, out_bytes[source], w)
        if cast:  # autocast's copy of the input in the op's dtype (and its gradient cast back in backward)
            casts.append(Stream(read_bytes=stored, written_bytes=cast, flops=0, pass_=Pass.FORWARD))
            if w.training and needs_grad[source]:
                casts.append(Stream(read_bytes=cast, written_bytes=stored, flops=0, pass_=Pass.BACKWARD))
        reads.append(cast or stored)
    tied = w.training and w.finetune == Finetune.FULL and bool(getattr(node.op, "tied_to", ""))
    qlora = w.finetune == Finetune.QLORA and isinstance(node.op, Linear) and bool(node.block)
    amp_casts = w.amp and node.op.amp == "lower" and node.op.casts_weight
    rows = w.batch if node.output.batched else 1
    step = OpStep(
        rows=rows,
        batch=w.batch,
        dtype_bytes=out_bytes[i],
        input_bytes=tuple(reads),
        output_bytes=node.output.numel * rows * out_bytes[i],
        training=w.training,
        output_grad=needs_grad[i],
        input_grad=any(needs_grad[s] for s in node.inputs),
        weight_grad=trainable > 0 or tied,
        weight_casts=weight_tensors(node.op, specs, qlora) if amp_casts else (),
        quantized_base=qlora,
    )
    return step, casts


def _gradient_sums(graph: Graph, needs_grad: tuple[bool, ...]) -> list[int]:
    """Per node: how many times backward adds a gradient into its output's (one fewer than the layers that
    hand it one: a residual block's input gets the branch's and the shortcut's), each an add kernel."""
    arrivals = [0] * len(graph.nodes)
    for node, tracked in zip(graph.nodes, needs_grad, strict=True):
        if tracked:
            for source in set(node.inputs):
                arrivals[source] += needs_grad[source]
    return [max(n - 1, 0) for n in arrivals]


def graph_kernels(graph: Graph, w: Workload, needs_grad: tuple[bool, ...]) -> list[LayerKernels]:
    """Per node, in graph order: the kernels its formula gives plus autocast's input casts and the gradient
    sums where its output fans out. needs_grad: core.gradients.requires_grad of the graph (the caller's)."""
    specs = [graph.input_specs(node) for node in graph.nodes]
    out_bytes = element_bytes(graph.nodes, specs, w)
    needs_grad = needs_grad if w.training else (False,) * len(graph.nodes)
    sums_at = _gradient_sums(graph, needs_grad)
    out = []
    for i, node in enumerate(graph.nodes):
        trainable = trainable_params(node.op, specs[i], w) if w.training else 0
        step, casts = _node_step(graph, i, w, out_bytes, needs_grad, trainable)
        sums = [
            Stream(
                read_bytes=2 * step.output_bytes,
                written_bytes=step.output_bytes,
                flops=step.output_bytes // out_bytes[i],
                pass_=Pass.BACKWARD,
            )
        ] * sums_at[i]
        # the op as the step's dtype makes it (core/step_plan.py: fp32 LoRA adapters on a half base, fp32
        # attention and MoE without autocast), as the memory replay sees it
        made = op_kernels(node.op.for_dtype(out_bytes[i], w.amp), specs[i], node.output, step)
        if not made.kernels:  # a view or an identity: nothing of its own, nor a cast
            casts = []
        host = made.host_ops + sum(1 for k in casts if k.pass_ is Pass.FORWARD)
        out.append(
            LayerKernels(
                kernels=(*casts, *made.kernels, *sums),
                host_ops=host,
                # the input casts record nodes of their own, as the formula's ops do, where backward runs here
                autograd_nodes=made.autograd_nodes + host - made.host_ops if step.training and step.output_grad else 0,
                param_tensors=_param_tensors(node.op, specs[i], trainable),
            )
        )
    return out
