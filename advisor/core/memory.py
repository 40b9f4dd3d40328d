"""The memory of one step as a timeline, not a sum.

Replays what PyTorch does with every tensor: the forward pass allocates layer outputs and frees each one
after its last reader unless autograd saved it; backward walks the layers in reverse, allocating
activation gradients and parameter gradients while it releases what each layer saved; the optimizer step
adds its temporaries. Steady state of a training loop that calls zero_grad(set_to_none=True): optimizer
state exists from the start, gradients do not. The model's output and the loss stay referenced by the
caller until the step ends.

What is replayed (the graph at its dtypes, and every fact fixed before the first allocation) is a StepPlan
(core/step_plan.py); StepReplay holds only the replay's state.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from advisor.core.graph import HELD_TO_END
from advisor.core.model_state import Allocation, foreach_temporaries, model_state, per_tensor_temporary
from advisor.core.ops.io import Input
from advisor.core.step_plan import SAVED_BYTES, StepPlan
from advisor.core.step_records import ExtraTensor, MemoryProfile
from advisor.core.tracker import Key, Store, Tracker, rounded


class StepReplay:
    """The analytic path's replay of one step over the layer graph (the "simulated" path is the meta-device
    run of a real PyTorch module in advisor/importers/simulate). One replay runs once: run() answers a frozen
    MemoryProfile."""

    def __init__(self, plan: StepPlan) -> None:
        self.plan = plan
        self.tracker = Tracker()
        # forward's state: the storage each node's output lives in, the forward readers still to come and
        # the nodes that saved each storage for backward, and what stays referenced to the end
        self.storage: dict[int, Key] = {}
        self.fwd_uses: dict[Key, int] = defaultdict(int)
        self.savers: dict[Key, set[int]] = defaultdict(set)
        self.saved_by: dict[int, list[Key]] = defaultdict(list)
        self.held: set[Key] = set()
        # backward's state, empty until it runs: the gradient each node has been handed, and the references
        # to each gradient buffer
        self.grads: dict[int, Key] = {}
        self.grad_refs: dict[Key, int] = defaultdict(int)

    # ---- storage lifetimes
    def _maybe_free(self, key: Key) -> None:
        if self.fwd_uses.get(key, 0) <= 0 and not self.savers.get(key) and key not in self.held:
            self.tracker.free(key)

    def _save(self, i: int, key: Key) -> None:
        self.savers[key].add(i)
        self.saved_by[i].append(key)

    def _release_saved(self, i: int) -> None:
        for key in self.saved_by.pop(i, []):
            self.savers[key].discard(i)
            self._maybe_free(key)

    # ---- forward
    def forward_node(self, i: int, saving: bool, fresh: Store, uses: Sequence[int]) -> None:
        node, op = self.plan.nodes[i], self.plan.nodes[i].op
        self.tracker.mark("forward" if fresh is Store.OUT else "recompute", node.name)
        if isinstance(op, Input):
            key: Key = Key(Store.INPUT, i, 0)
            self.tracker.alloc(key, self.plan.nbytes(i), "inputs")
            self.storage[i] = key
            self.held.add(key)
            return
        released = False
        if op.is_view and not node.inputs:  # a view of the node's own parameter (a class token expanded)
            self.storage[i] = Key(Store.WEIGHTS, i, 0)
            self.held.add(self.storage[i])
        elif op.is_view or op.is_identity(self.plan.workload.training):
            self.storage[i] = self.storage[node.inputs[0]]
        else:
            released = self._compute(i, saving, fresh)
        self.fwd_uses[self.storage[i]] += len(uses)
        if fresh is Store.OUT and i in self.plan.outputs:
            self.held.add(self.storage[i])
        for source in () if released else node.inputs:
            self.fwd_uses[self.storage[source]] -= 1
            self._maybe_free(self.storage[source])

    def _compute(self, i: int, saving: bool, fresh: Store) -> bool:
        """Runs op i; True when it has let go of its inputs already (StepPlan.drops_input_once_cast)."""
        node, op = self.plan.nodes[i], self.plan.nodes[i].op
        casts: dict[int, Key] = {}
        for j, source in enumerate(node.inputs):
            size = self.plan.cast_bytes(i, j, source)
            if size:
                casts[j] = Key(Store.CAST, i, j)
                self.tracker.alloc(casts[j], size, "temporaries")
                if self.plan.keeps_cast(i):
                    self.held.add(casts[j])
        released = bool(casts) and self.plan.drops_input_once_cast(i)
        for source in node.inputs if released else ():
            self.fwd_uses[self.storage[source]] -= 1
            self._maybe_free(self.storage[source])
        weight_cast: Key = Key(Store.WEIGHT_CAST, i, 0)
        cast_weight = self.plan.weight_cast_bytes(i)
        if cast_weight is not None:
            # freed after the op unless saved: autocast's cache (autocast_mode.cpp cached_cast) is off under
            # inference_mode since PyTorch 2.11 (PR 165068), and in training backward keeps the cast anyway
            self.tracker.alloc(weight_cast, cast_weight, "temporaries")
        if op.inplace:
            self.storage[i] = self.storage[node.inputs[0]]
        else:
            self.storage[i] = Key(fresh, i, 0)
            self.tracker.alloc(self.storage[i], self.plan.nbytes(i), "activations")
        if saving:
            self._save_for_backward(i, casts, weight_cast, fresh)
        if op.casts_freed_before_workspace():
            for key in casts.values():
                self._maybe_free(key)
        transients = self.plan.forward_transients(i, saving)
        for k, size in enumerate(transients):  # the worst moment inside the op: allocated and freed at once
            self.tracker.alloc(Key(Store.FWD_WORKSPACE, i, k), size, "temporaries")
        for k in range(len(transients)):
            self.tracker.free(Key(Store.FWD_WORKSPACE, i, k))
        for key in [*casts.values(), weight_cast]:
            self._maybe_free(key)
        return released

    def _save_for_backward(self, i: int, casts: dict[int, Key], weight_cast: Key, fresh: Store) -> None:
        """What autograd keeps of op i for its backward: inputs (as cast), its result, its extra tensors and
        the half copy of its weight."""
        node, op = self.plan.nodes[i], self.plan.nodes[i].op
        needs = [self.plan.requires_grad[s] for s in node.inputs]
        for j in () if self.plan.frozen_linear(i) else op.inputs_saved(needs):
            if j < len(node.inputs):
                self._save(i, casts.get(j, self.storage[node.inputs[j]]))
        if self.plan.int8_matmul(i) and needs[:1] == [True]:
            # MatMul8bitLt keeps its input as it came (`ctx.tensors = (CAt, subA, A)` when
            # any(ctx.needs_input_grad[:2]), bitsandbytes 0.39.0 0f40fa3 and 95f9af3), frozen or adapted alike
            self._save(i, self.storage[node.inputs[0]])
        if op.saves_result():
            self._save(i, self.storage[i])
        for k, extra in enumerate(op.extra_saved(self.plan.specs[i], node.output, True)):
            copy = extra.dtype == "autocast_float32"
            if copy and (not self.plan.workload.amp or self.plan.dtype[i] == 4):
                continue  # autocast copies only half-precision tensors
            kind = Store.AUTOCAST_COPY if copy else Store.EXTRA if fresh is Store.OUT else Store.RE_EXTRA
            key = Key(kind, i, k)
            element = self.plan.dtype[node.inputs[0]] if extra.dtype == "input" else SAVED_BYTES.get(extra.dtype)
            self.tracker.alloc(key, self.plan.nbytes(i, extra.numel, element), "activations")
            self._save(i, key)
        if not self.plan.dequantizes(i):  # MatMul4Bit saves the packed weight and dequantizes again in backward
            self._save(i, weight_cast)

    def _hold(self, i: int, taken: dict[int, list[int]], released: dict[int, list[int]]) -> None:
        """Graph.holds: a reference taken once node i's output exists, dropped once the holding node has run."""
        for until in taken.get(i, ()):
            if until == HELD_TO_END:
                self.held.add(self.storage[i])
            self.fwd_uses[self.storage[i]] += until != HELD_TO_END
        for held in released.get(i, ()):
            self.fwd_uses[self.storage[held]] -= 1
            self._maybe_free(self.storage[held])

    def forward(self) -> None:
        checkpointed = {i for block in self.plan.blocks for i in block}
        first_of = {block[0]: set(block) for block in self.plan.blocks}
        # references the model's Python code keeps: traced (Graph.holds) and transformers' decoder base model
        # (core/llm/lifetimes.py)
        taken, released = self.plan.graph.hold_schedule(self.plan.held_references())
        extra = self.plan.extra_tensors
        for i in range(len(self.plan.nodes)):
            self._drop_extra(extra, i)
            if i in first_of:  # the checkpoint keeps the block's inputs until the block's backward is done
                outside = {s for k in first_of[i] for s in self.plan.nodes[k].inputs if s not in first_of[i]}
                for source in sorted(outside):
                    self._save(i, self.storage[source])
            self.forward_node(
                i, self.plan.workload.training and i not in checkpointed, Store.OUT, self.plan.consumers[i]
            )
            self._hold(i, taken, released)
            for k, tensor in enumerate(extra):
                if tensor.after == i:
                    self.tracker.alloc(Key(Store.BASE_MODEL, k, 0), tensor.nbytes, "temporaries")
        self._drop_extra(extra, len(self.plan.nodes))

    def _drop_extra(self, extra: Sequence[ExtraTensor], at: int) -> None:
        for k in (k for k, tensor in enumerate(extra) if tensor.release == at):
            self.tracker.free(Key(Store.BASE_MODEL, k, 0))

    # ---- backward
    def _give_grad(self, source: int, key: Key) -> None:
        """Hands one reference to a gradient to a tensor. A second arrival is added in place into the first
        (autograd's InputBuffer accumulates into a buffer it owns) and its reference dropped."""
        if source in self.grads:
            self._drop_grad(key)
        else:
            self.grads[source] = key

    def _drop_grad(self, key: Key) -> None:
        self.grad_refs[key] -= 1
        if self.grad_refs[key] <= 0:
            self.tracker.free(key)

    def _input_grads(self, i: int, grad: Key) -> None:
        node, op = self.plan.nodes[i], self.plan.nodes[i].op
        for j, source in enumerate(node.inputs):
            if not self.plan.requires_grad[source]:
                continue
            if (op.grad_passthrough or op.is_view or op.is_identity(True)) and not self.plan.part_view(i, j):
                self.grad_refs[grad] += 1
                self._give_grad(source, grad)
                continue
            spec = self.plan.specs[i][j]
            cast = self.plan.cast_bytes(i, j, source)
            if cast:  # the gradient arrives in the op's dtype; the cast's own backward converts it back
                self.tracker.alloc(Key(Store.GRAD_CAST, i, j), cast, "temporaries")
                self.tracker.free(Key(Store.WORKSPACE, i, 0))
                self._release_saved(i)
            key: Key = Key(Store.GRAD, i, j)
            self.tracker.alloc(
                key,
                spec.numel * (self.plan.workload.batch if spec.batched else 1) * self.plan.dtype[source],
                "temporaries",
            )
            self.tracker.free(Key(Store.GRAD_CAST, i, j))
            self.tracker.free(Key(Store.WORKSPACE, i, 0))
            self.grad_refs[key] += 1
            self._give_grad(source, key)

    def _param_grads(self, i: int) -> None:
        node = self.plan.nodes[i]
        numel = self.plan.trainable(i) if self.plan.frozen else self.plan.weight_numel(i)
        if not numel:
            return
        tied = getattr(node.op, "tied_to", "")
        owner = next((k for k, n in enumerate(self.plan.nodes) if n.name == tied), i) if tied else i
        if self.plan.workload.amp and node.op.amp == "lower" and node.op.casts_weight:
            self.tracker.alloc(Key(Store.PARAM_GRAD_HALF, i, 0), 2 * numel, "temporaries")
        final: Key = Key(Store.PARAM_GRAD, owner, 0)
        if final in self.tracker.live:  # a shared weight's second gradient is added into .grad, then freed
            self.tracker.alloc(
                Key(Store.PARAM_GRAD_EXTRA, i, 0), numel * self.plan.workload.trainable_dtype_bytes, "temporaries"
            )
            self.tracker.free(Key(Store.PARAM_GRAD_EXTRA, i, 0))
        else:
            self.tracker.alloc(final, numel * self.plan.workload.trainable_dtype_bytes, "gradients")
        self.tracker.free(Key(Store.PARAM_GRAD_HALF, i, 0))
        if self.plan.offload:  # the gradient leaves for the host through the bucket allocated in setup
            self.tracker.free(final)

    def _recompute(self, block: Sequence[int]) -> None:
        """torch.utils.checkpoint's recomputation (non-reentrant, the transformers 5.x default,
        modeling_utils.py _activation_checkpointing_enable): it keeps only what the recomputed ops save, so a
        recomputed output no op of the block reads (the block's own output) is dropped at once."""
        inside = set(block)
        for i in block:
            uses = [c for c in self.plan.consumers[i] if c in inside]
            self.forward_node(i, True, Store.RECOMPUTED, uses)
            if not uses:
                self._maybe_free(self.storage[i])

    def backward(self) -> None:
        last = len(self.plan.nodes) - 1
        self.tracker.mark("backward", self.plan.nodes[last].name)
        self.tracker.alloc(Key(Store.GRAD, last, -1), self.plan.nbytes(last), "temporaries")  # d loss / d loss = 1
        self.grads[last] = Key(Store.GRAD, last, -1)
        self.grad_refs[Key(Store.GRAD, last, -1)] = 1
        ends = {block[-1]: block for block in self.plan.blocks}
        for i in reversed(range(len(self.plan.nodes))):
            if i in ends:
                self._recompute(ends[i])
            self.tracker.mark("backward", self.plan.nodes[i].name)
            grad = self.grads.pop(i, None)
            if grad is not None:
                self._backward_node(i, grad)
            self._release_saved(i)

    def _backward_node(self, i: int, grad: Key) -> None:
        node = self.plan.nodes[i]
        workspace = node.op.backward_workspace(self.plan.specs[i], node.output)
        fp32 = node.op.amp == "fp32" or node.op.float32_workspace
        self.tracker.alloc(
            Key(Store.WORKSPACE, i, 0), self.plan.nbytes(i, workspace, 4 if fp32 else None), "temporaries"
        )
        for key in [k for k in self.saved_by.get(i, []) if k.store is Store.AUTOCAST_COPY]:  # its gradient exists now
            self.saved_by[i].remove(key)
            self.savers[key].discard(i)
            self._maybe_free(key)
        weight = self.plan.backward_weight_bytes(i)
        if weight:  # freed with the workspace, once the input's gradient exists
            self.tracker.alloc(Key(Store.WORKSPACE, i, 1), weight, "temporaries")
        self._input_grads(i, grad)
        self._param_grads(i)
        self.tracker.free(Key(Store.WORKSPACE, i, 0))
        self.tracker.free(Key(Store.WORKSPACE, i, 1))
        self._drop_grad(grad)

    # ---- model state and the optimizer (core/model_state.py)
    def _alloc(self, allocation: Allocation) -> None:
        self.tracker.alloc(allocation.key, allocation.nbytes, allocation.category)
        if allocation.held:
            self.held.add(allocation.key)

    def setup(self) -> None:
        for allocation in model_state(self.plan):
            self._alloc(allocation)

    def optimizer_step(self) -> None:
        self.tracker.mark("optimizer step", self.plan.workload.optimizer)
        foreach = foreach_temporaries(self.plan)
        for allocation in foreach:
            self._alloc(allocation)
        for allocation in foreach:
            self.tracker.free(allocation.key)
        largest = per_tensor_temporary(self.plan)
        self._alloc(largest)
        self.tracker.free(largest.key)

    def run(self) -> MemoryProfile:
        self.setup()
        self.forward()
        kept = [0] * len(self.plan.nodes)
        for key, (size, _) in self.tracker.live.items():
            if self.savers.get(key):
                kept[key.node] += size
        if self.plan.workload.training:
            self.backward()
            self.optimizer_step()
        t = self.tracker
        t.mark("end", "")
        phase, layer = t.peak_where
        return MemoryProfile(
            t.peak_bytes,
            t.peak_breakdown(),
            phase,
            layer,
            t.peak_fixed,
            tuple(kept),
            tuple(t.timeline),
            tuple(t.events),
            tuple(t.after_alloc),
            t.live_count_max,
        )


__all__ = ["StepReplay", "rounded"]
