"""LoRA / QLoRA fine-tuning (PEFT's LoraModel): each targeted nn.Linear keeps its frozen base weight and gains
two trainable matrices, A (rank x in) and B (out x rank); y = base(x) + B(A(dropout(x))) x alpha / rank.
Only A and B have gradients and optimizer state; activations still flow back through every frozen layer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import ClassVar

from advisor.core.errors import SpecError
from advisor.core.graph import Graph, GraphBuilder, Node, TensorSpec
from advisor.core.ops.base import Op, SavedTensor
from advisor.core.ops.embedding import Embedding
from advisor.core.ops.linear import Linear
from advisor.core.workload import AdapterDtype, Finetune, Workload


@dataclass(frozen=True)
class LoRALinear(Linear):
    """A frozen Linear plus its adapters. lora_A keeps the layer's input for backward (as the frozen base
    does not), lora_B keeps A's rank-wide output (PEFT's default lora_dropout 0.0 is an identity)."""

    kind: ClassVar[str] = "lora_linear"
    lora_rank: int = 16
    # fp32 adapters on a bf16/fp16 base without autocast: peft/tuners/lora/layer.py Linear.forward runs
    # `x = self._cast_input_dtype(x, lora_A.weight.dtype)` before `lora_B(lora_A(dropout(x))) * scaling`, so
    # lora_A saves an fp32 copy of the layer's input, its rank-wide output is fp32, and lora_B's output and its
    # scaled copy are fp32 tensors of the layer's output size until `result.to(torch_result_dtype)`.
    fp32_adapters: bool = False
    upcast_adapters: bool = True  # Workload.adapter_dtype fp32 (PEFT's default): fp32 adapters on a half base
    # QLoRA: peft/tuners/lora/bnb.py Linear4bit.forward copies the 4-bit base's output before adding the adapters
    # (`result = result.clone()`, "defensive clone" for backprop through a manipulated view): one more tensor of
    # the output's size, in its dtype, while the base output is released
    quantized_base: bool = False

    def for_dtype(self, dtype_bytes: int, autocast: bool) -> LoRALinear:
        return replace(self, fp32_adapters=self.upcast_adapters and dtype_bytes == 2 and not autocast)

    def adapter_count(self, inputs: Sequence[TensorSpec]) -> int:
        return self.lora_rank * (inputs[0].shape[-1] + self.out_features)

    def adapter_tensors(self, inputs: Sequence[TensorSpec]) -> list[tuple[int, int]]:
        return [(self.lora_rank, inputs[0].shape[-1]), (self.out_features, self.lora_rank)]

    def param_count(self, inputs: Sequence[TensorSpec]) -> int:
        return super().param_count(inputs) + self.adapter_count(inputs)

    def forward_macs(self, inputs: Sequence[TensorSpec], output: TensorSpec) -> int:
        tokens = output.numel // self.out_features
        return super().forward_macs(inputs, output) + tokens * self.adapter_count(inputs)

    def extra_saved(self, inputs: Sequence[TensorSpec], output: TensorSpec, training: bool) -> tuple[SavedTensor, ...]:
        tokens = output.numel // self.out_features
        return (SavedTensor("lora_A output", tokens * self.lora_rank, "float32" if self.fp32_adapters else "act"),)

    def forward_transients(
        self, inputs: Sequence[TensorSpec], output: TensorSpec, saving: bool
    ) -> tuple[SavedTensor, ...]:
        clone = (SavedTensor("PEFT's clone of the 4-bit output", output.numel, "act"),) if self.quantized_base else ()
        if not self.fp32_adapters:
            return clone
        return (
            *clone,
            SavedTensor("lora_B output", output.numel, "float32"),
            SavedTensor("lora_B output x scaling", output.numel, "float32"),
        )

    def backward_workspace(self, inputs: Sequence[TensorSpec], output: TensorSpec) -> int:
        """fp32 adapters: the output's gradient upcast for the scaling's and lora_B's backward (one fp32 tensor
        of the output's size = twice its elements in the op's half dtype)."""
        return 2 * output.numel if self.fp32_adapters else 0


@dataclass(frozen=True)
class LoRAEmbedding(Embedding):
    """PEFT's lora.Embedding: lora_embedding_A (r x num_embeddings) looked up by the token ids, then
    lora_embedding_B (dim x r): result + (F.embedding(x, A.T) @ B.T) x scaling (peft/tuners/lora/layer.py
    Embedding.forward). The matmul keeps the rank-wide lookup for B's gradient; A's gradient needs the ids,
    which the embedding keeps anyway."""

    lora_rank: int = 16  # kind stays "embedding": the base model's lifetimes find the token embedding by it

    def adapter_count(self, inputs: Sequence[TensorSpec]) -> int:
        return self.lora_rank * (self.num_embeddings + self.embedding_dim)

    def adapter_tensors(self, inputs: Sequence[TensorSpec]) -> list[tuple[int, int]]:
        return [(self.lora_rank, self.num_embeddings), (self.embedding_dim, self.lora_rank)]

    def param_count(self, inputs: Sequence[TensorSpec]) -> int:
        return super().param_count(inputs) + self.adapter_count(inputs)

    def forward_macs(self, inputs: Sequence[TensorSpec], output: TensorSpec) -> int:
        return output.numel // self.embedding_dim * self.lora_rank * self.embedding_dim

    def extra_saved(self, inputs: Sequence[TensorSpec], output: TensorSpec, training: bool) -> tuple[SavedTensor, ...]:
        return (SavedTensor("lora_embedding_A lookup", output.numel // self.embedding_dim * self.lora_rank, "act"),)


def with_adapters(graph: Graph, w: Workload) -> Graph:
    """The graph with every Linear whose module name is one of the workload's targets adapted."""
    targets, adapted = w.adapters, []

    def adapt(node: Node) -> Op:
        op = node.op
        leaf = node.name.rsplit(".", 1)[-1]
        if isinstance(op, LoRALinear | LoRAEmbedding):  # adapted already: with_adapters is idempotent
            adapted.append(node.name)
            return op
        if isinstance(op, Linear) and leaf in targets and not op.tied_to:
            adapted.append(node.name)
            return LoRALinear(
                op.out_features,
                op.bias,
                lora_rank=w.lora_rank,
                quantized_base=w.finetune == Finetune.QLORA,
                upcast_adapters=w.adapter_dtype == AdapterDtype.FP32,
            )
        if type(op) is Embedding and leaf in targets and op.index == "input":
            adapted.append(node.name)
            return LoRAEmbedding(op.num_embeddings, op.embedding_dim, lora_rank=w.lora_rank)
        return op

    builder = GraphBuilder.copy_of(graph, adapt)
    if not adapted:
        raise SpecError(
            f"lora_targets: {graph.name} has no linear layer named {', '.join(targets)} "
            "(LoRA adapts the q/k/v/o and gate/up/down projections of decoder blocks)"
        )
    return builder.build()
