"""What one step allocates besides its activations, as a StepPlan says: the model's state before the first op
(weights as stored, optimizer state, offload buffers, the loss's targets) and the optimizer step's
temporaries. core/memory.py StepReplay allocates them in this order."""

from __future__ import annotations

from dataclasses import dataclass

from advisor.core.gradients import trained_tensors
from advisor.core.offload import bucket_bytes, gpu_weight_dtype_bytes
from advisor.core.ops.loss import CrossEntropy
from advisor.core.optimizers import per_tensor_step_bytes, state_blocks
from advisor.core.step_plan import StepPlan
from advisor.core.tracker import Key, Store
from advisor.core.workload import OPTIMIZER_STEP_TEMPORARIES, Offload


@dataclass(frozen=True)
class Allocation:
    key: Key
    nbytes: int
    category: str
    held: bool = False  # referenced until the step ends (the data loader's targets)


def model_state(plan: StepPlan) -> list[Allocation]:
    """Steady state of a training loop that calls zero_grad(set_to_none=True): weights and optimizer state
    exist from the start, gradients do not."""
    w = plan.workload
    out = _offload_buffers(plan) if plan.offload else []
    for i in range(len(plan.nodes)):
        out.append(Allocation(Key(Store.WEIGHTS, i, 0), plan.stored_weight_bytes(i), "weights"))
        tensors = trained_tensors(plan.nodes[i].op, plan.specs[i], w) if w.training and not plan.offload else []
        for slot, size in enumerate(state_blocks(w.optimizer, tensors, w.trainable_dtype_bytes)):
            out.append(Allocation(Key(Store.OPTIMIZER_STATE, i, slot), size, "optimizer_state"))
    loss = plan.nodes[-1].op
    if isinstance(loss, CrossEntropy):  # the int64 class targets the data loader hands in
        targets = loss.target_count(plan.specs[-1]) * 8 * w.batch
        out.append(Allocation(Key(Store.INPUT, len(plan.nodes) - 1, 1), targets, "inputs", held=True))
    return out


def _offload_buffers(plan: StepPlan) -> list[Allocation]:
    """--offload: one gradient bucket; with params offloaded, two layer-sized weight buffers in flight."""
    trainable = sum(plan.trainable(i) for i in range(len(plan.nodes)))
    out = [Allocation(Key(Store.PARAM_GRAD, -1, 0), bucket_bytes(plan.workload, trainable), "gradients")]
    if plan.workload.offload == Offload.PARAMS:
        largest = max(n.op.param_count(s) for n, s in zip(plan.nodes, plan.specs, strict=True))
        buffer = largest * gpu_weight_dtype_bytes(plan.workload)
        out += [Allocation(Key(Store.WEIGHTS, -1, k), buffer, "weights") for k in range(2)]
    return out


def foreach_temporaries(plan: StepPlan) -> list[Allocation]:
    """The optimizer step's foreach ops: one result per parameter tensor, all allocated at once (none
    offloaded: the step runs on the host)."""
    w = plan.workload
    count = 0 if plan.offload else OPTIMIZER_STEP_TEMPORARIES[w.optimizer]
    keys = [Key(Store.OPTIMIZER_TEMPORARY, i, k) for i in range(len(plan.nodes)) for k in range(count)]
    return [Allocation(key, plan.trainable(key.node) * w.trainable_dtype_bytes, "temporaries") for key in keys]


def per_tensor_temporary(plan: StepPlan) -> Allocation:
    """The largest of the temporaries an optimizer makes one tensor at a time."""
    w = plan.workload
    steps = (
        per_tensor_step_bytes(w.optimizer, trained_tensors(n.op, s, w))
        for n, s in zip(plan.nodes, plan.specs, strict=True)
    )
    largest = 0 if plan.offload else max(steps, default=0)
    return Allocation(Key(Store.OPTIMIZER_TEMPORARY, -1, 0), largest, "temporaries")
