"""The kernels of the simulated step, recorded from the aten calls it dispatches with their real shapes: the
same records (core.kernels) the analytic path derives from its formulas, so the time model reads one
description whichever estimator made it.

GEMMs come from mm/addmm/bmm/baddbmm, convolutions from convolution and convolution_backward (its
output_mask says which gradients it computes), fused attention from the SDPA kernels the simulator calls
(simulate/attention.py). Every other op that writes memory is a streaming kernel reading its tensor inputs
and writing its outputs. Views, allocations without a fill and metadata ops launch nothing.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

import torch
from torch.utils._pytree import tree_flatten

from advisor.core.kernels import Attention, AttentionBackend, Convolution, Kernel, Matmul, Pass, Stream

aten = torch.ops.aten

# Ops that allocate without writing, or only touch metadata: no kernel on CUDA.
NO_KERNEL = frozenset(
    {
        aten.empty,
        aten.empty_like,
        aten.empty_strided,
        aten.new_empty,
        aten.new_empty_strided,
        aten.detach,
        aten.lift_fresh,
        aten._local_scalar_dense,
        aten.sym_size,
        aten.sym_stride,
        aten.sym_numel,
        aten.is_nonzero,
        aten.set_,
        aten.resize_,
        aten._unsafe_view,
    }
)
# Batch norm in training reads its input twice (the statistics, then the normalisation) and its backward
# reads the input and the output's gradient twice (the weight-gradient reductions, then the input's):
# cuDNN's and ATen's batch_norm_collect_statistics + batch_norm_elemt kernels (Normalization.cuh).
BATCH_NORM_TRAINING = frozenset(
    {aten.cudnn_batch_norm, aten.native_batch_norm, aten._native_batch_norm_legit, aten.miopen_batch_norm}
)
BATCH_NORM_BACKWARD = frozenset(
    {aten.cudnn_batch_norm_backward, aten.native_batch_norm_backward, aten.miopen_batch_norm_backward}
)
# Gathers read the rows they index, not the whole table: an embedding lookup touches batch x seq rows of the
# vocabulary (indexSelectLargeIndex / embedding's kernels in ATen/native/cuda/Indexing.cu, Embedding.cu).
GATHERS = frozenset({aten.embedding, aten.index_select, aten.gather})
FLASH = (aten._scaled_dot_product_flash_attention, aten._scaled_dot_product_flash_attention_backward)
EFFICIENT = (aten._scaled_dot_product_efficient_attention, aten._scaled_dot_product_efficient_attention_backward)


def _bytes(tensor: torch.Tensor) -> int:
    """What a kernel touches of a tensor: its elements, or its storage when that is smaller (a broadcast)."""
    size = tensor.numel() * tensor.element_size()
    try:
        return min(size, tensor.untyped_storage().nbytes())
    except (RuntimeError, NotImplementedError):
        return size


def _tensors(value: Any) -> list[torch.Tensor]:
    return [t for t in tree_flatten(value)[0] if isinstance(t, torch.Tensor)]


def _matmul(func: Any, args: tuple[Any, ...], out: torch.Tensor, pass_: Pass) -> Matmul:
    a, b = (args[1], args[2]) if func in (aten.addmm, aten.baddbmm) else (args[0], args[1])
    batches = a.shape[0] if a.dim() == 3 else 1
    n = b.shape[-1] if b.dim() > 1 else 1
    return Matmul(
        m=a.shape[-2], n=n, k=a.shape[-1], batches=batches, launches=1, dtype_bytes=a.element_size(), pass_=pass_
    )


def _convolution(
    x: torch.Tensor, weight: torch.Tensor, out: torch.Tensor, transposed: bool, groups: int, pass_: Pass
) -> Convolution:
    """As core.kernel_formulas describes them; a transposed convolution is the data gradient of the convolution
    from its output back to its input."""
    volume = math.prod(weight.shape[2:])
    if transposed:
        return Convolution(
            batch=x.shape[0],
            in_channels=weight.shape[1] * groups,
            out_channels=x.shape[1],
            groups=groups,
            kernel_volume=volume,
            input_pixels=math.prod(out.shape[2:]),
            output_pixels=math.prod(x.shape[2:]),
            dtype_bytes=x.element_size(),
            pass_=pass_,
        )
    return Convolution(
        batch=x.shape[0],
        in_channels=x.shape[1],
        out_channels=weight.shape[0],
        groups=groups,
        kernel_volume=volume,
        input_pixels=math.prod(x.shape[2:]),
        output_pixels=math.prod(out.shape[2:]),
        dtype_bytes=x.element_size(),
        pass_=pass_,
    )


def _convolution_backward(args: tuple[Any, ...]) -> list[Kernel]:
    grad_out, x, weight = args[0], args[1], args[2]
    transposed, groups, mask = bool(args[7]), int(args[9]), args[10]
    out: list[Kernel] = [
        _convolution(x, weight, grad_out, transposed, groups, pass_)
        for wanted, pass_ in zip(mask[:2], (Pass.INPUT_GRAD, Pass.WEIGHT_GRAD), strict=True)
        if wanted
    ]
    if mask[2]:
        out.append(
            Stream(
                read_bytes=_bytes(grad_out),
                written_bytes=4 * grad_out.shape[1],
                flops=grad_out.numel(),
                pass_=Pass.BACKWARD,
            )
        )
    return out


def argument(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any], name: str) -> Any:
    """An op's argument by its schema name, given positionally, by keyword or left at its default."""
    for index, spec in enumerate(func._schema.arguments):
        if spec.name == name:
            if index < len(args):
                return args[index]
            return kwargs.get(name, spec.default_value)
    raise KeyError(name)


def _attention(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any], backward: bool) -> list[Kernel]:
    q, k, v = (argument(func, args, kwargs, n) for n in ("query", "key", "value"))
    causal = bool(argument(func, args, kwargs, "is_causal"))
    backend = AttentionBackend.FLASH if func._overloadpacket in FLASH else AttentionBackend.EFFICIENT
    kernel = Attention(
        batch_heads=q.shape[0] * q.shape[1],
        q_len=q.shape[2],
        kv_len=k.shape[2],
        head_dim=q.shape[3],
        v_head_dim=v.shape[3],
        causal=causal,
        backend=backend,
        dtype_bytes=q.element_size(),
        pass_=Pass.BACKWARD if backward else Pass.FORWARD,
    )
    if not backward:
        return [kernel]
    rows = q.shape[0] * q.shape[1] * q.shape[2]
    # flash's backward preprocessing (dot(dO, O)) and the float32 dq_accum converted to dq (mha_bwd)
    return [
        kernel,
        Stream(read_bytes=2 * _bytes(q), written_bytes=4 * rows, flops=0, pass_=Pass.BACKWARD),
        Stream(read_bytes=4 * q.numel(), written_bytes=_bytes(q), flops=0, pass_=Pass.BACKWARD),
    ]


def _is_view(func: Any, args: tuple[Any, ...], out: Any) -> bool:
    if func.is_view:
        return True
    storages = {t.untyped_storage()._cdata for t in _tensors(args) if t.device.type == "meta"}
    outputs = _tensors(out)
    mutable = any(a.alias_info is not None and a.alias_info.is_write for a in func._schema.arguments)
    return bool(outputs) and not mutable and all(t.untyped_storage()._cdata in storages for t in outputs)


def _gather_read(packet: Any, args: tuple[Any, ...], outputs: list[torch.Tensor]) -> int:
    indices = args[1] if packet is aten.embedding else args[2]
    return _bytes(indices) + sum(_bytes(t) for t in outputs)


def op_kernels(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any], out: Any, pass_: Pass) -> list[Kernel] | None:
    """The kernels one dispatched aten op launches; None for an op that launches none."""
    packet = func._overloadpacket
    if packet in (aten.mm, aten.addmm, aten.bmm, aten.baddbmm, aten.mv, aten.addmv):
        return [_matmul(packet, args, out, pass_)]
    if packet is aten.convolution:
        return [_convolution(args[0], args[1], out, bool(args[6]), int(args[8]), pass_)]
    if packet is aten.convolution_backward:
        return _convolution_backward(args)
    if packet in FLASH or packet in EFFICIENT:
        return _attention(func, args, kwargs, backward=packet in (FLASH[1], EFFICIENT[1]))
    if packet in NO_KERNEL or _is_view(func, args, out):
        return None
    outputs = _tensors(out)
    if not outputs:
        return None
    tensors = _tensors((args, kwargs))
    read = _gather_read(packet, args, outputs) if packet in GATHERS else sum(_bytes(t) for t in tensors)
    if (
        packet in BATCH_NORM_TRAINING and bool(argument(func, args, kwargs, "training"))
    ) or packet in BATCH_NORM_BACKWARD:
        read += _bytes(args[0]) + _bytes(args[1])  # the input (and grad) again
    written = sum(_bytes(t) for t in outputs)
    elements = max((t.numel() for t in (*outputs, *tensors)), default=0)
    return [
        Stream(
            read_bytes=read,
            written_bytes=written,
            flops=elements,
            pass_=Pass.BACKWARD if pass_.backward else Pass.FORWARD,
        )
    ]


class KernelRecorder:
    """Kernels, forward ops and autograd nodes per layer, over the measured step's forward and backward."""

    def __init__(self) -> None:
        self.kernels: dict[str, list[Kernel]] = defaultdict(list)
        self.host_ops: dict[str, int] = defaultdict(int)
        self.autograd_nodes: dict[str, int] = defaultdict(int)
        self._cloned: int | None = None  # storage of the input of the last forward clone

    def reset(self) -> None:
        self.kernels.clear()
        self.host_ops.clear()
        self.autograd_nodes.clear()

    def record(
        self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any], out: Any, phase: str, layer: str
    ) -> None:
        if phase not in ("forward", "backward"):  # setup, zero_grad and the optimizer's step are timed apart
            return
        pass_ = Pass.FORWARD if phase == "forward" else Pass.BACKWARD
        made = op_kernels(func, args, kwargs, out, pass_)
        if made is None:
            return
        self.kernels[layer] += made
        if pass_ is Pass.FORWARD:
            self.host_ops[layer] += 1
            if torch.is_grad_enabled() and any(t.requires_grad for t in _tensors(args)):
                self.autograd_nodes[layer] += 1
            self._note_clone(func, args, layer)

    def _note_clone(self, func: Any, args: tuple[Any, ...], layer: str) -> None:
        """autograd clones the input of an in-place op whose derivative needs it (hardtanh_, silu_) and keeps
        the copy in the op's node: that clone records no node of its own."""
        first = args[0] if args and isinstance(args[0], torch.Tensor) else None
        if first is None:
            self._cloned = None
            return
        storage = first.untyped_storage()._cdata
        writes = (
            bool(func._schema.arguments)
            and func._schema.arguments[0].alias_info is not None
            and func._schema.arguments[0].alias_info.is_write
        )
        if writes and storage == self._cloned and self.autograd_nodes[layer]:
            self.autograd_nodes[layer] -= 1
        self._cloned = storage if func._overloadpacket is aten.clone else None
