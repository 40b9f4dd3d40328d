"""The layer graph (IR): nodes in execution order, each with one output tensor whose shape is per sample.

Shapes leave out the batch dimension: every activation scales with the batch, parameters do not, so the
memory model can show "total = model part + batch x per-sample part" and where that stops being true.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from advisor.core.errors import ShapeError, SpecError

if TYPE_CHECKING:
    from advisor.core.llm.decoder import DecoderSpec
    from advisor.core.ops.base import Op

# "float" tensors take the workload's compute dtype (fp32, bf16, ...); the others keep theirs.
DtypeKind = Literal["float", "int64", "bool"]
# Graph.holds: a node whose output the model's Python code references until the step ends (it is part of
# what the forward returns, as a seq2seq model's encoder_last_hidden_state is)
HELD_TO_END = -1


@dataclass(frozen=True)
class TensorSpec:
    shape: tuple[int, ...]
    dtype: DtypeKind = "float"
    batched: bool = True  # False for tensors shared by all samples (position embeddings of a sequence)

    @property
    def numel(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n


@dataclass(frozen=True)
class StoredWeights:
    """A node's weights and buffers as a storage format keeps them when they do not train, told by the layer
    that knows the format (core/replay.py asks core/llm/quant.py); a graph as built or imported has none."""

    nbytes: int
    # the weight is dequantized to 16 bit for each matmul, in forward and again in backward (bitsandbytes
    # MatMul4Bit), so a 16-bit copy of it lives while the op runs
    dequantized_per_matmul: bool = False
    # bitsandbytes' MatMul8bitLt multiplies the int8 weight as stored (an autograd Function: autocast casts
    # nothing for it, though prepare_model_for_kbit_training left the layers around it in fp32)
    int8_matmul: bool = False


@dataclass(frozen=True)
class Node:
    name: str
    op: Op
    inputs: tuple[int, ...]  # indices of the nodes whose outputs this node reads
    output: TensorSpec
    block: str = ""  # the repeated unit it belongs to (a residual block, a transformer layer)
    stored: StoredWeights | None = field(default=None, compare=False)  # set only for the step replay


@dataclass(frozen=True)
class Graph:
    name: str
    nodes: tuple[Node, ...]
    task: str = "classification"  # what the loss head trains: classification, language_model
    # The hyper-parameters of a decoder LM (generation, quantization): a description of the same layers, so
    # graphs compare by their layers alone (a network saved by the app keeps the layers, not this).
    decoder: DecoderSpec | None = field(default=None, compare=False)
    # (node, until): the forward code keeps node's output referenced, beyond its last reader, until node
    # `until` has run (HELD_TO_END: until the step ends). A local variable does this: BertModel.forward keeps
    # `embedding_output` while the encoder runs. Seen by the importers that trace a module (torch_lifetimes.py).
    holds: tuple[tuple[int, int], ...] = field(default=(), compare=False)

    def hold_schedule(self, more: Iterable[tuple[int, int]] = ()) -> tuple[dict[int, list[int]], dict[int, list[int]]]:
        """Graph.holds (and `more` such pairs) by node: what each node's output is held until, and which holds
        each node ends."""
        taken: dict[int, list[int]] = {}
        released: dict[int, list[int]] = {}
        for node, until in (*self.holds, *more):
            taken.setdefault(node, []).append(until)
            released.setdefault(until, []).append(node)
        return taken, released

    def input_specs(self, node: Node) -> list[TensorSpec]:
        return [self.nodes[i].output for i in node.inputs]

    def consumers(self) -> list[list[int]]:
        users: list[list[int]] = [[] for _ in self.nodes]
        for index, node in enumerate(self.nodes):
            for source in node.inputs:
                users[source].append(index)
        return users

    @property
    def param_count(self) -> int:
        return sum(n.op.param_count(self.input_specs(n)) for n in self.nodes)

    @property
    def tokens_per_sample(self) -> int:
        first = self.nodes[0].output
        return tokens_per_sample([(first.dtype, first.shape)])

    def blocks(self) -> list[tuple[str, list[int]]]:
        """Named runs of consecutive nodes (the units gradient checkpointing recomputes)."""
        runs: list[tuple[str, list[int]]] = []
        for index, node in enumerate(self.nodes):
            if node.block and runs and runs[-1][0] == node.block:
                runs[-1][1].append(index)
            elif node.block:
                runs.append((node.block, [index]))
        return runs

    def checkpoint_segments(self) -> list[list[int]]:
        """The node runs gradient checkpointing recomputes: the named blocks, or without any the classic
        checkpoint_sequential split into about sqrt(n) segments (first and last node outside)."""
        blocks = [members for _, members in self.blocks()]
        if blocks:
            return blocks
        n = len(self.nodes)
        size = max(1, round(n**0.5))
        return [list(range(start, min(n, start + size))) for start in range(1, n - 1, size)]


@dataclass
class GraphBuilder:
    """Builds a Graph op by op; shapes are inferred at once so errors name the offending layer."""

    name: str
    task: str = "classification"
    _nodes: list[Node] = field(default_factory=list)
    _names: set[str] = field(default_factory=set)
    _counts: dict[str, int] = field(default_factory=dict)
    _block: str = ""
    decoder: DecoderSpec | None = None
    holds: list[tuple[int, int]] = field(default_factory=list)

    def add(self, op: Op, inputs: Sequence[int], name: str | None = None) -> int:
        for i in inputs:
            if not 0 <= i < len(self._nodes):
                raise SpecError(f"{name or op.kind}: input {i} does not exist")
        if name is None:
            self._counts[op.kind] = self._counts.get(op.kind, 0) + 1
            name = f"{op.kind}{self._counts[op.kind]}"
            while name in self._names:
                name += "_"
        if self._block and not name.startswith(self._block + "."):
            name = f"{self._block}.{name}"
        if name in self._names:
            raise SpecError(f"{name}: a layer with this name already exists")
        specs = [self._nodes[i].output for i in inputs]
        output = op.output_spec(specs, name)
        if any(d <= 0 for d in output.shape):
            raise ShapeError(name, f"output shape {output.shape} has a non-positive size")
        self._nodes.append(Node(name, op, tuple(inputs), output, self._block))
        self._names.add(name)
        return len(self._nodes) - 1

    def spec(self, index: int) -> TensorSpec:
        return self._nodes[index].output

    @contextmanager
    def block(self, name: str) -> Iterator[None]:
        outer, self._block = self._block, (f"{self._block}.{name}" if self._block else name)
        try:
            yield
        finally:
            self._block = outer

    @classmethod
    def copy_of(cls, graph: Graph, op_for: Callable[[Node], Op] | None = None) -> GraphBuilder:
        """A builder holding the graph's nodes (each in its block: checkpointing recomputes blocks), with
        op_for(node) in place of a node's op where given, ready for more nodes."""
        builder = cls(graph.name, graph.task, decoder=graph.decoder)
        for node in graph.nodes:
            op = op_for(node) if op_for else node.op
            with builder.block(node.block) if node.block else nullcontext():
                builder.add(op, node.inputs, node.name)
        builder.holds = list(graph.holds)
        return builder

    def hold(self, node: int, until: int) -> None:
        """Node's output stays referenced until node `until` has run (HELD_TO_END: the step's end)."""
        if not 0 <= node < len(self._nodes) or not (until == HELD_TO_END or node < until < len(self._nodes)):
            raise SpecError(f"{self.name}: cannot hold node {node} until node {until}")
        self.holds.append((node, until))

    def build(self) -> Graph:
        if not self._nodes:
            raise SpecError(f"{self.name}: the network has no layers")
        return Graph(self.name, tuple(self._nodes), self.task, self.decoder, tuple(self.holds))


def tokens_per_sample(inputs: Iterable[tuple[str, tuple[int, ...]]]) -> int:
    """Token ids in (the first int64 input, per-sample shape (positions, ...)) -> one token per position,
    so speeds read in tokens/s; anything else is one sample. `inputs`: (dtype name, per-sample shape) of the
    model's inputs in order, from a layer graph or from the tensors a PyTorch module is called with."""
    return next((shape[0] for dtype, shape in inputs if dtype == "int64" and shape), 1)
