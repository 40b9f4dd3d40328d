"""Folds the size arithmetic of an ONNX graph (Shape -> Gather -> Concat -> Expand/Reshape chains) into
constants, so shape inference gives every tensor numeric sizes.

Exporters compute sizes at run time from the input's shape (BERT's token types: Expand of a [1, 512] buffer
to a size built by Shape, Equal, Where), and onnx.shape_inference leaves such outputs with unknown dimensions
("unk__1"), which would otherwise be guessed. Once the graph inputs have numeric sizes, every Shape output is
known, and the small integer nodes that read only known values are evaluated with onnx's reference
implementation (https://onnx.ai/onnx/api/reference.html): at most MAX_ELEMENTS integers each, never a tensor
of the model's data.
"""

from __future__ import annotations

from typing import Any

MAX_ELEMENTS = 64
FOLDABLE = frozenset(
    {
        "Constant",
        "Gather",
        "Concat",
        "Unsqueeze",
        "Squeeze",
        "Equal",
        "Where",
        "Mul",
        "Add",
        "Sub",
        "Div",
        "Cast",
        "ConstantOfShape",
        "Slice",
        "Reshape",
        "Range",
        "Not",
        "Less",
        "Greater",
        "Max",
        "Min",
        "Neg",
        "Abs",
        "ReduceProd",
        "Identity",
    }
)


def fold_sizes(onnx: Any, model: Any) -> Any:
    """The model with size arithmetic replaced by integer initializers (shape inference runs again after)."""
    import numpy as np
    from onnx import numpy_helper

    graph = model.graph
    shapes = _numeric_shapes(graph)
    # An initializer stored outside the file is never read (to_array would open the path it names, relative
    # to the working folder: issue 29 saw a file of the current folder come back as a shape).
    known: dict[str, Any] = {
        i.name: numpy_helper.to_array(i)
        for i in graph.initializer
        if i.data_type in (onnx.TensorProto.INT64, onnx.TensorProto.INT32)
        and i.data_location != onnx.TensorProto.EXTERNAL
        and _count(i.dims) <= MAX_ELEMENTS
    }
    folded: list[Any] = []
    for node in graph.node:
        values = _evaluate(onnx, np, node, known, shapes)
        if values is None:
            continue
        for name, value in zip(node.output, values, strict=False):
            known[name] = value
        folded.append(node)
    if not folded:
        return model
    for node in folded:
        graph.node.remove(node)
        for name, value in zip(node.output, (known[o] for o in node.output), strict=False):
            graph.initializer.append(numpy_helper.from_array(np.asarray(value), name))
    return model


def _count(dims: Any) -> int:
    total = 1
    for d in dims:
        total *= int(d)
    return total


def _too_large(np: Any, node: Any, known: dict[str, Any]) -> bool:
    """Range and ConstantOfShape are the two foldable ops whose output can outgrow their inputs: a damaged
    or hostile file must not make them allocate before the size check."""
    try:
        if node.op_type == "ConstantOfShape":
            return bool(np.prod(known[node.input[0]], dtype=np.float64) > MAX_ELEMENTS)
        if node.op_type == "Range":
            start, limit, delta = (float(np.asarray(known[n]).reshape(-1)[0]) for n in node.input[:3])
            return delta == 0 or (limit - start) / delta > MAX_ELEMENTS
    except (IndexError, ValueError, TypeError):
        return True
    return False


def _numeric_shapes(graph: Any) -> dict[str, tuple[int, ...]]:
    out: dict[str, tuple[int, ...]] = {}
    for value in (*graph.input, *graph.value_info, *graph.output):
        t = value.type.tensor_type
        if (
            value.type.HasField("tensor_type")
            and t.HasField("shape")
            and all(d.HasField("dim_value") for d in t.shape.dim)
        ):
            out[value.name] = tuple(int(d.dim_value) for d in t.shape.dim)
    return out


def _evaluate(onnx: Any, np: Any, node: Any, known: dict[str, Any], shapes: dict[str, tuple[int, ...]]) -> Any:
    if node.op_type == "Shape" and node.input[0] in shapes:
        dims = shapes[node.input[0]]
        attrs = {a.name: int(a.i) for a in node.attribute}
        return [np.array(dims[attrs.get("start", 0) : attrs.get("end", len(dims))], dtype=np.int64)]
    if node.op_type not in FOLDABLE or any(n and n not in known for n in node.input) or node.domain:
        return None
    if node.op_type != "Constant" and not any(node.input):
        return None
    from onnx.reference import ReferenceEvaluator

    inputs = [n for n in node.input if n]
    if _too_large(np, node, known):
        return None
    try:
        values = ReferenceEvaluator(node).run(None, {n: known[n] for n in inputs})
    except Exception:  # an op the reference cannot run on these values: left for shape inference
        return None
    if any(not isinstance(v, np.ndarray) or v.size > MAX_ELEMENTS or v.dtype.kind not in "iub" for v in values):
        return None
    return values
