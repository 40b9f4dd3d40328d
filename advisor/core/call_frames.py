"""References the model's Python code keeps past a tensor's last reader in the layer graph: a module's
arguments stay referenced for as long as the module runs, by the caller's variable (`x = self.layer1(x)`
rebinds x only once the call returns) or by the callee's own parameter (a Bottleneck keeps `x` for its
residual). In inference, where nothing is saved for backward, that is what sets the worst moment of a
block: a ResNet block's input is still allocated while its downsample runs, a ViT encoder's input while its
last layer's MLP runs.

Node names follow the module paths, so a module is the run of nodes named `<module>.*`. Only runs known to
be module calls are used: the graph's declared blocks, the containers that enclose them (the prefixes of a
block's name: torchvision's `layer1`, `encoder.layers`, `encoder`), the model's children (the first part of
a dotted name: Inception v3's stem convs), the children of those containers (DenseNet's transitions) and the
modules one level inside a block (`<block>.mlp`). A graph
without blocks may name its nodes freely (a flat nn.Sequential named by stages): nothing is assumed there.
Checked against the simulated step of the real torchvision code (benchmarks/call_frames.py).
"""

from __future__ import annotations

from advisor.core.graph import Graph


def held_arguments(graph: Graph, members: list[int]) -> list[tuple[int, int]]:
    """The outside inputs of a module (a run of nodes), held until the module's last node has run."""
    inside = set(members)
    outside = {s for k in members for s in graph.nodes[k].inputs if s not in inside}
    return [(source, members[-1]) for source in sorted(outside)]


def submodules(graph: Graph, block: str, members: list[int]) -> list[list[int]]:
    """The runs of a block's nodes named <block>.<module>.*: the submodules the block calls."""
    modules: dict[str, list[int]] = {}
    for k in members:
        module, dot, _ = graph.nodes[k].name.removeprefix(block + ".").partition(".")
        if dot:
            modules.setdefault(module, []).append(k)
    return list(modules.values())


def _child(name: str, parent: str) -> str:
    """The child of `parent` that node `name` lies in, if the node is inside one ("" otherwise)."""
    head, dot, _ = name.removeprefix(parent + ".").partition(".")
    return f"{parent}.{head}" if name.startswith(parent + ".") and dot else ""


def _containers(graph: Graph, blocks: list[str]) -> list[list[int]]:
    """The runs of nodes under each proper prefix of a block's name (the Sequentials holding the blocks) and
    under each first name part: the model's own children, each called by its forward (Inception v3's
    `x = self.Conv2d_2b_3x3(x)` keeps the stem's previous output while that BasicConv2d runs)."""
    prefixes = {".".join(b.split(".")[:depth]) for b in blocks for depth in range(1, b.count(".") + 1)}
    prefixes |= {n.name.partition(".")[0] for n in graph.nodes if "." in n.name}
    # a container calls its children (nn.Sequential: `for module in self: input = module(input)`), so their
    # arguments are held too: DenseNet's transition layers inside `features`
    prefixes |= {_child(n.name, parent) for parent in prefixes for n in graph.nodes} - {""}
    return [[k for k, n in enumerate(graph.nodes) if n.name.startswith(prefix + ".")] for prefix in sorted(prefixes)]


def module_arguments(graph: Graph) -> list[tuple[int, int]]:
    """Graph.holds pairs (node, until) of the module calls of a hand-built graph with named blocks."""
    blocks = graph.blocks()
    if not blocks:  # names need not be module paths then
        return []
    runs = [members for _, members in blocks]
    runs += [module for block, members in blocks for module in submodules(graph, block, members)]
    runs += _containers(graph, [block for block, _ in blocks])
    held: list[tuple[int, int]] = []
    for members in runs:
        if members and members == list(range(members[0], members[-1] + 1)):  # a call is one contiguous run
            held += held_arguments(graph, members)
    return held
