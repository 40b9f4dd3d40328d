"""How N cards share one workload, and what that leaves on each card.

Data parallel (SLI, NVLink or PCIe alike) gives every card a full replica of the model: VRAM does not pool,
so the fit test is per card at the per-card batch. PyTorch's DistributedDataParallel also keeps flat
gradient buckets (gradient_as_bucket_view=False by default): one more buffer per card the size of the
gradients of the parameters that train (a frozen LoRA base has none).
Sharding divides model state (ZeRO, Rajbhandari et al. 2020; FSDP): stage 1 the optimizer state, stage 2
also the gradients, stage 3 also the weights (each layer's weights are gathered for its forward and
backward: two layer-sized gather buffers). Communication per step (ring collectives move (N-1)/N of the
data per card): all-reduce of gradients = 2x gradient bytes for data parallel and ZeRO-1/2; ZeRO-3
all-gathers weights twice and reduce-scatters gradients = 3x. No overlap with compute is assumed.
A frozen base (LoRA/QLoRA under FSDP, as Answer.AI's fsdp_qlora runs it) is gathered as it is stored (QLoRA:
the packed NF4 bytes; bitsandbytes' quant_storage lets FSDP shard them like any flat parameter) and only the
adapters' gradients are reduce-scattered: 2x the stored weights + 1x the adapters' gradients.

Generation adds two ways of splitting one model over N cards (advisor.recommend.generation_speed times them):
tensor_parallel (Megatron-LM, Shoeybi et al. 2019; vLLM's --tensor-parallel-size) splits every layer's
weights and its KV heads N ways, so N must divide the attention and the KV heads; layer_split (llama.cpp's
default --split-mode layer, pipeline serving) gives each card a run of whole layers: memory adds up, but a
token still passes every layer in turn. Data parallel still holds the whole model on each card.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum

from advisor.core.estimate import Estimate
from advisor.core.generation import GenerationProfile
from advisor.core.workload import Finetune


class Plan(StrEnum):
    """How the cards of one configuration share the workload (the module docstring); the text is the JSON's."""

    SINGLE = "single"
    DATA_PARALLEL = "data_parallel"
    ZERO1 = "zero1"
    ZERO2 = "zero2"
    ZERO3 = "zero3"
    TENSOR_PARALLEL = "tensor_parallel"
    LAYER_SPLIT = "layer_split"
    INCOMPLETE = "incomplete"  # no plan: the row of a card that lacks a figure ranking divides by (ranked last)

    @property
    def zero_stage(self) -> int:
        """The ZeRO stage (1 optimizer state, 2 also gradients, 3 also weights); 0 for the other plans."""
        return {Plan.ZERO1: 1, Plan.ZERO2: 2, Plan.ZERO3: 3}.get(self, 0)

    @property
    def sharded(self) -> bool:
        """Divides model state over the cards (ZeRO / FSDP)."""
        return self.zero_stage > 0

    @property
    def splits_model(self) -> bool:
        """One model instance over all the cards (generation's tensor parallel and layer split)."""
        return self in (Plan.TENSOR_PARALLEL, Plan.LAYER_SPLIT)


PLANS_TRAIN: tuple[Plan, ...] = (Plan.DATA_PARALLEL, Plan.ZERO1, Plan.ZERO2, Plan.ZERO3)
PLANS_INFER: tuple[Plan, ...] = (Plan.DATA_PARALLEL, Plan.ZERO3)
PLANS_GENERATE: tuple[Plan, ...] = (Plan.DATA_PARALLEL, Plan.TENSOR_PARALLEL, Plan.LAYER_SPLIT)
SPLIT_PLANS: tuple[Plan, ...] = tuple(plan for plan in Plan if plan.splits_model)


@dataclass(frozen=True)
class PlanCost:
    plan: Plan
    count: int
    saved_bytes: int  # model state this plan takes off each card (negative: it adds buffers)
    comm_bytes: float  # bytes each card sends per step
    tensor_ways: int = 1  # generation: cards each layer is split over
    stages: int = 1  # generation: cards the layers are divided between

    @property
    def replicas(self) -> int:
        """Copies of the model serving requests side by side."""
        return 1 if self.plan.splits_model else self.count


def plans_for(count: int, training: bool, generating: bool = False) -> tuple[Plan, ...]:
    if count == 1:
        return (Plan.SINGLE,)
    if generating:
        return PLANS_GENERATE
    return PLANS_TRAIN if training else PLANS_INFER


def tensor_parallel_fits(profile: GenerationProfile, count: int) -> bool:
    """Each card takes whole attention heads and whole KV heads (vLLM asserts both divide)."""
    return profile.attention_heads % count == 0 and profile.kv_heads % count == 0


def split_cost(profile: GenerationProfile, plan: Plan | str, count: int, kv_cache_bytes: int) -> PlanCost:
    """Memory a split plan takes off each card: tensor parallel keeps 1/N of the weights and the KV cache
    on each; layer split the share of the layers on its busiest card (ceil(layers / N) of them)."""
    model_state, plan = profile.weight_bytes + kv_cache_bytes, Plan(plan)
    if plan is Plan.TENSOR_PARALLEL:
        return PlanCost(plan, count, int(model_state * (count - 1) / count), 0.0, tensor_ways=count)
    busiest = math.ceil(profile.layers / count) / profile.layers
    return PlanCost(plan, count, int(model_state * (1 - busiest)), 0.0, stages=count)


def largest_layer_params(e: Estimate) -> int:
    return max((row.param_count for row in e.layers), default=0)


def gathered_weight_bytes(e: Estimate) -> float:
    """The weights ZeRO-3 / FSDP all-gathers once per pass: the parameters in their dtype for full training
    (the existing rule), the weights as stored (e.g. 4-bit NF4) where the base is frozen."""
    if e.workload.finetune == Finetune.FULL:
        return float(e.param_count * e.workload.param_dtype_bytes)
    return float(e.memory.at_peak.weights)


def plan_cost(e: Estimate, plan: Plan | str, count: int) -> PlanCost:
    """`plan` on `count` cards; a plan's text (a fit change's key, a test's) is taken as the member."""
    plan = Plan(plan)
    m = e.memory.at_peak
    grad_dtype = e.workload.trainable_dtype_bytes
    share = (count - 1) / count
    gathered = gathered_weight_bytes(e)
    # DDP's buckets and the all-reduce cover only parameters that require grad (torch/nn/parallel/
    # distributed.py _build_params_for_reducer skips the rest): the adapters under LoRA/QLoRA
    grads = e.trainable_param_count * grad_dtype
    if plan is Plan.SINGLE:
        return PlanCost(plan, 1, 0, 0.0)
    if plan is Plan.DATA_PARALLEL:
        return PlanCost(plan, count, -grads, 2 * share * grads)
    saved = share * m.optimizer_state
    if plan.zero_stage >= 2:
        saved += share * m.gradients
    comm = 2 * share * grads
    if plan.zero_stage == 3:  # two gather buffers of the largest layer, at the gathered bytes per parameter
        saved += share * m.weights - 2 * largest_layer_params(e) * gathered / max(e.param_count, 1)
        comm = share * (2 * gathered + grads if e.workload.training else gathered)
    return PlanCost(plan, count, int(saved), comm)
