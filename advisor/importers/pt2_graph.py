"""The allowlist a torch.export program (.pt2) must pass, read from its serialized JSON graph (issue 29, item 1).

torch's deserializer turns each node's `target` string into a Python object by walking attributes of `torch`,
`operator` or `math` (torch/_export/serde/serialize.py, deserialize_operator), and torch's verifier allows a
few Python functions as targets. One of them, `torch.export.custom_ops.
_call_custom_autograd_function_in_pre_dispatch`, imports whatever module a string argument names and calls
its `apply`: a .pt2 ran `this`, `venv` and a helper module shipped beside it that way. Comparing `str(target)`
after deserializing missed it (a Python function's str is `<function ... at 0x...>`).

So the strings are checked here, on the JSON, before any torch deserializer resolves a name. A target must be:
- `torch.ops.aten.NAME.OVERLOAD` / `torch.ops.prims.NAME.OVERLOAD` with NAME and OVERLOAD in torch's C++
  operator registry (a lookup, nothing imported) and not an operator that reaches files (aten::from_file);
- a higher-order op from HIGHER_ORDER, whose subgraphs (`as_graph` arguments) are checked the same way;
- a pure function of SymInts from PURE_FUNCTIONS (the arithmetic torch.export writes for dynamic shapes).
`as_operator` arguments are checked like targets; torchbind / opaque objects (`as_custom_obj`) are refused.
The nodes' `source_fn_stack` metadata (more target strings, resolved the same way, unused here) is dropped.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from advisor.importers.code_scan import registered, risky_name

# torch/_higher_order_ops: control flow and grad/autocast regions whose bodies are graphs in the same file
HIGHER_ORDER = frozenset(
    {"cond", "while_loop", "map_impl", "scan", "wrap_with_set_grad_enabled", "wrap_with_autocast", "invoke_subgraph"}
)
PURE_FUNCTIONS = frozenset(
    {
        *(
            f"_operator.{name}"
            for name in (
                "getitem",
                "add",
                "sub",
                "mul",
                "floordiv",
                "truediv",
                "mod",
                "pow",
                "neg",
                "pos",
                "abs",
                "eq",
                "ne",
                "lt",
                "le",
                "gt",
                "ge",
                "and_",
                "or_",
                "xor",
                "not_",
                "invert",
            )
        ),
        *(
            f"torch.{name}"
            for name in (
                "sym_int",
                "sym_float",
                "sym_max",
                "sym_min",
                "sym_not",
                "sym_ite",
                "sym_sqrt",
                "sym_sum",
                "_sym_sqrt",
            )
        ),
        *(f"math.{name}" for name in ("ceil", "floor", "trunc", "sqrt")),
        "torch._C._set_grad_enabled",
        "torch.autograd.grad_mode.set_grad_enabled",
        "torch.amp.autocast_mode._enter_autocast",
        "torch.amp.autocast_mode._exit_autocast",
    }
)


def operator_allowed(target: str) -> bool:
    """True for a serialized target string the estimator may deserialize and run."""
    if target in PURE_FUNCTIONS:
        return True
    parts = target.split(".")
    if len(parts) == 4 and parts[:3] == ["torch", "ops", "higher_order"]:
        return parts[3] in HIGHER_ORDER
    if len(parts) != 5 or parts[:2] != ["torch", "ops"] or parts[2] not in ("aten", "prims"):
        return False
    namespace, name, overload = parts[2:]
    return (
        registered(namespace, name)
        and overload in _overloads(namespace, name)
        and not risky_name(f"{namespace}::{name}")
    )


def _overloads(namespace: str, name: str) -> set[str]:
    import torch

    return {s.overload_name or "default" for s in torch._C._jit_get_schemas_for_operator(f"{namespace}::{name}")}


def _walk(value: Any) -> Iterator[tuple[str, Any]]:
    """(key, value) of every dict entry in a JSON tree, without recursion (a deep file must not
    overflow the stack)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key, inner in item.items():
                yield key, inner
                stack.append(inner)
        elif isinstance(item, list):
            stack.extend(item)


def program_problems(program: dict[str, Any]) -> list[str]:
    """What in a serialized ExportedProgram (the archive's models/model.json, parsed) is not on the allowlist;
    [] when everything is. Drops the `source_fn_stack` metadata on the way."""
    problems: list[str] = []
    for key, value in _walk(program):
        if key == "nodes" and isinstance(value, list):
            problems += [_target(node) for node in value if not _node_allowed(node)]
        elif key == "as_operator" and not (isinstance(value, str) and operator_allowed(value)):
            problems.append(f"operator argument {str(value)[:80]}")
        elif key in ("as_custom_obj", "custom_obj") and value:
            problems.append("a torchbind object (C++ code the file names)")
        elif key == "metadata" and isinstance(value, dict):
            value.pop("source_fn_stack", None)
        elif key == "custom_obj_values" and value:
            problems.append("torchbind objects (C++ code the file names)")
    return list(dict.fromkeys(problems))


def _node_allowed(node: Any) -> bool:
    return isinstance(node, dict) and isinstance(node.get("target"), str) and operator_allowed(node["target"])


def _target(node: Any) -> str:
    target = node.get("target") if isinstance(node, dict) else None
    return str(target)[:120] if target is not None else "a node without a target"
