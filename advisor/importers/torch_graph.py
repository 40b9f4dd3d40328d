"""module_to_graph: a loaded torch model -> the core layer graph, by recording one forward pass.

The pass runs under FakeTensorMode (shapes and dtypes, no memory, no arithmetic), on the meta device when
the module's parameters are meta already (hf: models), and for real on the CPU at a small batch only when
fake execution cannot run an op (data-dependent shapes). Calls are recorded by torch_trace and mapped by
torch_map; a call the core has no formulas for becomes a generic Opaque op that still counts its output,
parameters and, for matmul-like calls, multiply-adds.

Per-sample shapes: the pass runs at TRACE_BATCH samples; a tensor whose first dimension is the batch (or a
multiple of it: heads or windows folded into the batch) is per sample, any other is shared by the batch.
13 is prime and rarely a layer size, so a shared tensor is rarely mistaken for a batched one.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, replace
from typing import Any

import torch
from torch.overrides import TorchFunctionMode
from torch.utils import _pytree as pytree

from advisor.core.errors import AdvisorError
from advisor.core.graph import Graph, GraphBuilder, TensorSpec
from advisor.core.ops import Input, Op
from advisor.core.ops.generic import Opaque, OpaqueMatmul, OpaqueView
from advisor.importers.common import dtype_kind, fail, unique_name
from advisor.importers.simulate.autocast import LOWER_PRECISION
from advisor.importers.torch_lifetimes import LifetimeRecorder, graph_holds, record_holds
from advisor.importers.torch_loader import LoadedModel, describe_error, quiet_log
from advisor.importers.torch_map import aliases_input, as_call, core_op, matmul_macs
from advisor.importers.torch_trace import Record, Recorder

TRACE_BATCH = 13
REAL_RUN_BATCH = 3  # when fake execution fails, a real CPU pass at a batch this small stays quick


def module_to_graph(loaded: LoadedModel, batch: int | None = None) -> Graph:
    """The per-layer graph of `loaded.module`. `batch` is only a hint: shapes are per sample either way."""
    fixed = getattr(loaded.example_inputs, "fixed_batch", None)
    trace_batch = fixed or TRACE_BATCH
    with _training_step_state(loaded.module), quiet_fake_tensor_log():
        recorder, output, how = _trace(loaded, trace_batch, fixed)
        graph, node_of = _build(loaded, recorder, output)
        holds = _lifetimes(loaded, recorder, trace_batch if how != "real" else fixed or REAL_RUN_BATCH, how)
    if holds is None:
        return graph
    return replace(graph, holds=tuple(graph_holds(holds, node_of, graph.consumers())))


def _lifetimes(loaded: LoadedModel, first: Recorder, batch: int, how: str) -> dict[int, int] | None:
    """When the model's code lets go of each traced tensor (torch_lifetimes.py), from a second pass that
    holds none; None when that pass fails or calls something else (then tensors die at their last reader)."""
    try:
        second, _ = _run(loaded, batch, how, LifetimeRecorder)
    except Exception:  # the first pass ran; a graph without lifetimes is still a graph
        return None
    assert isinstance(second, LifetimeRecorder)
    return record_holds(first.records, second)


def quiet_fake_tensor_log() -> AbstractContextManager[None]:
    """FakeTensorMode logs a traceback for each op it cannot run; we fall back and report one line instead."""
    return quiet_log("torch._subclasses.fake_tensor")


@contextmanager
def _training_step_state(module: torch.nn.Module) -> Iterator[None]:
    """Trace in training mode (dropout and batch-norm statistics as a training step runs them), then put back
    the modes and buffers (BatchNorm's num_batches_tracked is incremented by a real forward)."""
    modes = [(m, m.training) for m in module.modules()]
    saved = [(b, b.detach().clone()) for b in module.buffers() if b.device.type != "meta"]
    for m, _ in modes:
        m.training = True  # not module.train(): torch.export's unlifted modules refuse it
    try:
        yield
    finally:
        for m, mode in modes:
            m.training = mode
        with torch.no_grad():
            for b, copy in saved:
                b.copy_(copy)


def _trace(loaded: LoadedModel, batch: int, fixed: int | None) -> tuple[Recorder, Any, str]:
    on_meta = any(p.device.type == "meta" for p in loaded.module.parameters())
    how = "meta" if on_meta else "fake"
    try:
        return (*_run(loaded, batch, how), how)
    except AdvisorError:
        raise
    except Exception as first:
        if on_meta or not _may_run_for_real(loaded):
            where = "on the meta device" if on_meta else "with fake tensors"
            raise fail(loaded.source, f"forward pass failed {where}: {describe_error(first)}") from None
        try:  # fake tensors cannot run data-dependent ops (nonzero, .item() used as a size): run for real
            return (*_run(loaded, fixed or REAL_RUN_BATCH, "real"), "real")
        except AdvisorError:
            raise
        except Exception as error:
            raise fail(loaded.source, f"forward pass failed: {describe_error(error)}") from None


def _may_run_for_real(loaded: LoadedModel) -> bool:
    """Only code the user chose to run (a FILE.py, a library model) is ever run on real tensors: a saved
    archive's compiled graph is data, and a damaged or hostile one could ask for any amount of memory."""
    return loaded.source.lower().endswith(".py") or loaded.source.startswith(("torchvision:", "timm:"))


def _run(loaded: LoadedModel, batch: int, how: str, kind: type[Recorder] = Recorder) -> tuple[Recorder, Any]:
    args, kwargs = loaded.example_inputs(batch)
    recorder = kind(loaded.module)
    if how == "fake":
        from torch._subclasses.fake_tensor import FakeTensorMode

        mode = FakeTensorMode(allow_non_fake_inputs=True)
        args, kwargs = pytree.tree_map_only(torch.Tensor, mode.from_tensor, (args, kwargs))
    elif how == "meta":
        args, kwargs = pytree.tree_map_only(torch.Tensor, lambda t: t.to("meta"), (args, kwargs))
    recorder.add_inputs(args, kwargs)
    recorder.batch = batch
    with torch.no_grad(), CudaAttentionLayout() if how != "real" else nullcontext(), recorder.hooks():
        if how == "fake":
            with mode:
                result = loaded.module(*args, **kwargs)
        elif how == "meta":
            from advisor.importers.simulate.semantics import GroupedMmOnMeta
            from advisor.importers.simulate.standins import MetaScalars

            # .item() on meta (transformers' mask checks) and expert GEMMs answer as in the simulator
            with MetaScalars(), GroupedMmOnMeta():
                result = loaded.module(*args, **kwargs)
        else:
            result = loaded.module(*args, **kwargs)
    recorder.returned()
    return recorder, _main_output(loaded, result)


class CudaAttentionLayout(TorchFunctionMode):
    """F.scaled_dot_product_attention returns what CUDA's fused kernel returns (simulate/attention.py): its
    output is laid out (batch, seq, heads, head_dim) in memory, so the transpose(1, 2).contiguous() models
    apply to it copies nothing on the card, while the CPU and meta kernels return it contiguous. Pushed
    below the recorder, which records the call with this output."""

    def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        if getattr(func, "__name__", "") == "scaled_dot_product_attention":
            from advisor.importers.simulate.attention import cuda_sdpa

            try:
                return cuda_sdpa(*args, **kwargs)
            except (RuntimeError, TypeError, ValueError, NotImplementedError):
                pass  # an argument form the fused kernels refuse: the plain call below answers
        return func(*args, **kwargs)


def _main_output(loaded: LoadedModel, result: Any) -> torch.Tensor:
    """The tensor the loss reads: the model's output, its `logits` (HF ModelOutput), or its first tensor."""
    if isinstance(result, dict) and isinstance(result.get("logits"), torch.Tensor):
        logits: torch.Tensor = result["logits"]
        return logits
    for leaf in pytree.tree_leaves(result):
        if isinstance(leaf, torch.Tensor):
            return leaf
    if hasattr(result, "logits") and isinstance(result.logits, torch.Tensor):
        return result.logits
    raise fail(loaded.source, f"the forward pass returned no tensor ({type(result).__name__})")


def per_sample(t: torch.Tensor, batch: int) -> TensorSpec:
    shape = tuple(max(int(d), 1) for d in t.shape)
    kind = dtype_kind(str(t.dtype))
    if shape and shape[0] == batch:
        return TensorSpec(shape[1:] or (1,), kind)
    if shape and batch > 1 and shape[0] % batch == 0:
        return TensorSpec((shape[0] // batch, *shape[1:]), kind)
    return TensorSpec(shape or (1,), kind, batched=False)


# ---------------------------------------------------------------- graph building


def _build(loaded: LoadedModel, rec: Recorder, output: torch.Tensor) -> tuple[Graph, dict[int, int]]:
    builder = GraphBuilder(loaded.name, loaded.task)
    taken: set[str] = set()
    node_of: dict[int, int] = {}
    records = rec.records
    state = _ModelState.of(loaded.module)
    inputs = [i for i, r in enumerate(records) if r.is_input]
    if not inputs:
        raise fail(loaded.source, "example_inputs gave no tensors")
    for i in inputs:
        spec = per_sample(records[i].output, rec.batch)
        node_of[i] = builder.add(Input(spec.shape, spec.dtype), [], unique_name(records[i].name, taken))
    last = rec.producer.get(id(output))
    visible = last is not None and not records[last].is_input
    if visible and rec.unclaimed_params():
        builder.add(_unused(rec.unclaimed_params()), [node_of[inputs[0]]], unique_name("unused_parameters", taken))
    for i in _order([i for i, r in enumerate(records) if not r.is_input], records, last):
        r = records[i]
        ins = [node_of[j] for j in r.inputs]
        node_of[i] = builder.add(
            _op_for(r, [builder.spec(k) for k in ins], rec.batch, state), ins, unique_name(r.name, taken)
        )
    if not visible:  # no call inside the model was seen (TorchScript runs in C++): one node is the forward
        spec = per_sample(output, rec.batch)
        op = Opaque(
            "forward (layers not visible)",
            spec.shape,
            spec.dtype,
            spec.batched,
            rec.unclaimed_params(),
            input_count=len(inputs),
        )
        builder.add(op, [node_of[i] for i in inputs], unique_name("forward", taken))
    return builder.build(), node_of


def _order(indices: list[int], records: list[Record], last: int | None) -> list[int]:
    """Execution order, with the model's output moved last (the loss head reads the last node) when nothing
    recorded after it reads it (auxiliary heads, bookkeeping ops after the final layer)."""
    if last is None or last not in indices:
        return indices
    later = indices[indices.index(last) + 1 :]
    if any(last in records[j].inputs for j in later):
        return indices
    return [i for i in indices if i != last] + [last]


def _unused(params: int) -> Opaque:
    """Parameters the forward pass never used still take memory (and gradients, and optimizer state)."""
    return Opaque(
        "parameters unused in forward",
        (1,),
        batched=False,
        params=params,
        keeps_inputs=False,
        input_count=1,
        flops_per_element=0,
    )


def _op_for(r: Record, specs: list[TensorSpec], batch: int, state: _ModelState) -> Op:
    output = per_sample(r.output, batch)
    if not specs and aliases_input(r):
        # a view of a parameter or buffer (ViT's class token expanded to the batch, a layer scale, transposed
        # expert weights): a node of its own that holds the parameter and whose output is that storage
        return OpaqueView(r.op_name, output.shape, output.dtype, output.batched, r.new_params)
    op = core_op(as_call(r, specs, output))
    if op is not None and _agrees(op, r, specs, output):
        return op
    macs = matmul_macs(r) if r.part == 0 else 0
    per = macs // batch if output.batched else macs
    if r.module is not None:
        buffers = sum(b.numel() for b in r.module.buffers() if b.is_floating_point()) if not r.part else 0
    else:
        buffers = state.take_buffers(r)
    view = aliases_input(r)
    cls = OpaqueView if view else OpaqueMatmul if r.op_name in LOWER_PRECISION else Opaque
    return cls(
        r.op_name,
        output.shape,
        output.dtype,
        output.batched,
        r.new_params,
        buffers,
        per,
        input_count=len(specs),
        fp32_operand=state.fp32_operand(r),
        **_saved(r, specs, view),
    )


# copies and rearrangements whose backward needs only sizes (hands the gradient on, casts it back, slices,
# pads or rolls it back), and arithmetic with a Python number, which keeps only that number
# (tools/autograd/derivatives.yaml: clone, _to_copy, constant_pad_nd, roll, cat, stack, repeat, flip,
# mul.Scalar, add, sub)
_COPIES = frozenset(
    {
        "contiguous",
        "clone",
        "to",
        "float",
        "half",
        "bfloat16",
        "type",
        "type_as",
        "copy",
        "bool",
        "int",
        "long",
        "pad",
        "roll",
        "cat",
        "concat",
        "concatenate",
        "stack",
        "repeat",
        "flip",
    }
)
_SCALAR_ARITHMETIC = frozenset({"add", "sub", "rsub", "mul", "div", "truediv", "neg"})
# one-input functions whose derivative is written with their result (derivatives.yaml: exp `grad * result`,
# tanh/sigmoid `*_backward(grad, result)`, sqrt `grad / (2 * result)`, rsqrt `-0.5 * grad * result.pow(3)`,
# reciprocal `-grad * result * result`, expm1 `grad * (result + 1)`, exp2 `grad * result * ln 2`)
_RESULT_ONLY = frozenset({"exp", "exp2", "expm1", "tanh", "sigmoid", "sqrt", "rsqrt", "reciprocal"})


def _saved(r: Record, specs: list[TensorSpec], view: bool) -> dict[str, Any]:
    """What autograd keeps of an unmapped call (derivatives.yaml), as Opaque's keeps_inputs, kept_inputs
    and keeps_result: all its inputs unless a rule below says otherwise."""
    name = r.op_name.rstrip("_")
    if name in ("where", "masked_fill"):  # only their mask
        return {"keeps_inputs": False, "kept_inputs": tuple(j for j, s in enumerate(specs) if s.dtype == "bool")}
    if view or _keeps_nothing(name, r):
        return {"keeps_inputs": False}
    if name in _RESULT_ONLY:
        return {"keeps_inputs": False, "keeps_result": True}
    return {}


def _keeps_nothing(name: str, r: Record) -> bool:
    """Autograd saves no input of this call: a copy; a sum or difference (their gradients are the output's,
    scaled by alpha); or arithmetic between one tensor and Python numbers or 0-dim tensors."""
    if name in _COPIES or name in ("add", "sub"):
        return True
    return name in _SCALAR_ARITHMETIC and len([t for t in _tensors(r) if t.dim()]) == 1  # 0-dim: a scalar


@dataclass
class _ModelState:
    """The model's own tensors as function calls between modules read them."""

    fp32: set[int]  # float32 parameters and buffers of one or more dimensions
    loose: dict[int, int]  # float buffers of no leaf module (BART's final_logits_bias): id -> elements

    @classmethod
    def of(cls, module: torch.nn.Module) -> _ModelState:
        fp32 = {id(t) for t in (*module.parameters(), *module.buffers()) if t.dtype == torch.float32 and t.dim()}
        leaves = {id(b) for m in module.modules() if next(m.children(), None) is None for b in m.buffers()}
        loose = {id(b): b.numel() for b in module.buffers() if b.is_floating_point() and id(b) not in leaves}
        return cls(fp32, loose)

    def take_buffers(self, r: Record) -> int:
        """Elements of the loose buffers this call reads first (each is counted once)."""
        return sum(self.loose.pop(id(t), 0) for t in _tensors(r))

    def fp32_operand(self, r: Record) -> bool:
        """A function call outside autocast's lower-precision list reading a float32 parameter or buffer of
        one or more dimensions: under autocast nothing casts it, so type promotion gives a float32 result."""
        if r.module is not None or r.part or r.op_name in LOWER_PRECISION or not r.output.is_floating_point():
            return False
        return any(id(t) in self.fp32 for t in _tensors(r))


def _tensors(r: Record) -> list[torch.Tensor]:
    return [t for t in pytree.tree_leaves((r.args, r.kwargs)) if isinstance(t, torch.Tensor)]


def _agrees(op: Op, r: Record, specs: list[TensorSpec], observed: TensorSpec) -> bool:
    """A mapped op is used only if its own formulas reproduce what the trace saw."""
    try:
        out = op.output_spec(specs, r.name)
        params = op.param_count(specs)
    except (AdvisorError, IndexError, ValueError, ZeroDivisionError):
        return False
    return out == observed and params == r.new_params and (r.part == 0)


__all__ = ["TRACE_BATCH", "module_to_graph", "per_sample"]
