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
weights and its KV heads N ways, so N must divide the attention heads, and divide the KV heads or be a
multiple of them (each card then keeps one replicated KV head); layer_split (llama.cpp's default
--split-mode layer, vLLM's --pipeline-parallel-size) gives each card a run of whole layers and their KV
cache: memory adds up, but a token still passes every layer in turn. What each card keeps follows the
weights' layout (core/llm/layout.py): replicated norms and routers, the embedding on the first stage and the
head on the last; the busiest card decides. Training splits layers too (transformers' device_map="auto"):
each card its blocks' weights, gradients and optimizer state, one card at work at a time. Data parallel
still holds the whole model on each card.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import TypeVar, cast

from advisor.core.allocator import SMALL_SIZE
from advisor.core.estimate import Estimate
from advisor.core.generation import GenerationProfile, WeightLayout
from advisor.core.sharded_init import fsdp_step_reserved, fsdp_wrap_replay
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


PLANS_TRAIN: tuple[Plan, ...] = (Plan.DATA_PARALLEL, Plan.ZERO1, Plan.ZERO2, Plan.ZERO3, Plan.LAYER_SPLIT)
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
    stages: int = 1  # layer split: cards the layers are divided between
    weight_share: float = 1.0  # split plans: share of the weights on the busiest card
    kv_share: float = 1.0  # generation's split plans: share of the KV cache on that card

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
    """Each card takes whole attention heads and whole KV heads, or one replicated KV head where there are
    fewer KV heads than cards (vLLM's QKVParallelLinear divides one by the other, either way)."""
    kv = profile.kv_heads
    return profile.attention_heads % count == 0 and (kv % count == 0 or count % kv == 0)


def pipeline_layers(layers: int, stages: int) -> tuple[int, ...]:
    """Blocks per stage as vLLM assigns them: evenly, the remainder one each to the stages before the last,
    from the second-to-last back (vllm/distributed/utils.py get_pp_indices @5a6541db)."""
    partitions = [layers // stages] * stages
    for i in range(2, layers % stages + 2):
        partitions[-i] += 1
    return tuple(partitions)


def _tensor_shares(profile: GenerationProfile, layout: WeightLayout | None, count: int) -> tuple[float, float]:
    kv_on_card = max(1, profile.kv_heads // count) / profile.kv_heads  # one replicated head at the least
    if layout is None:
        return 1 / count, kv_on_card
    total = sum(layout.layer_bytes) + layout.first_bytes + layout.last_bytes
    split = total - layout.replicated_bytes - layout.kv_proj_bytes
    on_card = layout.replicated_bytes + layout.kv_proj_bytes * kv_on_card + split / count
    return on_card / total, kv_on_card if layout.kv_heads_split else 1.0


def _stage_shares(profile: GenerationProfile, layout: WeightLayout | None, count: int, kv: int) -> tuple[float, float]:
    """The busiest stage's shares: its blocks, the embedding on the first, the head on the last."""
    layers, start = profile.layers, 0
    if layout is None:
        busiest = math.ceil(layers / count) / layers
        return busiest, busiest
    total = sum(layout.layer_bytes) + layout.first_bytes + layout.last_bytes
    shares = []
    for stage, blocks in enumerate(pipeline_layers(layers, count)):
        held = sum(layout.layer_bytes[start : start + blocks])
        held += (layout.first_bytes if stage == 0 else 0) + (layout.last_bytes if stage == count - 1 else 0)
        shares.append((held / total, blocks / layers))
        start += blocks
    return max(shares, key=lambda s: s[0] * profile.weight_bytes + s[1] * kv)


def split_cost(profile: GenerationProfile, plan: Plan | str, count: int, kv_cache_bytes: int) -> PlanCost:
    """Memory a split plan takes off the busiest card: its share of the weights and of the KV cache."""
    plan = Plan(plan)
    tensor = plan is Plan.TENSOR_PARALLEL
    if tensor:
        weight_share, kv_share = _tensor_shares(profile, profile.layout, count)
    else:
        weight_share, kv_share = _stage_shares(profile, profile.layout, count, kv_cache_bytes)
    saved = profile.weight_bytes * (1 - weight_share) + kv_cache_bytes * (1 - kv_share)
    ways, stages = (count, 1) if tensor else (1, count)
    return PlanCost(plan, count, int(saved), 0.0, ways, stages, weight_share, kv_share)


def _gather_unit(name: str) -> str:
    """The module FSDP wraps and all-gathers as one: the repeated block a layer belongs to (`layers.3` of
    `layers.3.mlp.up_proj`: the name up to its first index), else the layer itself (an embedding, a head)."""
    parts = name.split(".")
    index = next((i for i, part in enumerate(parts) if part.isdigit()), None)
    return name if index is None else ".".join(parts[: index + 1])


T = TypeVar("T")

# One estimate is ranked on 200 cards and 4 counts (3,170 plan costs): what depends on the estimate alone is
# made once. An entry holds the estimate, so its id is not reused while it is cached.
_MADE: dict[tuple[str, int, int], tuple[Estimate, object]] = {}
_MADE_KEPT = 64


def _once(what: str, e: Estimate, count: int, make: Callable[[], T]) -> T:
    """make(), computed once per estimate (by identity) and card count."""
    key = (what, id(e), count)
    hit = _MADE.get(key)
    if hit is not None and hit[0] is e:
        return cast(T, hit[1])
    if len(_MADE) >= _MADE_KEPT:
        _MADE.clear()
    made = make()
    _MADE[key] = (e, made)
    return made


def _is_block(unit: str) -> bool:
    """A repeated block's unit (`layers.3`), not a layer outside the blocks."""
    return unit.split(".")[-1].isdigit()


def _unit_layers(e: Estimate) -> Mapping[str, tuple[int, ...]]:
    """Each gather unit's layers' parameter counts, in the order of the layers."""

    def make() -> Mapping[str, tuple[int, ...]]:
        units: dict[str, list[int]] = {}
        for row in e.layers:
            units.setdefault(_gather_unit(row.name), []).append(row.param_count)
        return {unit: tuple(counts) for unit, counts in units.items()}

    return _once("unit layers", e, 0, make)


def _unit_params(e: Estimate) -> Mapping[str, int]:
    """Parameters per gather unit, in the order of the layers."""
    return _once("units", e, 0, lambda: {unit: sum(counts) for unit, counts in _unit_layers(e).items()})


def stage_param_share(e: Estimate, count: int) -> float:
    """The busiest card's share of the parameters when whole blocks are divided between `count` cards in
    order (pipeline_layers), the layers before the blocks (the embedding) on the first and those after (the
    final norm, the head) on the last, as transformers' device_map="auto" balances them (accelerate
    get_balanced_memory, infer_auto_device_map: no block split, _no_split_modules)."""
    units = _unit_params(e)
    names = list(units)
    blocks = [i for i, name in enumerate(names) if _is_block(name)]
    total = sum(units.values())
    if not blocks or total == 0:
        return 1.0
    first, last = blocks[0], blocks[-1]
    edges = (sum(units[n] for n in names[:first]), sum(units[n] for n in names[last + 1 :]))
    held, start = [], 0
    for stage, size in enumerate(pipeline_layers(len(blocks), count)):
        params = sum(units[names[i]] for i in blocks[start : start + size])
        held.append(params + (edges[0] if stage == 0 else 0) + (edges[1] if stage == count - 1 else 0))
        start += size
    return max(held) / total


def largest_layer_params(e: Estimate) -> int:
    """Parameters of the largest unit ZeRO-3 / FSDP gathers at once: a whole transformer block, as FSDP wraps
    one (torchtune's shard_model fully_shards each decoder layer; accelerate's TRANSFORMER_BASED_WRAP wraps
    the model's _no_split_modules), or a layer outside the blocks. DeepSpeed's stage3_prefetch_bucket_size
    (5e8 parameters by default) can hold more gathered ahead; not counted."""
    return max(_unit_params(e).values(), default=0)


def gathered_weight_bytes(e: Estimate) -> float:
    """The weights ZeRO-3 / FSDP all-gathers once per pass: the parameters in their dtype for full training
    (the existing rule), the weights as stored (e.g. 4-bit NF4) where the base is frozen."""
    if e.workload.finetune == Finetune.FULL:
        return float(e.param_count * e.workload.param_dtype_bytes)
    return float(e.memory.at_peak.weights)


def _gather_buffer_bytes(e: Estimate) -> float:
    """Two gather units (one in use, the next prefetched) at the gathered bytes per parameter."""
    return 2 * largest_layer_params(e) * gathered_weight_bytes(e) / max(e.param_count, 1)


def root_gathered_bytes(e: Estimate) -> int:
    """The root's flat parameter gathered whole: every layer outside the blocks (the embedding, the final
    norm, the head), at the half precision a frozen base keeps them in (wrap_units). FSDP keeps the root
    gathered from its forward into backward (torch/distributed/fsdp/_runtime_utils.py _post_forward_reshard
    frees the unsharded flat parameter only for a non-root), so it is on the card at the step's peak beside
    the block being computed."""
    outside = sum(n for name, n in _unit_params(e).items() if not _is_block(name))
    return outside * e.workload.param_dtype_bytes


def wrap_units(e: Estimate) -> tuple[tuple[int, ...], ...]:
    """The parameter tensors FSDP's transformer wrapping initialises, unit by unit, in bytes: each block
    (_gather_unit), then the root with every layer outside the blocks (transformer_auto_wrap_policy wraps
    only the decoder layers). Outside the blocks (embedding, norm, head) a frozen base keeps its half
    precision (bitsandbytes and GPTQ quantize the blocks' linears); the blocks hold the rest of the stored
    weights, at their mean bytes per parameter."""
    units = {name: held for name, counts in _unit_layers(e).items() if (held := tuple(n for n in counts if n))}
    root = [n for name, params in units.items() if not _is_block(name) for n in params]
    half = e.workload.param_dtype_bytes
    block_params = e.param_count - sum(root)
    if e.workload.finetune == Finetune.FULL or block_params <= 0:
        block_bytes = float(half)
    else:
        block_bytes = (e.memory.at_peak.weights - sum(root) * half) / block_params
    blocks = [tuple(int(n * block_bytes) for n in params) for name, params in units.items() if _is_block(name)]
    return (*blocks, tuple(n * half for n in root))


def zero3_reserved_floor_bytes(e: Estimate, count: int) -> int:
    """_zero3_reserved_floor_bytes, replayed once per estimate and count."""
    return _once("zero3 floor", e, count, lambda: _zero3_reserved_floor_bytes(e, count))


def _zero3_reserved_floor_bytes(e: Estimate, count: int) -> int:
    """The least one of `count` cards reserves at a ZeRO-3 / FSDP step's peak: its compute stream's
    reservation, and, on top of it because the allocator cannot place them in that stream's cache, the
    gathered parameters (FSDP's unshard stream: two gather units and the root, root_gathered_bytes) and the
    sharded gradients the reduce-scatter writes (its post-backward stream). The compute stream's is the
    step's own allocations replayed into what wrapping the model left cached (core/sharded_init.py
    fsdp_step_reserved), where the estimate kept its replay's events; else that cache alone, and the
    optimizer state on top where its tensors are small-pool requests (at most 1 MiB a shard, as a LoRA
    adapter's): torch.optim makes it lazily at the first step, and the wrap's cache is all large-pool
    blocks, which the allocator never hands to a small request."""
    trainable = e.trainable_param_count if e.workload.training else 0
    sharded_grads = -(-trainable * e.workload.trainable_dtype_bytes // count)
    gathered = root_gathered_bytes(e) + int(_gather_buffer_bytes(e))
    if e.step_events:
        return fsdp_step_reserved(wrap_units(e), count, e.step_events) + gathered + sharded_grads
    wrap = fsdp_wrap_replay(wrap_units(e), count)
    tensors = max(sum(row.param_tensors for row in e.layers), 1)
    state_tensor_bytes = trainable * e.workload.trainable_dtype_bytes / tensors / count
    small_state = e.memory.at_peak.optimizer_state // count if state_tensor_bytes <= SMALL_SIZE else 0
    return wrap.reserved_bytes + gathered + sharded_grads + small_state


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
    if plan is Plan.LAYER_SPLIT:  # each card keeps its blocks' model state; activations stay whole (conservative)
        kept = stage_param_share(e, count)
        state = m.weights + m.gradients + m.optimizer_state
        return PlanCost(plan, count, int(state * (1 - kept)), 0.0, stages=count, weight_share=kept)
    saved = share * m.optimizer_state
    if plan.zero_stage >= 2:
        saved += share * m.gradients
    comm = 2 * share * grads
    if plan.zero_stage == 3:  # two gather buffers (one unit and the next, prefetched), at the gathered bytes per
        # param, and the root's parameters, gathered whole through forward and backward
        saved += share * m.weights - _gather_buffer_bytes(e) - root_gathered_bytes(e)
        comm = share * (2 * gathered + grads if e.workload.training else gathered)
    return PlanCost(plan, count, int(saved), comm)
