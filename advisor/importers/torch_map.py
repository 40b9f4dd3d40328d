"""Maps a recorded call (a leaf nn.Module or a torch function) to a core op with the same formulas.

A leaf module is first rewritten as the functional call it makes (nn.Conv2d -> conv2d(x, weight, bias, ...)),
so modules, functions and torch.export's aten ops share one table. The caller checks every mapped op
against what was observed (output shape and parameter count) and falls back to a generic op when they
differ, so a mapping here can be optimistic without ever making the graph wrong.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch.utils import _pytree as pytree

from advisor.core.graph import TensorSpec
from advisor.core.ops import (
    GELU,
    AdaptiveAvgPool,
    Add,
    AddParameter,
    AvgPool,
    BatchNorm,
    Concat,
    Conv,
    ConvTranspose,
    Dropout,
    Embedding,
    Flatten,
    FusedSDPA,
    GroupNorm,
    Hardsigmoid,
    Hardswish,
    LayerNorm,
    Linear,
    MaxPool,
    Mul,
    Op,
    Permute,
    ReLU,
    ReLU6,
    Reshape,
    RMSNorm,
    Sigmoid,
    SiLU,
    Softmax,
    Tanh,
)
from advisor.core.ops.text_ops import GELUTanhComposite, QuickGELU
from advisor.core.ops.vision_ops import StochasticDepth
from advisor.importers.torch_trace import Record


@dataclass(frozen=True)
class Call:
    """A call in functional form: positional and keyword arguments, plus what the trace observed."""

    name: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    inputs: Sequence[TensorSpec]  # per-sample specs of the tracked inputs
    output: TensorSpec
    inplace: bool
    tied_to: str
    is_view: bool

    def arg(self, index: int, key: str, default: Any = None) -> Any:
        if key in self.kwargs:
            return self.kwargs[key]
        return self.args[index] if index < len(self.args) else default

    @property
    def rank(self) -> int:
        """Rank of the first argument with its batch dimension."""
        first = self.args[0] if self.args else None
        return first.dim() if isinstance(first, torch.Tensor) else 0


def as_call(record: Record, inputs: Sequence[TensorSpec], output: TensorSpec) -> Call:
    name, args, kwargs = record.op_name, record.args, record.kwargs
    if record.module is not None:
        name, args, kwargs = _module_call(record.module, record.args)
    view = aliases_input(record)
    inplace = (
        name.endswith("_")
        or bool(getattr(record.module, "inplace", False))
        or bool(record.kwargs.get("inplace", False))
    )
    return Call(name.rstrip("_"), args, kwargs, inputs, output, inplace, record.tied_to, view)


def aliases_input(record: Record) -> bool:
    """True when the output shares storage with a tensor the call read (a view, not a new buffer)."""
    out = record.output
    base = getattr(out, "_base", None)
    if base is None:
        return False
    return any(
        t is base or getattr(t, "_base", None) is base
        for t in pytree.tree_leaves((record.args, record.kwargs))
        if isinstance(t, torch.Tensor)
    )


def _python_rms_norm(m: torch.nn.Module) -> bool:
    """transformers' RMSNorm modules (T5LayerNorm, LlamaRMSNorm and their copies): a `variance_epsilon`, one
    weight per feature, no bias, and the normalisation written out in float32 ops (RMSNorm's formulas)."""
    weight = getattr(m, "weight", None)
    return (
        hasattr(m, "variance_epsilon")
        and isinstance(weight, torch.Tensor)
        and weight.dim() == 1
        and getattr(m, "bias", None) is None
    )


def _module_call(m: torch.nn.Module, args: tuple[Any, ...]) -> tuple[str, tuple[Any, ...], dict[str, Any]]:
    """The functional call a leaf module makes (torch/nn/modules/*.py forward methods)."""
    x = args[0] if args else None
    nn = torch.nn
    if isinstance(m, nn.Conv1d | nn.Conv2d | nn.Conv3d):
        return f"conv{len(m.kernel_size)}d", (x, m.weight, m.bias, m.stride, m.padding, m.dilation, m.groups), {}
    if isinstance(m, nn.ConvTranspose2d):
        return (
            "conv_transpose2d",
            (x, m.weight, m.bias, m.stride, m.padding, m.output_padding, m.groups, m.dilation),
            {},
        )
    if isinstance(m, nn.Linear):
        return "linear", (x, m.weight, m.bias), {}
    if type(m).__name__ == "Conv1D" and getattr(m, "weight", None) is not None:  # HF GPT-2: x @ W(in, out) + b
        return "linear", (x, m.weight.T, m.bias), {}
    if isinstance(m, nn.modules.batchnorm._BatchNorm):
        return "batch_norm", (x, m.running_mean, m.running_var, m.weight, m.bias), {}
    if isinstance(m, nn.LayerNorm):
        return "layer_norm", (x, m.normalized_shape, m.weight, m.bias), {}
    if isinstance(m, nn.GroupNorm):
        return "group_norm", (x, m.num_groups, m.weight, m.bias), {}
    if isinstance(m, nn.Embedding):
        return "embedding", (x, m.weight), {}
    if isinstance(m, nn.MaxPool2d | nn.AvgPool2d):
        pool = "max_pool2d" if isinstance(m, nn.MaxPool2d) else "avg_pool2d"
        extra = {"dilation": m.dilation} if isinstance(m, nn.MaxPool2d) else {}
        return pool, (x, m.kernel_size, m.stride, m.padding), {"ceil_mode": m.ceil_mode, **extra}
    if isinstance(m, nn.Flatten):
        return "flatten", (x, m.start_dim, m.end_dim), {}
    if _python_rms_norm(m):
        return "rms_norm", (x, m.weight), {}
    if type(m).__name__.endswith("DropPath") and isinstance(getattr(m, "drop_prob", None), float):
        return "stochastic_depth", (x, m.drop_prob), {}  # transformers' and timm's per-sample drop path
    attrs = {k: getattr(m, k) for k in ("p", "dim", "approximate", "min_val", "max_val") if hasattr(m, k)}
    return _MODULE_FUNCTIONS.get(type(m).__name__, type(m).__name__), (x,), attrs


_MODULE_FUNCTIONS = {
    "ReLU": "relu",
    "ReLU6": "relu6",
    "GELU": "gelu",
    "SiLU": "silu",
    "Sigmoid": "sigmoid",
    "Tanh": "tanh",
    "Hardswish": "hardswish",
    "Hardsigmoid": "hardsigmoid",
    "Softmax": "softmax",
    "Dropout": "dropout",
    "AdaptiveAvgPool2d": "adaptive_avg_pool2d",
    "AdaptiveAvgPool1d": "adaptive_avg_pool1d",
    "RMSNorm": "rms_norm",
    "Hardtanh": "hardtanh",
    "NewGELUActivation": "gelu_new",
    "QuickGELUActivation": "quick_gelu",
}


def _ints(value: Any, dims: int) -> tuple[int, ...] | None:
    """A stride/padding argument as a tuple of dims ints; None for 'same'/'valid' and other forms."""
    if isinstance(value, int):
        return (value,) * dims
    if isinstance(value, list | tuple) and len(value) == dims and all(isinstance(v, int) for v in value):
        return tuple(value)
    if isinstance(value, list | tuple) and len(value) == 1 and isinstance(value[0], int):
        return (value[0],) * dims
    return None


def _square(value: Any, default: int | None = None) -> int | None:
    """Pooling ops of the core take one int per argument: accept k or (k, k)."""
    if value is None or (isinstance(value, list | tuple) and not value):
        return default
    if isinstance(value, int):
        return value
    if isinstance(value, list | tuple) and len(set(value)) == 1 and isinstance(value[0], int):
        return int(value[0])
    return None


def _conv(c: Call) -> Op | None:
    dims = int(c.name[4]) if c.name[4:5].isdigit() else 2
    weight = c.arg(1, "weight")
    geometry = [
        _ints(c.arg(i, key, d), dims) for i, key, d in ((3, "stride", 1), (4, "padding", 0), (5, "dilation", 1))
    ]
    if not isinstance(weight, torch.Tensor) or any(g is None for g in geometry):
        return None
    stride, padding, dilation = geometry
    assert stride is not None and padding is not None and dilation is not None
    return Conv(
        int(weight.shape[0]),
        tuple(int(k) for k in weight.shape[2:]),
        stride,
        padding,
        dilation,
        int(c.arg(6, "groups", 1)),
        c.arg(2, "bias") is not None,
        dims,
    )


def _conv_transpose(c: Call) -> Op | None:
    weight, groups = c.arg(1, "weight"), int(c.arg(6, "groups", 1))
    geometry = [
        _ints(c.arg(i, key, d), 2)
        for i, key, d in ((3, "stride", 1), (4, "padding", 0), (5, "output_padding", 0), (7, "dilation", 1))
    ]
    if not isinstance(weight, torch.Tensor) or any(g is None for g in geometry):
        return None
    stride, padding, out_pad, dilation = geometry
    assert stride is not None and padding is not None and out_pad is not None and dilation is not None
    return ConvTranspose(
        int(weight.shape[1]) * groups,
        tuple(int(k) for k in weight.shape[2:]),
        stride,
        padding,
        out_pad,
        dilation,
        groups,
        c.arg(2, "bias") is not None,
        2,
    )


def _linear(c: Call) -> Op | None:
    weight = c.arg(1, "weight")
    if not isinstance(weight, torch.Tensor) or weight.dim() != 2:
        return None
    return Linear(int(weight.shape[0]), c.arg(2, "bias") is not None, c.tied_to)


def _layer_norm(c: Call) -> Op | None:
    shape = c.arg(1, "normalized_shape")
    if len(tuple(shape)) != 1:
        return None  # the core normalises the last dimension only
    return LayerNorm(c.arg(2, "weight") is not None, c.arg(3, "bias") is not None)


def _pool(c: Call) -> Op | None:
    kernel = _square(c.arg(1, "kernel_size"))
    stride, padding = _square(c.arg(2, "stride"), kernel), _square(c.arg(3, "padding"), 0)
    dilation = _square(c.kwargs.get("dilation", 1))
    if kernel is None or stride is None or padding is None or dilation is None:
        return None
    ceil = bool(c.kwargs.get("ceil_mode", False))
    if c.name == "max_pool2d":
        return MaxPool(kernel, stride, padding, ceil, 2, dilation)
    return AvgPool(kernel, stride, padding, ceil, 2)


def _flatten(c: Call) -> Op | None:
    start, end = int(c.arg(1, "start_dim", 0)), int(c.arg(2, "end_dim", -1))
    if end not in (-1, c.rank - 1) or start < 1:
        return None  # flattening into the batch dimension
    return Flatten(start - 1)


def _concat(c: Call) -> Op | None:
    dim = int(c.arg(1, "dim", 0))
    dim = dim + c.rank if dim < 0 else dim
    tensors = c.arg(0, "tensors")
    if dim < 1 or not isinstance(tensors, list | tuple) or len(tensors) != len(c.inputs):
        return None
    return Concat(dim - 1)


def _permute(c: Call) -> Op | None:
    if c.name == "transpose":
        a, b = (int(c.arg(i, k)) % max(c.rank, 1) for i, k in ((1, "dim0"), (2, "dim1")))
        order = list(range(c.rank))
        order[a], order[b] = order[b], order[a]
    else:
        raw = c.arg(1, "dims")
        order = [int(d) % max(c.rank, 1) for d in (raw if isinstance(raw, list | tuple) else c.args[1:])]
    if not order or order[0] != 0:
        return None
    return Permute(tuple(d - 1 for d in order[1:]))


def _binary(c: Call) -> Op | None:
    if len(c.inputs) == 2:
        return Add(c.inplace) if c.name == "add" else Mul()
    other = c.arg(1, "other")
    if c.name == "add" and len(c.inputs) == 1 and isinstance(other, torch.nn.Parameter):
        return AddParameter()
    return None


def _activation(c: Call) -> Op | None:
    name = c.name
    if name == "hardtanh" and (c.arg(1, "min_val", -1.0), c.arg(2, "max_val", 1.0)) == (0.0, 6.0):
        name = "relu6"
    if name == "softmax" and int(c.arg(1, "dim", -1)) not in (-1, c.rank - 1):
        return None
    if name == "gelu":
        return GELU(c.inplace, str(c.arg(1, "approximate", "none")))
    simple: dict[str, Callable[[bool], Op]] = {
        "relu": ReLU,
        "relu6": ReLU6,
        "silu": SiLU,
        "sigmoid": Sigmoid,
        "tanh": Tanh,
        "hardswish": Hardswish,
        "hardsigmoid": Hardsigmoid,
    }
    if name in simple:
        return simple[name](c.inplace)
    return Softmax() if name == "softmax" else None


def _sdpa(c: Call) -> Op | None:
    """q, k, v and a tensor mask; dropout is the kernel's own (its mask is regenerated, never kept)."""
    return FusedSDPA(len(c.inputs)) if len(c.inputs) in (3, 4) else None


def _embedding(c: Call) -> Op | None:
    weight = c.arg(1, "weight")
    if not isinstance(weight, torch.Tensor) or weight.dim() != 2:
        return None
    return Embedding(int(weight.shape[0]), int(weight.shape[1]), "input")


_TABLE: dict[str, Callable[[Call], Op | None]] = {
    "conv1d": _conv,
    "conv2d": _conv,
    "conv3d": _conv,
    "conv_transpose2d": _conv_transpose,
    "linear": _linear,
    "batch_norm": lambda c: BatchNorm(c.arg(3, "weight") is not None),
    "layer_norm": _layer_norm,
    "rms_norm": lambda c: RMSNorm(),
    "group_norm": lambda c: GroupNorm(int(c.arg(1, "num_groups")), c.arg(2, "weight") is not None),
    "max_pool2d": _pool,
    "avg_pool2d": _pool,
    "flatten": _flatten,
    "embedding": _embedding,
    "adaptive_avg_pool2d": lambda c: AdaptiveAvgPool(c.output.shape[1:]),
    "dropout": lambda c: Dropout(float(c.arg(1, "p", 0.5))),
    "cat": _concat,
    "concat": _concat,
    "concatenate": _concat,
    "permute": _permute,
    "transpose": _permute,
    "add": _binary,
    "mul": _binary,
    "scaled_dot_product_attention": _sdpa,
    "stochastic_depth": lambda c: StochasticDepth(float(c.arg(1, "p"))),
    "gelu_new": lambda c: GELUTanhComposite(),
    "quick_gelu": lambda c: QuickGELU(),
    "view": lambda c: Reshape(c.output.shape) if c.is_view else None,
    "reshape": lambda c: Reshape(c.output.shape) if c.is_view else None,
    **{
        name: _activation
        for name in (
            "relu",
            "relu6",
            "hardtanh",
            "gelu",
            "silu",
            "sigmoid",
            "tanh",
            "hardswish",
            "hardsigmoid",
            "softmax",
        )
    },
}


def core_op(call: Call) -> Op | None:
    """The core op with this call's formulas, or None when the core has none (the caller uses Opaque)."""
    mapper = _TABLE.get(call.name.split(".")[0])
    if mapper is None:
        return None
    try:
        return mapper(call)
    except (TypeError, ValueError, IndexError, AttributeError):
        return None  # an argument form the table does not know: still imported, as a generic op


def matmul_macs(record: Record) -> int:
    """Multiply-adds of matmul-like calls (whole batch): output elements x the contracted size."""
    name = record.op_name.rstrip("_").split(".")[0]
    tensors = [a for a in record.args if isinstance(a, torch.Tensor)]
    out = record.output
    if name in ("matmul", "bmm", "mm", "baddbmm", "addmm", "addbmm", "linear") and len(tensors) >= 2:
        first = tensors[-2] if name.startswith("add") or name == "baddbmm" else tensors[0]
        return int(out.numel()) * int(first.shape[-1]) if first.dim() else 0
    if name == "scaled_dot_product_attention" and len(tensors) >= 3:
        return 2 * int(out.numel()) * int(tensors[1].shape[-2])  # q k^T and p v, each seq_k per output
    if name in ("conv1d", "conv2d", "conv3d", "convolution") and len(tensors) >= 2:
        weight = tensors[1]
        return int(out.numel()) * int(weight[0].numel())
    return 0
