"""Embedding lookups: token ids -> vectors (nn.Embedding), learned positions, token types."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar, Literal

from advisor.core.errors import ShapeError
from advisor.core.graph import TensorSpec
from advisor.core.ops.base import AmpPolicy, Op, positive, single_input
from advisor.core.ops.registry import register_op

# "input": looks up the ids it is given (and keeps them for backward).
# "position": ids 0..seq-1, the same for every sample, so the output is shared by the batch.
# "constant": one id for every token (BERT's token type 0 expanded to the batch): a per-sample output.
IndexSource = Literal["input", "position", "constant"]


@register_op
@dataclass(frozen=True)
class Embedding(Op):
    kind: ClassVar[str] = "embedding"
    amp: ClassVar[AmpPolicy] = "fp32"  # not on autocast's lists: the output takes the weight's dtype
    num_embeddings: int = 1
    embedding_dim: int = 1
    index: IndexSource = "input"

    def saved_inputs(self) -> tuple[int, ...]:
        return (0,) if self.index == "input" else ()

    def output_spec(self, inputs: Sequence[TensorSpec], layer: str) -> TensorSpec:
        ids = single_input(inputs, layer)
        positive(layer, num_embeddings=self.num_embeddings, embedding_dim=self.embedding_dim)
        if self.index == "input" and ids.dtype != "int64":
            raise ShapeError(layer, "embedding expects integer token ids as input")
        if self.index == "position" and ids.shape[0] > self.num_embeddings:
            raise ShapeError(layer, f"sequence length {ids.shape[0]} exceeds {self.num_embeddings} positions")
        return TensorSpec((*ids.shape[:1], self.embedding_dim), "float", self.index != "position")

    def param_count(self, inputs: Sequence[TensorSpec]) -> int:
        return self.num_embeddings * self.embedding_dim
