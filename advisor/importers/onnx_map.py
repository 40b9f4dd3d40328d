"""ONNX node -> core op, by op_type and attributes (https://onnx.ai/onnx/operators/). Like torch_map, a
mapping may be optimistic: the importer keeps it only when the op's formulas reproduce the inferred shape and
the parameter count of the initializers the node reads."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from advisor.core.graph import TensorSpec
from advisor.core.ops import (
    GELU,
    AdaptiveAvgPool,
    Add,
    AvgPool,
    BatchNorm,
    Concat,
    Conv,
    Dropout,
    Embedding,
    Flatten,
    Hardsigmoid,
    Hardswish,
    LayerNorm,
    Linear,
    MaxPool,
    Mul,
    Op,
    Permute,
    ReLU,
    Reshape,
    Sigmoid,
    Softmax,
    Tanh,
)


@dataclass(frozen=True)
class NodeView:
    node: Any  # onnx.NodeProto
    inits: dict[str, tuple[int, ...]]  # float initializers -> dims
    inputs: list[TensorSpec]  # per-sample specs of the data inputs (initializers excluded)
    output: TensorSpec
    params: int  # elements of the initializers this node claimed

    def attr(self, name: str, default: Any = None) -> Any:
        for a in self.node.attribute:
            if a.name == name:
                if a.ints:
                    return [int(v) for v in a.ints]
                if a.type == 1:  # FLOAT
                    return float(a.f)
                if a.type == 2:  # INT
                    return int(a.i)
                if a.type == 3:  # STRING
                    return a.s.decode("utf-8", "replace")
                return default
        return default

    def init(self, position: int) -> tuple[int, ...] | None:
        names = list(self.node.input)
        return self.inits.get(names[position]) if position < len(names) else None

    @property
    def rank(self) -> int:
        x = self.inputs[0] if self.inputs else self.output
        return len(x.shape) + (1 if x.batched else 0)


def _symmetric(pads: list[int] | None, dims: int) -> tuple[int, ...] | None:
    if not pads:
        return (0,) * dims
    if len(pads) != 2 * dims or pads[:dims] != pads[dims:]:
        return None  # the core pads both sides alike (PyTorch's padding=)
    return tuple(pads[:dims])


def _conv(v: NodeView) -> Op | None:
    weight = v.init(1)
    if weight is None or len(weight) < 3 or v.attr("auto_pad", "NOTSET") not in ("NOTSET", "VALID"):
        return None
    dims = len(weight) - 2
    pads = _symmetric(v.attr("pads"), dims)
    if pads is None:
        return None
    return Conv(
        weight[0],
        tuple(weight[2:]),
        tuple(v.attr("strides") or (1,) * dims),
        pads,
        tuple(v.attr("dilations") or (1,) * dims),
        int(v.attr("group", 1)),
        len(v.node.input) > 2,
        dims,
    )


def _gemm(v: NodeView) -> Op | None:
    weight = v.init(1)
    if weight is None or len(weight) != 2 or v.attr("transA", 0):
        return None
    out = weight[0] if v.attr("transB", 0) else weight[1]
    return Linear(out, len(v.node.input) > 2 and v.init(2) is not None)


def _matmul(v: NodeView) -> Op | None:
    weight = v.init(1)
    return Linear(weight[1], bias=False) if weight is not None and len(weight) == 2 else None


def _pool(v: NodeView) -> Op | None:
    kernel = v.attr("kernel_shape") or []
    strides = v.attr("strides") or kernel
    pads = _symmetric(v.attr("pads"), len(kernel))
    if len(kernel) != 2 or len(set(kernel)) != 1 or len(set(strides)) != 1 or pads is None or len(set(pads)) != 1:
        return None
    ceil = bool(v.attr("ceil_mode", 0))
    if v.node.op_type == "MaxPool":
        dilations = v.attr("dilations") or [1, 1]
        return MaxPool(kernel[0], strides[0], pads[0], ceil, 2, dilations[0]) if len(set(dilations)) == 1 else None
    return AvgPool(kernel[0], strides[0], pads[0], ceil, 2)


def _axis_op(v: NodeView, make: Callable[[int], Op]) -> Op | None:
    axis = int(v.attr("axis", 1))
    axis = axis + v.rank if axis < 0 else axis
    return make(axis - 1) if axis >= 1 else None


def _transpose(v: NodeView) -> Op | None:
    perm = v.attr("perm")
    if not perm or perm[0] != 0:
        return None
    return Permute(tuple(p - 1 for p in perm[1:]))


def _gather(v: NodeView) -> Op | None:
    table = v.init(0)
    if table is None or len(table) != 2 or v.attr("axis", 0) != 0:
        return None
    return Embedding(table[0], table[1], "input")


def _softmax(v: NodeView) -> Op | None:
    axis = int(v.attr("axis", -1))
    return Softmax() if axis in (-1, v.rank - 1) else None


def _layer_norm(v: NodeView) -> Op | None:
    axis = int(v.attr("axis", -1))
    return LayerNorm(True, len(v.node.input) > 2) if axis in (-1, v.rank - 1) else None


_TABLE: dict[str, Callable[[NodeView], Op | None]] = {
    "Conv": _conv,
    "Gemm": _gemm,
    "MatMul": _matmul,
    "BatchNormalization": lambda v: BatchNorm(True),
    "Relu": lambda v: ReLU(),
    "Sigmoid": lambda v: Sigmoid(),
    "Tanh": lambda v: Tanh(),
    "Gelu": lambda v: GELU(False, str(v.attr("approximate", "none"))),
    "HardSwish": lambda v: Hardswish(),
    "HardSigmoid": lambda v: Hardsigmoid(),
    "Softmax": _softmax,
    "MaxPool": _pool,
    "AveragePool": _pool,
    "GlobalAveragePool": lambda v: AdaptiveAvgPool((1, 1)),
    "Flatten": lambda v: Flatten(0) if v.attr("axis", 1) == 1 else None,
    "Reshape": lambda v: Reshape(v.output.shape),
    "Add": lambda v: Add() if len(v.inputs) == 2 else None,
    "Mul": lambda v: Mul() if len(v.inputs) == 2 else None,
    "Concat": lambda v: _axis_op(v, Concat),
    "Transpose": _transpose,
    "Gather": _gather,
    "Dropout": lambda v: Dropout(float(v.attr("ratio", 0.5))),
    "LayerNormalization": _layer_norm,
}


def core_op(v: NodeView) -> Op | None:
    mapper = _TABLE.get(str(v.node.op_type))
    if mapper is None:
        return None
    try:
        return mapper(v)
    except (TypeError, ValueError, IndexError):
        return None


def node_macs(v: NodeView, shapes: dict[str, tuple[tuple[Any, ...], int]]) -> int:
    """Per-sample multiply-adds of a MatMul/Gemm/Conv the core could not model: output x contracted size."""
    if v.node.op_type not in ("MatMul", "Gemm", "Conv", "ConvTranspose"):
        return 0
    out = 1
    for d in v.output.shape:
        out *= d
    if v.node.op_type == "Conv":
        weight = v.init(1)
        inner = 1
        for d in (weight or ())[1:]:
            inner *= d
        return out * inner if weight else 0
    first = v.node.input[0] if v.node.input else ""
    dims = shapes.get(first, ((), 0))[0]
    return out * dims[-1] if dims and isinstance(dims[-1], int) and dims[-1] > 0 else 0
