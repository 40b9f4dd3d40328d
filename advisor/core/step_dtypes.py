"""The dtype each layer of a step computes in, and the copies autocast makes to get there: one rule for the
memory replay (core.memory). PyTorch's autocast (aten/src/ATen/autocast_mode.h) runs "lower" ops in half
precision, "fp32" ops in float32 and "promote" ops in the widest dtype of their inputs; views and in-place
ops keep their input's dtype."""

from __future__ import annotations

from collections.abc import Sequence

from advisor.core.graph import Node, TensorSpec
from advisor.core.ops.io import Input
from advisor.core.ops.linear import Linear
from advisor.core.workload import Precision, Workload

# Element bytes of the tensors that are never floating point (indices, masks).
INTEGER_BYTES = {"int64": 8, "bool": 1}


def element_bytes(nodes: Sequence[Node], specs: Sequence[Sequence[TensorSpec]], workload: Workload) -> list[int]:
    """Per node: bytes per element of its output under `workload`'s precision."""
    out: list[int] = []
    half, amp = workload.pure_half, workload.amp
    for node, inputs in zip(nodes, specs, strict=True):
        floats = [out[s] for s, spec in zip(node.inputs, inputs, strict=True) if spec.dtype == "float"]
        if node.output.dtype != "float":
            out.append(INTEGER_BYTES[node.output.dtype])
        elif getattr(node.op, "upcast", False) or (amp and getattr(node.op, "fp32_operand", False)):
            out.append(4)
        elif isinstance(node.op, Input) or not amp:
            out.append(2 if half else 4)
        elif node.op.is_view or node.op.inplace or node.op.amp == "promote" or _bnb_layer(node, workload):
            out.append(max(floats, default=4))
        else:
            out.append(2 if node.op.amp == "lower" else 4)
    return out


def _bnb_layer(node: Node, workload: Workload) -> bool:
    """A bitsandbytes layer hands back its input's dtype, whatever autocast would pick: Linear4bit computes in
    its compute dtype (bitsandbytes nn/modules.py Linear4bit.forward: `inp_dtype = x.dtype; x =
    x.to(self.compute_dtype)` ... `.to(inp_dtype)`), and MatMul8bitLt, an autograd Function autocast leaves
    alone, dequantizes its int8 product to A's dtype (bitsandbytes 0.39.0 0f40fa3 autograd/_functions.py:
    `output = output.to(A.dtype)`; 95f9af3 (2026): `int8_scaled_mm(..., dtype=A.dtype)`). On the fp32
    residual stream prepare_model_for_kbit_training leaves (its norms cast to fp32), their outputs are fp32,
    not autocast's half. lm_head stays 16-bit (transformers skips it when quantizing)."""
    quantized = workload.weight_format in ("nf4", "int8")
    return quantized and isinstance(node.op, Linear) and node.name != "lm_head"


def cast_bytes(node: Node, spec: TensorSpec, source_bytes: int, workload: Workload) -> int:
    """Bytes of the copy made of an input (`spec`, stored at `source_bytes` per element) to compute in the
    op's dtype (autocast's casts, or a loss that upcasts its logits to fp32 as HF's ForCausalLMLoss does),
    or 0 when none is made. A LoRA layer with fp32 adapters on a half-precision base (no autocast) copies its
    input to fp32 for them (core/llm/lora.py)."""
    op = node.op
    if spec.dtype != "float" or op.is_view:
        return 0
    if getattr(op, "upcast", False) or getattr(op, "fp32_adapters", False):
        want = 4
    elif (
        not workload.amp
        or op.amp == "promote"
        or (op.amp == "fp32_output" and workload.precision is Precision.AMP_FP16)
    ):
        return 0
    else:
        want = 2 if op.amp == "lower" else 4
    if source_bytes == want:
        return 0
    return spec.numel * (workload.batch if spec.batched else 1) * want
