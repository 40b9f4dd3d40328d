"""`.onnx` -> the core graph, with the onnx package only (no torch, no onnxruntime).

Parameters are the float initializers (BatchNormalization's running mean and variance excluded: buffers,
not trained). Shapes come from onnx.shape_inference; the batch is the first dimension of the first graph
input (symbolic "batch" or a number), other symbolic dimensions take seq_len. External tensor data is never
loaded (its location is a path the file chooses). Node semantics: https://onnx.ai/onnx/operators/.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from advisor.core import zoo
from advisor.core.errors import AdvisorError
from advisor.core.graph import Graph, GraphBuilder, TensorSpec
from advisor.core.ops import Input, Op
from advisor.core.ops.base import product
from advisor.core.ops.generic import Opaque
from advisor.importers.common import fail, one_line, optional_module, unique_name
from advisor.importers.onnx_fold import fold_sizes
from advisor.importers.onnx_map import NodeView, core_op, node_macs

MAX_DIM = 1 << 40  # a declared dimension beyond this is damage, not a model
# A symbolic batch dimension is given this size before shape inference: prime and rarely a layer size, so the
# tensors that carry the batch are told from those that merely start with a small constant (a [1, 512]
# position buffer of a static export), as torch_graph.TRACE_BATCH does for traces.
BATCH_MARK = 13
MAX_NODES = 1_000_000
MAX_ONNX_BYTES = 2 << 30  # protobuf cannot parse a larger message (onnx/docs/ExternalData.md)
# Ten times the largest published models (about 2 x 10^12 parameters): issue 29 saw declared dims of 10^9 give
# 1.2 x 10^24 parameters and an answer. A tensor of more elements than 2^50 (4 PiB in fp32) is damage too.
MAX_PARAMETERS = 2 * 10**13
MAX_TENSOR_ELEMENTS = 1 << 50


@dataclass
class _State:
    onnx: Any
    path: Path
    seq_len: int
    batch: Any = None  # the first input's first dimension: a symbol or a number
    shapes: dict[str, tuple[tuple[Any, ...], int]] = field(default_factory=dict)  # name -> (dims, elem_type)
    inits: dict[str, tuple[int, ...]] = field(default_factory=dict)  # float initializers -> dims
    node_of: dict[str, int] = field(default_factory=dict)  # tensor name -> graph node index
    claimed: set[str] = field(default_factory=set)
    taken: set[str] = field(default_factory=set)


def warm_imports(path: Path) -> None:
    """Imports onnx and its shape inference and reference evaluator before sandbox.py forks a child to read the
    file: a child's imports die with it."""
    optional_module("onnx", str(path))
    import onnx.reference
    import onnx.shape_inference  # noqa: F401


def load_graph(path: Path, seq_len: int | None = None) -> Graph:
    onnx = optional_module("onnx", str(path))
    if path.stat().st_size > MAX_ONNX_BYTES:
        raise fail(
            path,
            "larger than 2 GiB, protobuf's limit for one ONNX file (larger models keep their weights "
            "as external data, which is never read)",
        )
    try:
        model = onnx.load(str(path), load_external_data=False)
        _fix_input_sizes(model, seq_len or zoo.DEFAULT_SEQ_LEN)
        # data_prop follows Shape -> Gather -> Expand chains, so sizes computed from the input stay numbers
        # instead of becoming unknown symbols (a BERT export's token types and masks)
        model = onnx.shape_inference.infer_shapes(model, data_prop=True)
        model = onnx.shape_inference.infer_shapes(fold_sizes(onnx, model), data_prop=True)
    except Exception as error:  # protobuf DecodeError, onnx's checker and inference errors
        raise fail(
            path,
            f"not a readable ONNX model (truncated or another format): "
            f"{one_line(f'{type(error).__name__}: {error}', 160)}",
        ) from None
    state = _State(onnx, path, seq_len or zoo.DEFAULT_SEQ_LEN)
    try:
        return _build(state, model.graph)
    except AdvisorError:
        raise
    except (ValueError, TypeError, IndexError, KeyError, AttributeError, OverflowError, RecursionError) as error:
        raise fail(
            path, f"unsupported or damaged ONNX graph: {one_line(f'{type(error).__name__}: {error}', 160)}"
        ) from None


def _fix_input_sizes(model: Any, seq_len: int) -> None:
    """Symbolic sizes of the graph inputs become numbers: the first (the batch) BATCH_MARK, the others
    seq_len. Shape inference then gives every tensor numeric sizes wherever the graph computes them."""
    inits = {init.name for init in model.graph.initializer}
    for value in model.graph.input:
        if value.name in inits or not value.type.HasField("tensor_type"):
            continue
        for axis, dim in enumerate(value.type.tensor_type.shape.dim):
            if not dim.HasField("dim_value"):
                dim.dim_value = BATCH_MARK if axis == 0 else seq_len


def _build(state: _State, graph: Any) -> Graph:
    if len(graph.node) > MAX_NODES:
        raise fail(state.path, f"more than {MAX_NODES:,} nodes")
    _collect(state, graph)
    builder = GraphBuilder(state.path.stem)
    for value in graph.input:
        if value.name not in state.inits and value.name in state.shapes:
            spec = _spec(state, value.name)
            state.node_of[value.name] = builder.add(
                Input(spec.shape, spec.dtype), [], unique_name(value.name, state.taken)
            )
    if not state.node_of:
        raise fail(state.path, "the graph has no inputs besides its weights")
    _unused(state, graph, builder, min(state.node_of.values()))
    nodes = _ordered(graph)
    _check_topological(state, nodes)
    for node in nodes:
        _add_node(state, builder, node)
    return builder.build()


def _check_topological(state: _State, nodes: list[Any]) -> None:
    """ONNX requires nodes in topological order (onnx/docs/IR.md, "Graphs"); a node reading a value that only
    a later node makes is a cycle or a damaged file, which was silently read as a graph without that edge."""
    made = {name for node in nodes for name in node.output if name}
    ready: set[str] = set()
    for node in nodes:
        late = [name for name in node.input if name in made and name not in ready]
        if late:
            raise fail(
                state.path,
                f"node {(node.name or node.op_type)[:60]!r} reads {late[0][:60]!r} before any "
                "node makes it: the graph has a cycle or is out of order",
            )
        ready.update(node.output)


def _collect(state: _State, graph: Any) -> None:
    onnx = state.onnx
    floats = {onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16, onnx.TensorProto.BFLOAT16, onnx.TensorProto.DOUBLE}
    total = 0
    for init in graph.initializer:
        dims = tuple(int(d) for d in init.dims)
        if any(not 0 <= d <= MAX_DIM for d in dims) or product(dims) > MAX_TENSOR_ELEMENTS:
            raise fail(state.path, f"initializer {init.name[:60]!r}: declared shape {dims[:8]} is out of range")
        if init.data_type in floats:
            state.inits[init.name] = dims
            total += product(dims)
    if total > MAX_PARAMETERS:
        raise fail(
            state.path,
            f"its initializers declare {total:.3g} parameters, more than the {MAX_PARAMETERS:.0e} "
            "any real model has (damaged or hostile shapes)",
        )
    for value in (*graph.input, *graph.value_info, *graph.output):
        t = value.type.tensor_type
        if value.type.HasField("tensor_type") and t.HasField("shape"):
            shape: tuple[Any, ...] = tuple(
                d.dim_param if d.HasField("dim_param") else (int(d.dim_value) if d.HasField("dim_value") else "?")
                for d in t.shape.dim
            )
            state.shapes[value.name] = (shape, int(t.elem_type))
            if state.batch is None and value.name not in state.inits and shape:
                state.batch = shape[0]


def _spec(state: _State, name: str) -> TensorSpec:
    dims, elem = state.shapes[name]
    onnx = state.onnx
    kind = (
        "bool"
        if elem == onnx.TensorProto.BOOL
        else "int64"
        if elem
        in (
            onnx.TensorProto.INT64,
            onnx.TensorProto.INT32,
            onnx.TensorProto.INT8,
            onnx.TensorProto.UINT8,
            onnx.TensorProto.INT16,
        )
        else "float"
    )
    batched = bool(dims) and dims[0] == state.batch
    rest = dims[1:] if batched else dims
    shape = tuple(d if isinstance(d, int) else state.seq_len for d in rest)
    if any(not 0 <= d <= MAX_DIM for d in shape) or product(shape) > MAX_TENSOR_ELEMENTS:
        raise fail(state.path, f"tensor {name[:60]!r}: declared shape {shape[:8]} is out of range")
    return TensorSpec(tuple(max(d, 1) for d in shape) or (1,), kind, batched)  # type: ignore[arg-type]


def _add_node(state: _State, builder: GraphBuilder, node: Any) -> None:
    ins = [state.node_of[n] for n in node.input if n in state.node_of]
    params, buffers = _claim(state, node)
    specs = [builder.spec(i) for i in ins]
    outputs = [o for o in node.output if o]
    for k, out_name in enumerate(outputs):
        observed = _spec(state, out_name) if out_name in state.shapes else (specs[0] if specs else None)
        if observed is None:
            continue  # a constant subgraph (Shape, Constant, arithmetic on sizes): not data flow
        view = NodeView(node, state.inits, specs, observed, params if k == 0 else 0)
        op = core_op(view) if k == 0 else None
        if op is None or not _agrees(op, specs, observed, view.params, node.name):
            op = Opaque(
                str(node.op_type),
                observed.shape,
                observed.dtype,
                observed.batched,
                view.params,
                buffers if k == 0 else 0,
                node_macs(view, state.shapes) if k == 0 else 0,
                input_count=len(ins),
            )
        name = unique_name(node.name or f"{node.op_type}_{out_name}", state.taken)
        state.node_of[out_name] = builder.add(op, ins, name)


def _claim(state: _State, node: Any) -> tuple[int, int]:
    """Float initializers first used by this node: (parameters, buffers). BatchNormalization's inputs 3 and 4
    (running mean and variance) are buffers."""
    params = buffers = 0
    for position, name in enumerate(node.input):
        if name in state.inits and name not in state.claimed:
            state.claimed.add(name)
            numel = product(state.inits[name])
            if node.op_type == "BatchNormalization" and position >= 3:
                buffers += numel
            else:
                params += numel
    return params, buffers


def _agrees(op: Op, specs: list[TensorSpec], observed: TensorSpec, params: int, name: str) -> bool:
    try:
        return op.output_spec(specs, name) == observed and op.param_count(specs) == params
    except (AdvisorError, IndexError, ValueError, ZeroDivisionError):
        return False


def _ordered(graph: Any) -> list[Any]:
    """Nodes in file order, with the one making the first graph output (the logits, read by the loss head)
    moved last when no other node reads it, which keeps the order topological."""
    nodes = list(graph.node)
    if not graph.output:
        return nodes
    target = graph.output[0].name
    makers = [n for n in nodes if target in n.output]
    if len(makers) != 1 or any(target in n.input for n in nodes):
        return nodes
    return [n for n in nodes if n is not makers[0]] + makers


def _unused(state: _State, graph: Any, builder: GraphBuilder, first_input: int) -> None:
    """Initializers no node reads (used only by a subgraph, or left over): still weights of the model."""
    read = {name for node in graph.node for name in node.input}
    unused = [name for name in state.inits if name not in read]
    params = 0
    for name in unused:
        state.claimed.add(name)
        params += product(state.inits[name])
    if params:
        builder.add(
            Opaque(
                "initializers no node reads",
                (1,),
                batched=False,
                params=params,
                keeps_inputs=False,
                input_count=1,
                flops_per_element=0,
            ),
            [first_input],
            "unused_initializers",
        )
