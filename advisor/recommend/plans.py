"""How N cards share one workload, and what that leaves on each card.

Data parallel (SLI, NVLink or PCIe alike) gives every card a full replica of the model: VRAM does not pool,
so the fit test is per card at the per-card batch. PyTorch's DistributedDataParallel also keeps flat
gradient buckets (gradient_as_bucket_view=False by default): one more gradient-sized buffer per card.
Sharding divides model state (ZeRO, Rajbhandari et al. 2020; FSDP): stage 1 the optimizer state, stage 2
also the gradients, stage 3 also the weights (each layer's weights are gathered for its forward and
backward: two layer-sized gather buffers). Communication per step (ring collectives move (N-1)/N of the
data per card): all-reduce of gradients = 2x gradient bytes for data parallel and ZeRO-1/2; ZeRO-3
all-gathers weights twice and reduce-scatters gradients = 3x. No overlap with compute is assumed.
"""

from __future__ import annotations

from dataclasses import dataclass

from advisor.core.estimate import Estimate

PLANS_TRAIN = ("data_parallel", "zero1", "zero2", "zero3")
PLANS_INFER = ("data_parallel", "zero3")


@dataclass(frozen=True)
class PlanCost:
    plan: str
    count: int
    saved_bytes: int  # model state this plan takes off each card (negative: it adds buffers)
    comm_bytes: float  # bytes each card sends per step


def plans_for(count: int, training: bool) -> tuple[str, ...]:
    if count == 1:
        return ("single",)
    return PLANS_TRAIN if training else PLANS_INFER


def largest_layer_params(e: Estimate) -> int:
    return max((row.param_count for row in e.layers), default=0)


def plan_cost(e: Estimate, plan: str, count: int) -> PlanCost:
    m, dtype = e.memory.at_peak, e.workload.param_dtype_bytes
    share = (count - 1) / count
    params_bytes = e.param_count * dtype
    grads = params_bytes if e.workload.training else 0
    if plan == "single":
        return PlanCost(plan, 1, 0, 0.0)
    if plan == "data_parallel":
        return PlanCost(plan, count, -grads, 2 * share * grads)
    saved = share * m.optimizer_state
    if plan in ("zero2", "zero3"):
        saved += share * m.gradients
    comm = 2 * share * grads
    if plan == "zero3":
        saved += share * m.weights - 2 * largest_layer_params(e) * dtype
        comm = share * params_bytes * (3 if e.workload.training else 1)
    return PlanCost(plan, count, int(saved), comm)
