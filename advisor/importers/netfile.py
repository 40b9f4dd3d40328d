"""Networks saved by the app's builder: a `.json` file listing the layers, their kind, inputs and fields.

    {"format": "advisor-network", "version": 1, "name": "mlp", "task": "classification",
     "layers": [{"name": "x", "kind": "input", "params": {"shape": [784]}},
                {"name": "fc1", "kind": "linear", "inputs": ["x"], "params": {"out_features": 128}}]}

`inputs` name earlier layers (omitted: the layer before); `params` are the layer kind's dataclass fields
(omitted ones take their defaults); `block` (optional) groups layers that gradient checkpointing recomputes.
Loading rebuilds the graph through GraphBuilder, so shapes are checked and errors name the file and layer.
"""

from __future__ import annotations

import dataclasses
import json
import math
import types
import typing
from functools import cache
from pathlib import Path
from typing import Any

from advisor.core.errors import AdvisorError, SpecError
from advisor.core.graph import Graph, GraphBuilder
from advisor.core.ops import op_class
from advisor.importers.common import read_capped

FORMAT = "advisor-network"
VERSION = 1
# Bounds on what a network file may ask for (issue 16): a shape of 10**400 overflowed the float arithmetic
# and a million layers exhausted memory. 2**31 per number and 16 dimensions keep every product of a shape
# (at most 2**496) a finite float, far above any real layer.
MAX_WHOLE = 2**31
MAX_DIMS = 16
MAX_NETWORK_LAYERS = 100_000
MAX_NETWORK_BYTES = 64 << 20  # 100,000 layers of about 200 bytes each, with room


@cache
def op_fields(kind: str) -> tuple[tuple[str, Any, Any], ...]:
    """(name, type, default) of each editable field of a layer kind, in declaration order."""
    cls = op_class(kind, kind)
    hints = typing.get_type_hints(cls)
    return tuple((f.name, hints[f.name], f.default) for f in dataclasses.fields(cls))


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _coerce_to(kind: Any, value: Any) -> Any:
    """`value` as type `kind`, or raise ValueError saying what was expected."""
    if kind is bool:
        if isinstance(value, bool):
            return value
        raise ValueError("expected true or false")
    if kind is int:
        if _is_int(value) and abs(value) <= MAX_WHOLE:
            return value
        raise ValueError("expected a whole number of at most 2**31 in size")  # coerce_field adds the value
    if kind is float:
        if (_is_int(value) and abs(value) <= MAX_WHOLE) or (isinstance(value, float) and math.isfinite(value)):
            return float(value)
        raise ValueError("expected a finite number")
    if kind is str:
        if isinstance(value, str):
            return value
        raise ValueError("expected text")
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if origin is typing.Literal:
        if value in args:
            return value
        raise ValueError(f"expected one of {', '.join(map(str, args))}")
    if origin is tuple:
        if (
            isinstance(value, list | tuple)
            and len(value) <= MAX_DIMS
            and all(_is_int(v) for v in value)
            and all(abs(v) <= MAX_WHOLE for v in value)
        ):
            return tuple(value)
        raise ValueError(f"expected a list of at most {MAX_DIMS} whole numbers of at most 2**31 each")
    if origin in (typing.Union, types.UnionType):
        for option in args:
            try:
                return _coerce_to(option, value)
            except ValueError:
                continue
        raise ValueError("expected a whole number or a list of whole numbers")
    raise ValueError(f"unsupported field type {kind}")


def coerce_field(kind: str, name: str, value: Any, layer: str) -> Any:
    """A field value from JSON (lists for tuples) checked against the layer kind's type."""
    hints = {field: hint for field, hint, _default in op_fields(kind)}
    if name not in hints:
        raise SpecError(f"{layer}: {kind} has no field {name!r} (fields: {', '.join(hints) or 'none'})")
    try:
        return _coerce_to(hints[name], value)
    except ValueError as error:
        raise SpecError(f"{layer}: field {name}: {error}, got {json.dumps(value)[:60]}") from None


def make_op(kind: str, params: dict[str, Any], layer: str) -> Any:
    cls = op_class(kind, layer)
    values = {name: coerce_field(kind, name, value, layer) for name, value in params.items()}
    return cls(**values)


def graph_to_json(graph: Graph) -> dict[str, Any]:
    layers = []
    for index, node in enumerate(graph.nodes):
        entry: dict[str, Any] = {"name": node.name, "kind": node.op.kind}
        inputs = [graph.nodes[i].name for i in node.inputs]
        if inputs != ([graph.nodes[index - 1].name] if index else []):
            entry["inputs"] = inputs
        if node.block:
            entry["block"] = node.block
        params = {
            f.name: getattr(node.op, f.name)
            for f in dataclasses.fields(node.op)
            if getattr(node.op, f.name) != f.default
        }
        entry["params"] = {k: list(v) if isinstance(v, tuple) else v for k, v in params.items()}
        layers.append(entry)
    return {"format": FORMAT, "version": VERSION, "name": graph.name, "task": graph.task, "layers": layers}


def _add_layer(builder: GraphBuilder, names: dict[str, int], entry: Any, index: int) -> None:
    if not isinstance(entry, dict) or not isinstance(entry.get("kind"), str):
        raise SpecError(f'layer {index + 1}: needs an object with a "kind"')
    name = str(entry.get("name") or f"layer{index + 1}")
    default_inputs = [index - 1] if index else []
    inputs_by_name = entry.get("inputs")
    if inputs_by_name is None:
        inputs = default_inputs
    elif isinstance(inputs_by_name, list) and all(isinstance(n, str) for n in inputs_by_name):
        missing = [n for n in inputs_by_name if n not in names]
        if missing:
            raise SpecError(f"{name}: input {missing[0]!r} is not a layer before this one")
        inputs = [names[n] for n in inputs_by_name]
    else:
        raise SpecError(f'{name}: "inputs" must be a list of layer names')
    params = entry.get("params", {})
    if not isinstance(params, dict):
        raise SpecError(f'{name}: "params" must be an object')
    op = make_op(entry["kind"], params, name)
    block = str(entry.get("block", ""))
    if block:
        with builder.block(block):
            names[name] = builder.add(op, inputs, name)
    else:
        names[name] = builder.add(op, inputs, name)


def graph_from_json(data: Any) -> Graph:
    if isinstance(data, dict) and "format" not in data and ("model_type" in data or "architectures" in data):
        # `estimate path/config.json` said only "not an advisor network"; the app opens such a file as hf:
        raise SpecError("a transformers config.json, not an advisor network: give it as hf:PATH")
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise SpecError(f'not an advisor network (expected "format": "{FORMAT}")')
    if data.get("version") != VERSION:
        raise SpecError(f"network format version {data.get('version')!r} is not supported (expected {VERSION})")
    layers = data.get("layers")
    if not isinstance(layers, list):
        raise SpecError('"layers" must be a list')
    if len(layers) > MAX_NETWORK_LAYERS:  # a million layers ran until memory ran out
        raise SpecError(f"{len(layers):,} layers: at most {MAX_NETWORK_LAYERS:,} are supported")
    builder = GraphBuilder(str(data.get("name") or "network"), str(data.get("task") or "classification"))
    names: dict[str, int] = {}
    for index, entry in enumerate(layers):
        _add_layer(builder, names, entry, index)
    return builder.build()


def save_graph(graph: Graph, path: str | Path) -> None:
    text = json.dumps(graph_to_json(graph), indent=1, ensure_ascii=False)
    Path(path).write_text(text + "\n", encoding="utf-8")


def load_graph_file(path: str | Path) -> Graph:
    """The network in a `.json` file; SpecError names the file and, where it is one, the layer and field."""
    path = Path(path)
    raw = read_capped(path, MAX_NETWORK_BYTES, "the network file")
    try:
        data = json.loads(raw.decode("utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise SpecError(f"{path}: not valid JSON ({error})") from None
    except RecursionError:  # 200,000 nested brackets overflow the parser's stack
        raise SpecError(f"{path}: not a network: JSON nested too deeply") from None
    try:
        return graph_from_json(data)
    except (AdvisorError, TypeError, OverflowError) as error:
        raise SpecError(f"{path}: {error}") from None
