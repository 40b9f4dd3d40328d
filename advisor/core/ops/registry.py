"""The one table of layer kinds: kind -> op class, filled by `@register_op` on each class as its module loads.

The builder's kind list, the network file loader (importers/netfile.py), every importer (spec_graph checks
what they return) and the app's draft all read this table, so a kind an importer makes is a kind the app can
hold and a saved network can reload. A kind claimed twice raises at import, as
torch.utils.flop_counter.register_flop_formula refuses a second formula for one op (torch 2.13.0,
torch/utils/flop_counter.py `register_flop_formula`): a dict would silently keep the later class, and saved
networks of the earlier kind would load as the wrong layer.

Ops a workload derives (LoRA adapters, frozen and in-place variants: core/llm/lora.py, recommend/rewrites.py)
are not layer kinds a file or the builder holds, and are not registered.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar

from advisor.core.errors import SpecError

if TYPE_CHECKING:
    from advisor.core.graph import Graph
    from advisor.core.ops.base import Op

OpClass = TypeVar("OpClass", bound="type[Op]")

OP_REGISTRY: dict[str, type[Op]] = {}


def register_op(cls: OpClass) -> OpClass:
    """Class decorator: enters `cls` under its own `kind`; refuses a kind it inherited or one already taken."""
    kind = cls.__dict__.get("kind")
    if not isinstance(kind, str) or not kind:
        raise ValueError(f"{cls.__name__} declares no kind of its own")
    if kind in OP_REGISTRY:
        raise ValueError(f"op kind {kind!r} is registered by both {OP_REGISTRY[kind].__name__} and {cls.__name__}")
    OP_REGISTRY[kind] = cls
    return cls


def op_class(kind: str, layer: str) -> type[Op]:
    """The class of `kind`, or SpecError naming the layer."""
    if kind not in OP_REGISTRY:
        raise SpecError(f"{layer}: unknown layer kind {kind!r}")
    return OP_REGISTRY[kind]


def require_registered(graph: Graph, source: str) -> Graph:
    """`graph` as an importer made it, or SpecError naming the first layer whose kind the table lacks: the app's
    draft and the network file can hold only registered kinds, so an importer may make no other."""
    for node in graph.nodes:
        cls = OP_REGISTRY.get(node.op.kind)
        if cls is None or not isinstance(node.op, cls):
            raise SpecError(
                f"{source}: layer {node.name}: kind {node.op.kind!r} ({type(node.op).__name__}) is "
                "not a registered layer kind (advisor/core/ops/registry.py)"
            )
    return graph
