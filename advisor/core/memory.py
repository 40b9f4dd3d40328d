"""The memory of one step as a timeline, not a sum.

Replays what PyTorch does with every tensor: the forward pass allocates layer outputs and frees each one
after its last reader unless autograd saved it; backward walks the layers in reverse, allocating
activation gradients and parameter gradients while it releases what each layer saved; the optimizer step
adds its temporaries. Steady state of a training loop that calls zero_grad(set_to_none=True): optimizer
state exists from the start, gradients do not. The model's output and the loss stay referenced by the
caller until the step ends.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import replace

from advisor.core.call_frames import module_arguments
from advisor.core.gradients import requires_grad, trainable_params, trained_tensors
from advisor.core.graph import HELD_TO_END, Graph, Node, TensorSpec
from advisor.core.offload import bucket_bytes, gpu_weight_dtype_bytes
from advisor.core.ops.io import Input
from advisor.core.ops.linear import Linear
from advisor.core.ops.loss import CrossEntropy
from advisor.core.optimizers import per_tensor_step_bytes, state_blocks
from advisor.core.step_dtypes import cast_bytes, element_bytes
from advisor.core.step_records import ExtraTensor, MemoryProfile, ModelFacts
from advisor.core.tracker import Key, Store, Tracker, rounded
from advisor.core.workload import OPTIMIZER_STEP_TEMPORARIES, Workload

_SAVED_BYTES = {"float32": 4, "int64": 8, "bool": 1, "autocast_float32": 4}


class StepReplay:
    """The analytic path's replay of one step over the layer graph (the "simulated" path is the meta-device
    run of a real PyTorch module in advisor/importers/simulate)."""

    def __init__(self, graph: Graph, workload: Workload, facts: ModelFacts) -> None:
        self.graph, self.workload, self.facts = graph, workload, facts
        self.nodes = graph.nodes
        self.specs = [[graph.nodes[s].output for s in n.inputs] for n in graph.nodes]
        self.consumers = graph.consumers()
        self.tracker = Tracker()
        self.storage: dict[int, Key] = {}
        self.fwd_uses: dict[Key, int] = defaultdict(int)
        self.savers: dict[Key, set[int]] = defaultdict(set)
        self.saved_by: dict[int, list[Key]] = defaultdict(list)
        self.held: set[Key] = set()
        # backward's state, empty until it runs: the gradient each node has been handed, and the references
        # to each gradient buffer
        self.grads: dict[int, Key] = {}
        self.grad_refs: dict[Key, int] = defaultdict(int)
        self.frozen = workload.finetune != "full"  # LoRA/QLoRA: only the adapters train
        self.offload = workload.offload is not None and workload.training
        self.dtype = element_bytes(self.nodes, self.specs, workload)
        # the kernel each op runs at its compute dtype (fp32 grouped-query attention takes the math path)
        self.nodes = tuple(
            replace(n, op=n.op.for_dtype(d, workload.amp)) for n, d in zip(self.nodes, self.dtype, strict=True)
        )
        self.requires_grad = requires_grad(graph, workload)
        self.blocks = self._checkpoint_blocks() if workload.checkpointing and workload.training else []
        # the caller keeps the model's output (and the loss) referenced until the step ends, unless its loop
        # drops the output before backward (Workload.drops_logits)
        self.outputs = {i for i, users in enumerate(self.consumers) if not users}
        if isinstance(self.nodes[-1].op, CrossEntropy) and not workload.drops_logits:
            self.outputs.update(self.nodes[-1].inputs)

    # ---- static facts
    def trainable(self, i: int) -> int:
        """Parameters of node i that get gradients and optimizer state (only adapters when frozen)."""
        return trainable_params(self.nodes[i].op, self.specs[i], self.workload)

    def _frozen_linear(self, i: int) -> bool:
        """A frozen Linear (no adapters of its own) keeps nothing of its input for backward."""
        return self.frozen and isinstance(self.nodes[i].op, Linear) and not self.trainable(i)

    def _checkpoint_blocks(self) -> list[list[int]]:
        return self.graph.checkpoint_segments()

    def nbytes(self, i: int, numel: int | None = None, dtype_bytes: int | None = None) -> int:
        """Bytes of node i's output, or of something else it allocates per sample (numel given)."""
        spec = self.nodes[i].output
        batched = spec.batched if numel is None else spec.batched or any(s.batched for s in self.specs[i])
        count = spec.numel if numel is None else numel
        return count * (self.workload.batch if batched else 1) * (dtype_bytes or self.dtype[i])

    def weight_numel(self, node: Node, specs: list[TensorSpec]) -> int:
        if isinstance(node.op, Linear) and node.op.tied_to:
            return specs[0].shape[-1] * node.op.out_features
        return node.op.param_count(specs)

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

    def _cast_bytes(self, i: int, j: int, source: int) -> int:
        return cast_bytes(self.nodes[i], self.specs[i][j], self.dtype[source], self.workload)

    # ---- forward
    def forward_node(self, i: int, saving: bool, fresh: Store, uses: list[int]) -> None:
        node, op = self.nodes[i], self.nodes[i].op
        self.tracker.mark("forward" if fresh is Store.OUT else "recompute", node.name)
        if isinstance(op, Input):
            key: Key = Key(Store.INPUT, i, 0)
            self.tracker.alloc(key, self.nbytes(i), "inputs")
            self.storage[i] = key
            self.held.add(key)
            return
        if op.is_view and not node.inputs:  # a view of the node's own parameter (a class token expanded)
            self.storage[i] = Key(Store.WEIGHTS, i, 0)
            self.held.add(self.storage[i])
        elif op.is_view or op.is_identity(self.workload.training):
            self.storage[i] = self.storage[node.inputs[0]]
        else:
            self._compute(i, saving, fresh)
        self.fwd_uses[self.storage[i]] += len(uses)
        if fresh is Store.OUT and i in self.outputs:
            self.held.add(self.storage[i])
        for source in node.inputs:
            self.fwd_uses[self.storage[source]] -= 1
            self._maybe_free(self.storage[source])

    def _compute(self, i: int, saving: bool, fresh: Store) -> None:
        node, op, specs = self.nodes[i], self.nodes[i].op, self.specs[i]
        casts: dict[int, Key] = {}
        for j, source in enumerate(node.inputs):
            size = self._cast_bytes(i, j, source)
            if size:
                casts[j] = Key(Store.CAST, i, j)
                self.tracker.alloc(casts[j], size, "temporaries")
        weight_cast: Key = Key(Store.WEIGHT_CAST, i, 0)
        dequantized = self._dequantizes(i)
        fp32_stored = (
            (self.workload.training and not self.frozen)
            or self.workload.weight_format == "fp32"
            or (self.workload.kbit_prepared and not dequantized and i not in self.facts.int8_matmuls)
        )  # the fp32 LM head of QLoRA and of LoRA on int8
        # offloaded training keeps 16-bit weights on the GPU: nothing for autocast to cast
        autocast = self.workload.amp and op.amp == "lower" and op.casts_weight and fp32_stored and not self.offload
        if dequantized or autocast:  # bnb dequantizes, autocast casts
            # freed after the op unless saved: autocast's cache (autocast_mode.cpp cached_cast) is off under
            # inference_mode since PyTorch 2.11 (PR 165068), and in training backward keeps the cast anyway
            self.tracker.alloc(weight_cast, 2 * self.weight_numel(node, specs), "temporaries")
        if op.inplace:
            self.storage[i] = self.storage[node.inputs[0]]
        else:
            self.storage[i] = Key(fresh, i, 0)
            self.tracker.alloc(self.storage[i], self.nbytes(i), "activations")
        if saving:
            needs = [self.requires_grad[s] for s in node.inputs]
            for j in () if self._frozen_linear(i) else op.inputs_saved(needs):
                if j < len(node.inputs):
                    self._save(i, casts.get(j, self.storage[node.inputs[j]]))
            if op.saves_result():
                self._save(i, self.storage[i])
            for k, extra in enumerate(op.extra_saved(specs, node.output, True)):
                copy = extra.dtype == "autocast_float32"
                if copy and (not self.workload.amp or self.dtype[i] == 4):
                    continue  # autocast copies only half-precision tensors
                kind = Store.AUTOCAST_COPY if copy else Store.EXTRA if fresh is Store.OUT else Store.RE_EXTRA
                key = Key(kind, i, k)
                element = self.dtype[node.inputs[0]] if extra.dtype == "input" else _SAVED_BYTES.get(extra.dtype)
                self.tracker.alloc(key, self.nbytes(i, extra.numel, element), "activations")
                self._save(i, key)
            if not dequantized:  # MatMul4Bit saves the packed weight and dequantizes again in backward
                self._save(i, weight_cast)
        if op.casts_freed_before_workspace():
            for key in casts.values():
                self._maybe_free(key)
        transients = self._forward_transients(i, specs, saving)
        for k, size in enumerate(transients):  # the worst moment inside the op: allocated and freed at once
            self.tracker.alloc(Key(Store.FWD_WORKSPACE, i, k), size, "temporaries")
        for k in range(len(transients)):
            self.tracker.free(Key(Store.FWD_WORKSPACE, i, k))
        for key in [*casts.values(), weight_cast]:
            self._maybe_free(key)

    def _forward_transients(self, i: int, specs: list[TensorSpec], saving: bool) -> list[int]:
        """Bytes of what op i allocates inside its forward beyond its output and what it saves: a composite's
        workspace and the tensors a kernel returns that are dropped at once (Op.forward_transients)."""
        node, op = self.nodes[i], self.nodes[i].op
        element = self.dtype[node.inputs[0]] if op.input_dtype_workspace else None
        workspace = op.forward_workspace(specs, node.output, saving)
        sizes = [self.nbytes(i, workspace, element)] if workspace else []
        return sizes + [
            self.nbytes(i, t.numel, _SAVED_BYTES.get(t.dtype))  # "act": the op's own dtype
            for t in op.forward_transients(specs, node.output, saving)
        ]

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
        checkpointed = {i for block in self.blocks for i in block}
        first_of = {block[0]: set(block) for block in self.blocks}
        # references the model's Python code keeps: traced (Graph.holds) and transformers' decoder base model
        # (core/llm/lifetimes.py)
        taken, released = self.graph.hold_schedule(self._held_references())
        extra = self.facts.extra_tensors
        for i in range(len(self.nodes)):
            self._drop_extra(extra, i)
            if i in first_of:  # the checkpoint keeps the block's inputs until the block's backward is done
                outside = {s for k in first_of[i] for s in self.nodes[k].inputs if s not in first_of[i]}
                for source in sorted(outside):
                    self._save(i, self.storage[source])
            self.forward_node(i, self.workload.training and i not in checkpointed, Store.OUT, self.consumers[i])
            self._hold(i, taken, released)
            for k, tensor in enumerate(extra):
                if tensor.after == i:
                    self.tracker.alloc(Key(Store.BASE_MODEL, k, 0), tensor.nbytes, "temporaries")
        self._drop_extra(extra, len(self.nodes))

    def _held_references(self) -> list[tuple[int, int]]:
        """Beyond Graph.holds (a traced graph's own, or a hand-built graph's Python locals): the model's, as
        its facts say (a decoder's: llm/lifetimes.py), or else the module calls' arguments of a graph with
        blocks (call_frames.py; a traced graph has none)."""
        return list(self.facts.held_references) or module_arguments(self.graph)

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
        node, op = self.nodes[i], self.nodes[i].op
        for j, source in enumerate(node.inputs):
            if not self.requires_grad[source]:
                continue
            if (op.grad_passthrough or op.is_view or op.is_identity(True)) and not self._part_view(i, j):
                self.grad_refs[grad] += 1
                self._give_grad(source, grad)
                continue
            spec = self.specs[i][j]
            cast = self._cast_bytes(i, j, source)
            if cast:  # the gradient arrives in the op's dtype; the cast's own backward converts it back
                self.tracker.alloc(Key(Store.GRAD_CAST, i, j), cast, "temporaries")
                self.tracker.free(Key(Store.WORKSPACE, i, 0))
                self._release_saved(i)
            key: Key = Key(Store.GRAD, i, j)
            self.tracker.alloc(
                key, spec.numel * (self.workload.batch if spec.batched else 1) * self.dtype[source], "temporaries"
            )
            self.tracker.free(Key(Store.GRAD_CAST, i, j))
            self.tracker.free(Key(Store.WORKSPACE, i, 0))
            self.grad_refs[key] += 1
            self._give_grad(source, key)

    def _part_view(self, i: int, j: int) -> bool:
        """A view of part of its input (select, slice, chunk; or an expand, which is bigger): its backward makes
        a new gradient of the input's size (select_backward: zeros, then the slice copied in), so a tensor
        read a slice at a time, as a recurrent scan does, gets one input-sized gradient per slice, each added
        into the first (derivatives.yaml: select, slice, narrow, expand)."""
        out, whole = self.nodes[i].output, self.specs[i][j]
        return self.nodes[i].op.is_view and (out.numel, out.batched) != (whole.numel, whole.batched)

    def _param_grads(self, i: int) -> None:
        node, specs = self.nodes[i], self.specs[i]
        numel = self.trainable(i) if self.frozen else self.weight_numel(node, specs)
        if not numel:
            return
        tied = getattr(node.op, "tied_to", "")
        owner = next((k for k, n in enumerate(self.nodes) if n.name == tied), i) if tied else i
        if self.workload.amp and node.op.amp == "lower" and node.op.casts_weight:
            self.tracker.alloc(Key(Store.PARAM_GRAD_HALF, i, 0), 2 * numel, "temporaries")
        final: Key = Key(Store.PARAM_GRAD, owner, 0)
        if final in self.tracker.live:  # a shared weight's second gradient is added into .grad, then freed
            self.tracker.alloc(
                Key(Store.PARAM_GRAD_EXTRA, i, 0), numel * self.workload.trainable_dtype_bytes, "temporaries"
            )
            self.tracker.free(Key(Store.PARAM_GRAD_EXTRA, i, 0))
        else:
            self.tracker.alloc(final, numel * self.workload.trainable_dtype_bytes, "gradients")
        self.tracker.free(Key(Store.PARAM_GRAD_HALF, i, 0))
        if self.offload:  # the gradient leaves for the host through the bucket allocated in setup
            self.tracker.free(final)

    def _recompute(self, block: list[int]) -> None:
        """torch.utils.checkpoint's recomputation (non-reentrant, the transformers 5.x default,
        modeling_utils.py _activation_checkpointing_enable): it keeps only what the recomputed ops save, so a
        recomputed output no op of the block reads (the block's own output) is dropped at once."""
        inside = set(block)
        for i in block:
            uses = [c for c in self.consumers[i] if c in inside]
            self.forward_node(i, True, Store.RECOMPUTED, uses)
            if not uses:
                self._maybe_free(self.storage[i])

    def backward(self) -> None:
        last = len(self.nodes) - 1
        self.tracker.mark("backward", self.nodes[last].name)
        self.tracker.alloc(Key(Store.GRAD, last, -1), self.nbytes(last), "temporaries")  # d loss / d loss = 1
        self.grads[last] = Key(Store.GRAD, last, -1)
        self.grad_refs[Key(Store.GRAD, last, -1)] = 1
        ends = {block[-1]: block for block in self.blocks}
        for i in reversed(range(len(self.nodes))):
            if i in ends:
                self._recompute(ends[i])
            self.tracker.mark("backward", self.nodes[i].name)
            grad = self.grads.pop(i, None)
            if grad is not None:
                self._backward_node(i, grad)
            self._release_saved(i)

    def _dequantizes(self, i: int) -> bool:
        """A quantized weight dequantized to 16 bit in forward and again in backward (ModelFacts)."""
        return self.facts.dequantizes[i]

    def _backward_node(self, i: int, grad: Key) -> None:
        node = self.nodes[i]
        workspace = node.op.backward_workspace(self.specs[i], node.output)
        fp32 = node.op.amp == "fp32" or node.op.float32_workspace
        self.tracker.alloc(Key(Store.WORKSPACE, i, 0), self.nbytes(i, workspace, 4 if fp32 else None), "temporaries")
        for key in [k for k in self.saved_by.get(i, []) if k.store is Store.AUTOCAST_COPY]:  # its gradient exists now
            self.saved_by[i].remove(key)
            self.savers[key].discard(i)
            self._maybe_free(key)
        if self._dequantizes(i):  # freed with the workspace, once the input's gradient exists
            self.tracker.alloc(Key(Store.WORKSPACE, i, 1), 2 * self.weight_numel(node, self.specs[i]), "temporaries")
        self._input_grads(i, grad)
        self._param_grads(i)
        self.tracker.free(Key(Store.WORKSPACE, i, 0))
        self.tracker.free(Key(Store.WORKSPACE, i, 1))
        self._drop_grad(grad)

    # ---- model state and the optimizer
    def setup(self) -> None:
        w = self.workload
        if self.offload:
            self._offload_buffers()
        for i in range(len(self.nodes)):
            self.tracker.alloc(Key(Store.WEIGHTS, i, 0), self.stored_weight_bytes(i), "weights")
            tensors = trained_tensors(self.nodes[i].op, self.specs[i], w) if w.training and not self.offload else []
            for slot, size in enumerate(state_blocks(w.optimizer, tensors, w.trainable_dtype_bytes)):
                self.tracker.alloc(Key(Store.OPTIMIZER_STATE, i, slot), size, "optimizer_state")
        loss = self.nodes[-1].op
        if isinstance(loss, CrossEntropy):  # the int64 class targets the data loader hands in
            key: Key = Key(Store.INPUT, len(self.nodes) - 1, 1)
            self.tracker.alloc(key, loss.target_count(self.specs[-1]) * 8 * self.workload.batch, "inputs")
            self.held.add(key)

    def _offload_buffers(self) -> None:
        """--offload: one gradient bucket; with params offloaded, two layer-sized weight buffers in flight."""
        trainable = sum(self.trainable(i) for i in range(len(self.nodes)))
        self.tracker.alloc(Key(Store.PARAM_GRAD, -1, 0), bucket_bytes(self.workload, trainable), "gradients")
        if self.workload.offload == "params":
            largest = max(n.op.param_count(s) for n, s in zip(self.nodes, self.specs, strict=True))
            for k in range(2):
                buffer = largest * gpu_weight_dtype_bytes(self.workload)
                self.tracker.alloc(Key(Store.WEIGHTS, -1, k), buffer, "weights")

    def stored_weight_bytes(self, i: int) -> int:
        """Weights and buffers of node i as stored: trained weights in the parameter dtype; frozen or
        inference weights in the workload's storage format (quantized Linears of the blocks, the rest 16-bit
        or as the format says), LoRA adapters in the parameter dtype."""
        node, specs, dtype = self.nodes[i], self.specs[i], self.workload.param_dtype_bytes
        if self.workload.offload == "params":
            return 0
        if self.workload.offload == "optimizer":
            dtype = gpu_weight_dtype_bytes(self.workload)
        if self.workload.training and not self.frozen:
            return (node.op.param_count(specs) + node.op.buffer_count(specs)) * dtype
        return self.facts.stored_weight_bytes[i]

    def optimizer_step(self) -> None:
        self.tracker.mark("optimizer step", self.workload.optimizer)
        temporaries = 0 if self.offload else OPTIMIZER_STEP_TEMPORARIES[self.workload.optimizer]
        keys = [Key(Store.OPTIMIZER_TEMPORARY, i, k) for i in range(len(self.nodes)) for k in range(temporaries)]
        for key in keys:  # foreach ops allocate one result per parameter tensor, all at once
            self.tracker.alloc(key, self.trainable(key.node) * self.workload.trainable_dtype_bytes, "temporaries")
        for key in keys:
            self.tracker.free(key)
        largest = (
            0
            if self.offload
            else max(
                (
                    per_tensor_step_bytes(self.workload.optimizer, trained_tensors(n.op, s, self.workload))
                    for n, s in zip(self.nodes, self.specs, strict=True)
                ),
                default=0,
            )
        )
        self.tracker.alloc(Key(Store.OPTIMIZER_TEMPORARY, -1, 0), largest, "temporaries")  # one tensor at a time
        self.tracker.free(Key(Store.OPTIMIZER_TEMPORARY, -1, 0))

    def run(self) -> MemoryProfile:
        self.setup()
        self.forward()
        kept = [0] * len(self.nodes)
        for key, (size, _) in self.tracker.live.items():
            if self.savers.get(key):
                kept[key.node] += size
        if self.workload.training:
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
