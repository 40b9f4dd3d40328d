"""Records what a module's forward pass does, call by call, without touching real memory.

Two hooks see the calls: forward hooks on the leaf modules (nn.Conv2d, nn.Linear, a user's custom leaf) give
one record per module call with its qualified name; a TorchFunctionMode sees the torch functions called
between modules (F.relu, torch.cat, x + y, x.view) and the aten ops of a torch.export program. Calls inside
a leaf module are not recorded again. Each record keeps the tensors it read and returned; tensors are
matched to their producer by identity (the recorder keeps them alive so ids are not reused).

Parameters are claimed by the first record that uses them, so each is counted once even when tied (GPT-2's
lm_head reuses wte's weight) and the graph's total equals sum(p.numel() for p in module.parameters()).
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode
from torch.utils import _pytree as pytree


@dataclass
class Record:
    """One call: a leaf module (module set) or a torch function (func set)."""

    name: str
    op_name: str
    inputs: list[int]  # records whose outputs this call read
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    output: Any  # the tensor this record stands for
    module: torch.nn.Module | None = None
    new_params: int = 0  # parameters first used here
    tied_to: str = ""  # the record that claimed a parameter this call reuses
    part: int = 0  # which tensor of a multi-output call (chunk, LSTM's (out, (h, c)))
    is_input: bool = False


@dataclass
class Recorder:
    module: torch.nn.Module
    records: list[Record] = field(default_factory=list)
    producer: dict[int, int] = field(default_factory=dict)  # id(tensor) -> record index
    alive: list[Any] = field(default_factory=list)
    claimed: dict[int, str] = field(default_factory=dict)  # id(parameter) -> record name
    depth: int = 0
    batch: int = 1  # samples in the traced pass
    names: dict[int, str] = field(default_factory=dict)  # id(module) -> qualified name

    def __post_init__(self) -> None:
        self.params = {id(p): p for p in self.module.parameters()}
        self.names = {id(m): name for name, m in self.module.named_modules(remove_duplicate=False)}

    # ---- inputs and results
    def add_inputs(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        leaves = [("input" if len(args) == 1 and not kwargs else f"input{i}", a) for i, a in enumerate(args)]
        leaves += list(kwargs.items())
        for name, value in leaves:
            for k, leaf in enumerate(t for t in pytree.tree_leaves(value) if isinstance(t, torch.Tensor)):
                self._add(Record(name if k == 0 else f"{name}.{k}", "input", [], (), {}, leaf, is_input=True))

    def _add(self, record: Record) -> None:
        self.producer[id(record.output)] = len(self.records)
        self.alive.append(record.output)
        self.records.append(record)

    def tensors_in(self, args: Any, kwargs: Any) -> list[torch.Tensor]:
        return [t for t in pytree.tree_leaves((args, kwargs)) if isinstance(t, torch.Tensor)]

    def record(
        self, name: str, op_name: str, args: Any, kwargs: Any, result: Any, module: torch.nn.Module | None = None
    ) -> None:
        outputs = [t for t in pytree.tree_leaves(result) if isinstance(t, torch.Tensor)]
        if not outputs:
            return
        read = self.tensors_in(args, kwargs)
        inputs = [self.producer[id(t)] for t in read if id(t) in self.producer]
        same = len(outputs) == 1 and any(outputs[0] is t for t in read)
        if same and not _is_inplace(op_name, module):
            return  # returned its input unchanged (nn.Identity, eval-mode dropout, contiguous()): no node
        used: list[torch.Tensor] = (
            list(module.parameters()) if module is not None else [t for t in read if id(t) in self.params]
        )
        new_params, tied_to = self._claim(name, used)
        if not inputs and not new_params and not tied_to and not self._per_sample(outputs[0]):
            return  # a constant the batch shares (torch.arange, a position table): not part of the data flow
        for k, out in enumerate(outputs):
            self._add(
                Record(
                    name if k == 0 else f"{name}[{k}]",
                    op_name,
                    inputs,
                    args,
                    kwargs,
                    out,
                    module,
                    new_params if k == 0 else 0,
                    tied_to if k == 0 else "",
                    k,
                )
            )

    def _per_sample(self, t: torch.Tensor) -> bool:
        """A tensor made from nothing the graph tracks but sized by the batch (DeBERTa's all-ones attention
        mask when none is given, a zeros token-type tensor): memory that grows with the batch."""
        # a view of such a constant (a shared mask expanded to the batch) is no new memory
        return self.batch > 1 and t.dim() > 0 and t.shape[0] % self.batch == 0 and t._base is None

    def _claim(self, name: str, used: list[torch.Tensor]) -> tuple[int, str]:
        new, tied = 0, ""
        for p in used:
            if id(p) in self.claimed:
                tied = tied or self.claimed[id(p)]
            else:
                self.claimed[id(p)] = name
                new += p.numel()
        return new, tied

    def returned(self) -> None:
        """The forward pass has returned (its result is still referenced)."""

    def unclaimed_params(self) -> int:
        return sum(p.numel() for key, p in self.params.items() if key not in self.claimed)

    # ---- hooks
    @contextmanager
    def hooks(self) -> Iterator[None]:
        with ExitStack() as stack:
            for m in self.module.modules():
                if isinstance(m, torch.jit.ScriptModule):
                    continue  # compiled code calls no Python hooks (and refuses them): seen as one call
                if next(m.children(), None) is None:  # a leaf: recorded as one node
                    stack.callback(m.register_forward_pre_hook(self._pre).remove)
                    stack.callback(m.register_forward_hook(self._post, with_kwargs=True).remove)
            with _FunctionRecorder(self):
                yield

    def _pre(self, module: torch.nn.Module, args: Any) -> None:
        self.depth += 1

    def _post(self, module: torch.nn.Module, args: Any, kwargs: Any, result: Any) -> None:
        self.depth -= 1
        if self.depth == 0:
            name = self.names.get(id(module), type(module).__name__)
            self.record(name, type(module).__name__, args, kwargs, result, module)


def _is_inplace(op_name: str, module: torch.nn.Module | None) -> bool:
    if module is not None:
        return bool(getattr(module, "inplace", False))
    return op_name.endswith("_") and not op_name.endswith("__")


def function_name(func: Any) -> str:
    """relu, add_, conv2d, getitem: Python functions, Tensor methods and dunders, and aten overloads alike."""
    name = str(getattr(func, "__name__", "") or func)
    if hasattr(func, "_opname"):  # torch.ops.aten.conv2d.default
        name = str(func._opname)
    if name.startswith("__i") and name.endswith("__") and name not in ("__invert__", "__index__"):
        return name[3:-2] + "_"  # __iadd__ -> add_
    if name.startswith("__r") and name.endswith("__") and name[3:-2] in ("add", "sub", "mul", "matmul", "truediv"):
        return name[3:-2]
    return name.strip("_") if name.startswith("__") else name


def _batch_first_attention(*args: Any, **kwargs: Any) -> Any:
    """nn.MultiheadAttention's F.multi_head_attention_forward, re-expressed batch-first with the calls of its
    training path (torch/nn/functional.py): the packed in_proj linear, q/k/v split into heads (views),
    scaled_dot_product_attention, the heads merged (a copy) and the out_proj linear. The module hands it
    (seq, batch, embed) tensors, which the trace would take for tensors the batch shares; batch-first, every
    tensor keeps the batch in front. None where the call is not plain packed self-attention."""
    bound = inspect.signature(F.multi_head_attention_forward).bind(*args, **kwargs)
    bound.apply_defaults()
    a = bound.arguments
    query, key, value = a["query"], a["key"], a["value"]
    same = query.shape == key.shape == value.shape and query.dim() == 3
    if (
        not same
        or a["use_separate_proj_weight"]
        or a["bias_k"] is not None
        or a["add_zero_attn"]
        or a["key_padding_mask"] is not None
        or a["need_weights"]
    ):
        return None
    seq, batch, embed = query.shape
    heads = a["num_heads"]
    # _in_projection_packed copies the projection into (3, seq, batch, embed) with .contiguous(): one copy
    packed = F.linear(query.transpose(0, 1), a["in_proj_weight"], a["in_proj_bias"]).clone()
    q, k, v = packed.chunk(3, dim=-1)
    q, k, v = (t.view(batch, seq, heads, embed // heads).transpose(1, 2) for t in (q, k, v))
    out = F.scaled_dot_product_attention(
        q, k, v, attn_mask=a["attn_mask"], dropout_p=a["dropout_p"] if a["training"] else 0.0, is_causal=a["is_causal"]
    )
    out = F.linear(out.transpose(1, 2).reshape(batch, seq, embed), a["out_proj_weight"], a["out_proj_bias"])
    return out.transpose(0, 1), None


# Python functions the trace records as the calls they are made of, batch-first
DESCEND_INTO: dict[Any, Any] = {F.multi_head_attention_forward: _batch_first_attention}


class _FunctionRecorder(TorchFunctionMode):
    """Sees every torch function call; records those made outside leaf modules."""

    def __init__(self, recorder: Recorder) -> None:
        super().__init__()
        self.recorder = recorder
        self.counts: dict[str, int] = {}

    def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        if func in DESCEND_INTO:  # record the calls inside, not one call the core has no formulas for
            with self:
                result = DESCEND_INTO[func](*args, **kwargs)
            if result is not None:
                return result
        result = func(*args, **kwargs)
        if self.recorder.depth == 0:
            op = function_name(func)
            self.counts[op] = self.counts.get(op, 0) + 1
            self.recorder.record(f"{op}{self.counts[op]}", op, args, kwargs, result)
        return result
