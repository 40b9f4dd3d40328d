"""The routed experts of a mixture-of-experts MLP (Mixtral, Qwen-MoE, DeepSeek, OLMoE, gpt-oss): every
expert's weights are stored, each token computes with experts_per_token of them. The router is a separate
Linear; this op takes the hidden states and the router's logits and returns the weighted sum of the chosen
experts' outputs.

Memory follows transformers' default experts implementation, grouped_mm_experts_forward
(transformers/integrations/moe.py, chosen by PreTrainedModel when no experts_implementation is asked for).
With S = tokens x experts_per_token routed rows it sorts the rows by expert, gathers the hidden states
(S, hidden), runs one grouped GEMM up (S, 2 x intermediate) and, after the gate, one down (S, hidden),
scales by the routing weights (fp32), un-permutes the rows and sums the k rows of each token. The GEMMs
run in the autocast dtype with one expert's matrix cast at a time, as the simulator's grouped-GEMM
stand-in does (advisor/importers/simulate/semantics.py), so the stacked expert weights get no cached
copy: casts_weight = False. (transformers notes grouped_mm is not autocast-enabled and casts the rows
to the weights' dtype; which precision CUDA really uses here is not yet measured.)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import ClassVar

from advisor.core.errors import ShapeError
from advisor.core.graph import TensorSpec
from advisor.core.ops.base import AmpPolicy, Op, SavedTensor, positive
from advisor.core.ops.registry import register_op


@register_op
@dataclass(frozen=True)
class MoEExperts(Op):
    kind: ClassVar[str] = "moe_experts"
    amp: ClassVar[AmpPolicy] = "lower"
    casts_weight: ClassVar[bool] = False  # see the module docstring
    experts: int = 8
    experts_per_token: int = 2
    intermediate: int = 1
    gated: bool = True  # gate and up projections (SwiGLU), else one up projection
    bias: bool = False  # gpt-oss keeps biases on every expert projection
    half_weights: bool = False  # the router hands over half routing weights (Qwen2/3-MoE, OLMoE), not fp32
    # gpt-oss's GptOssExperts._apply_gate: clamp(gate), clamp(up), gate * sigmoid(alpha * gate), (up + 1) * glu;
    # autograd keeps the clamped gate, the sigmoid and up + 1 beyond what a SwiGLU keeps
    clamped_swiglu: bool = False
    full_precision: bool = False  # no autocast (fp32 or pure half): every tensor below is one element

    def for_dtype(self, dtype_bytes: int, autocast: bool) -> MoEExperts:
        return replace(self, full_precision=not autocast)

    def output_spec(self, inputs: Sequence[TensorSpec], layer: str) -> TensorSpec:
        """Inputs: the hidden states and the router's logits (which experts each token goes to)."""
        if len(inputs) != 2 or inputs[1].shape[:-1] != inputs[0].shape[:-1] or inputs[1].shape[-1] != self.experts:
            raise ShapeError(layer, f"experts take the hidden states and the router's {self.experts} logits per token")
        x = inputs[0]
        positive(layer, experts=self.experts, experts_per_token=self.experts_per_token, intermediate=self.intermediate)
        if self.experts_per_token > self.experts:
            raise ShapeError(layer, f"{self.experts_per_token} experts per token of only {self.experts}")
        return x

    @property
    def _projections(self) -> int:
        return 3 if self.gated else 2

    def param_count(self, inputs: Sequence[TensorSpec]) -> int:
        hidden = inputs[0].shape[-1]
        per_expert = self._projections * hidden * self.intermediate
        if self.bias:
            per_expert += (self._projections - 1) * self.intermediate + hidden
        return self.experts * per_expert

    def forward_macs(self, inputs: Sequence[TensorSpec], output: TensorSpec) -> int:
        tokens = output.numel // output.shape[-1]
        return tokens * self.experts_per_token * self._projections * output.shape[-1] * self.intermediate

    def other_flops(self, inputs: Sequence[TensorSpec], output: TensorSpec) -> int:
        tokens = output.numel // output.shape[-1]
        return tokens * self.experts_per_token * (6 * self.intermediate + 2 * output.shape[-1])

    def _rows(self, output: TensorSpec) -> tuple[int, int, int]:
        """Tokens, routed rows (tokens x experts_per_token) and hidden width, per sample."""
        tokens = output.numel // output.shape[-1]
        return tokens, tokens * self.experts_per_token, output.shape[-1]

    def extra_saved(self, inputs: Sequence[TensorSpec], output: TensorSpec, training: bool) -> tuple[SavedTensor, ...]:
        """What autograd keeps of grouped_mm_experts_forward: the gathered rows (the up GEMM's input), the
        up GEMM's output (the gate's and up's views of it), act(gate) and the product (the down GEMM's input)
        or the activation alone for a plain MLP, the down output (the routing-weight multiply's input), the
        routing weights, and the gather/permutation indices; on the router side the fp32 softmax."""
        tokens, routed, hidden = self._rows(output)
        inner = routed * self.intermediate
        expert = inner * (4 if self.gated else 2)  # gated: gate_up (2I), act(gate), product; else up, act
        expert += 3 * inner if self.clamped_swiglu else 0
        return (
            SavedTensor("gathered rows", routed * hidden, "act"),
            SavedTensor("expert activations", expert, "act"),
            SavedTensor("expert outputs", routed * hidden, "act"),
            SavedTensor("router probabilities", tokens * self.experts, "float32"),
            SavedTensor("routing weights", routed, "float32"),
            SavedTensor("routing indices", 3 * routed + tokens * self.experts_per_token, "int64"),
        )

    def forward_workspace(self, inputs: Sequence[TensorSpec], output: TensorSpec, saving: bool) -> int:
        """In half-precision elements per routed row, beyond the output and the saved tensors. The fp32
        gathered rows (2 x hidden) stay referenced by a local to the function's end. Then the down GEMM's
        input is copied to fp32 and back (6 x intermediate with the product), and at the end the fp32
        scaled rows and their un-permuted copy (4 x hidden) are live at once. Inference saves nothing, so
        its worst moment also holds the up output, the gate's tensors and the casts (3 x hidden +
        4 x intermediate), or at the end the down GEMM's half output too, which `proj_out` still names
        (3 x hidden with the gathered rows, then 2 x 2 x hidden scaled and un-permuted in fp32, or 2 x hidden
        where the routing weights are half and so the products); and the routing bookkeeping nothing saves:
        see _index_elements."""
        tokens, routed, hidden = self._rows(output)
        inner = self.intermediate
        if saving:
            return max(0, routed * max(2 * hidden + 3 * inner, 6 * hidden) - tokens * hidden)
        if self.full_precision:  # no casts; gathered, down output, scaled and un-permuted rows: 4 x hidden
            worst = max(hidden + 4 * inner + 8, 4 * hidden + 10)  # indices: 32 or 40 bytes, 4 a element
            return max(0, routed * worst - tokens * hidden)
        scaled = hidden if self.half_weights else 2 * hidden  # rows x routing weights, and un-permuted
        worst = max(
            3 * hidden + 4 * inner + self._index_elements(False), 3 * hidden + 2 * scaled + self._index_elements(True)
        )
        # the replay holds this op's half output and autocast's half copy of its input meanwhile; the real
        # experts cast nothing (the gather reads the fp32 rows) and return only after the worst moment
        return max(0, routed * worst - 2 * tokens * hidden)

    @staticmethod
    def _index_elements(unpermuted: bool) -> int:
        """Per routed row, in half elements (2 bytes): the router's top-k weights (fp32) and indices (int64),
        the sort's expert ids and permutation (int64 each), the gathered routing weights (fp32): 32 bytes;
        at the end also the inverse permutation (int64): 40 bytes (grouped_mm_experts_forward)."""
        return 20 if unpermuted else 16

    def backward_workspace(self, inputs: Sequence[TensorSpec], output: TensorSpec) -> int:
        """Gradients inside the experts' backward: the scaled and un-permuted rows' (2 x S x hidden), or
        through the gate the product's, act's, up's and gate's (4 x S x intermediate; 2 for a plain MLP)."""
        _, routed, hidden = self._rows(output)
        return routed * max(2 * hidden, (4 if self.gated else 2) * self.intermediate)
