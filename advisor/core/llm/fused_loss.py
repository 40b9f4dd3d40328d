"""Chunked, fused LM-head cross-entropy (--loss fused): Liger Kernel's LigerFusedLinearCrossEntropyLoss
(and Apple's Cut Cross-Entropy, which Unsloth uses) compute the LM head and the loss chunk by chunk and never
materialise the logits of the whole sequence.

liger_kernel/ops/fused_linear_cross_entropy.py fused_linear_cross_entropy_forward: the tokens are split into
chunks of BT / ceil(V / H) rows, so one chunk's logits are about the size of the hidden states; for each chunk
it computes the fp32 logits, their softmax gradient in place, and accumulates grad_input (BT x H, the
input's dtype) and, when the head trains, grad_weight (V x H). Backward only scales the stored grad_input.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from advisor.core.graph import Graph, GraphBuilder, TensorSpec
from advisor.core.ops.base import SavedTensor
from advisor.core.ops.linear import Linear
from advisor.core.ops.loss import CrossEntropy


@dataclass(frozen=True)
class FusedLinearCrossEntropy(CrossEntropy):
    """The LM head and its loss in one op: input the final hidden states, output the scalar loss."""

    vocab: int = 1
    bias: bool = False
    tied_to: str = ""  # the embedding whose weight the head shares

    def param_count(self, inputs: Sequence[TensorSpec]) -> int:
        weights = 0 if self.tied_to else inputs[0].shape[-1] * self.vocab
        return weights + (self.vocab if self.bias else 0)

    def forward_macs(self, inputs: Sequence[TensorSpec], output: TensorSpec) -> int:
        return inputs[0].numel * self.vocab  # the head's multiply-adds, chunk by chunk

    def other_flops(self, inputs: Sequence[TensorSpec], output: TensorSpec) -> int:
        return 4 * inputs[0].numel // inputs[0].shape[-1] * self.vocab

    def target_count(self, inputs: Sequence[TensorSpec]) -> int:
        return inputs[0].numel // inputs[0].shape[-1]

    def chunk_tokens(self, inputs: Sequence[TensorSpec]) -> int:
        tokens, hidden = self.target_count(inputs), inputs[0].shape[-1]
        return -(-tokens // -(-self.vocab // hidden))

    def extra_saved(self, inputs: Sequence[TensorSpec], output: TensorSpec, training: bool) -> tuple[SavedTensor, ...]:
        return (SavedTensor("grad_input computed in forward", inputs[0].numel, "input"),)

    def forward_transients(
        self, inputs: Sequence[TensorSpec], output: TensorSpec, saving: bool
    ) -> tuple[SavedTensor, ...]:
        # one chunk's fp32 logits, turned into their gradient in place
        return (SavedTensor("one chunk of fp32 logits", self.chunk_tokens(inputs) * self.vocab, "float32"),)

    def backward_workspace(self, inputs: Sequence[TensorSpec], output: TensorSpec) -> int:
        return 0


def with_fused_loss(graph: Graph) -> Graph:
    """A language model whose last node is the LM head, with head and loss fused in that node (still named
    lm_head, so the decoder's lifetimes find it); graphs with ops after the head (logit scaling, soft-capping)
    keep the plain loss."""
    head = graph.nodes[-1]
    if graph.task != "language_model" or head.name != "lm_head" or not isinstance(head.op, Linear):
        return graph
    fused = FusedLinearCrossEntropy(upcast=True, vocab=head.op.out_features, bias=head.op.bias, tied_to=head.op.tied_to)
    return GraphBuilder.copy_of(graph, lambda node: fused if node is head else node.op).build()
