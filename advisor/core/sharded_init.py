"""What FSDP's wrapping leaves reserved on a card before training starts, replayed through the allocator model.

FullyShardedDataParallel (FSDP1, torch 2.2 as Answer.AI's fsdp_qlora train.py@4cd69234f84d wraps Llama-2 with
it, sync_module_states=True under its default --low_memory) initialises one wrapped unit at a time, innermost
first (the decoder blocks, then the root, which holds every parameter no block took: the embedding, the final
norm, the head), and for each (torch/distributed/fsdp/_init_utils.py _init_param_handle_from_module):
1. moves the unit's parameters to the card (_move_module_to_device: one allocation per tensor);
2. with sync_module_states, broadcasts them from rank 0 (_sync_module_params_and_buffers ->
   dist._broadcast_coalesced, torch/csrc/distributed/c10d/comm.cpp broadcast_coalesced: the tensors in
   buckets of 250 MiB (PARAM_BROADCAST_BUCKET_SIZE), a bucket closed once it reaches the size, each bucket
   flattened into one new tensor, at most two buckets in flight);
3. flattens them into one FlatParameter (_flat_param.py flatten_tensors: torch.cat; the originals become
   views of it and their blocks are freed);
4. shards it (FlatParamHandle.shard -> _get_shard: chunk.clone() of this rank's 1/N, rounded up) and frees
   the unsharded storage (resize_(0)).
The blocks freed on the way stay in the caching allocator (train.py calls no empty_cache after wrapping, and
torch.cuda.reset_peak_memory_stats keeps the reservation as the new peak): reserved_after_model_wrap, 3.72 GiB
for Llama-2 7B QLoRA on two cards in Answer.AI's benchmarks_03_2024.md, against about 1.9 GiB of sharded
weights. The step can place its own compute-stream allocations in that cache, but not the all-gathered
parameters (FSDP allocates them on its unshard stream) or the reduce-scattered gradients (its post-backward
stream): the caching allocator only hands a free block to a request on the stream it was allocated on
(c10/cuda/CUDACachingAllocator.cpp: a BlockPool's free blocks are ordered by stream first, and get_free_block
looks up (stream, size)).

fsdp_step_reserved replays the training loop's compute-stream allocations on top of that cache, as one card
makes them: the weights are its shards (held since wrapping), the optimizer state is 1/N of the model's
(torch.optim steps the sharded flat parameters), and each unit's unsharded gradient lives only until FSDP's
post-backward hook has reduce-scattered it (_runtime_utils.py _post_backward_hook frees it once the
reduce-scatter, on its own stream, has read it); the rest (activations, their gradients, casts, the loss)
is the step as one card runs it whole.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import count

from advisor.core.allocator import CachingAllocatorModel, training_loop_events
from advisor.core.tracker import Key, Store

BROADCAST_BUCKET_BYTES = 250 * 1024 * 1024  # torch/distributed/fsdp/_init_utils.py PARAM_BROADCAST_BUCKET_SIZE
BROADCASTS_IN_FLIGHT = 2  # comm.cpp broadcast_coalesced: max_in_flight


@dataclass(frozen=True)
class WrapReplay:
    """One card after FSDP wrapped the model."""

    reserved_bytes: int  # the allocator's segments: torch.cuda.memory_reserved() after wrapping
    allocated_bytes: int  # the sharded flat parameters that stay


def broadcast_buckets(tensor_bytes: Sequence[int], bucket_bytes: int = BROADCAST_BUCKET_BYTES) -> list[int]:
    """The flattened buckets broadcast_coalesced makes of one unit's tensors (all of one dtype here)."""
    buckets, size = [], 0
    for tensor in tensor_bytes:
        size += tensor
        if size >= bucket_bytes:
            buckets.append(size)
            size = 0
    return buckets + ([size] if size else [])


class _Replay:
    def __init__(self) -> None:
        self.model = CachingAllocatorModel()
        self._slots = count()

    def alloc(self, size: int) -> Key:
        key = Key(Store.WEIGHTS, -1, next(self._slots))
        self.model.malloc(key, size)
        return key

    def unit(self, tensor_bytes: Sequence[int], world_size: int, sync_module_states: bool) -> None:
        params = [self.alloc(size) for size in tensor_bytes if size > 0]
        if sync_module_states:
            flight: list[Key] = []
            for bucket in broadcast_buckets(tensor_bytes):
                if len(flight) >= BROADCASTS_IN_FLIGHT:
                    self.model.release(flight.pop(0))
                flight.append(self.alloc(bucket))
            for key in flight:
                self.model.release(key)
        total = sum(tensor_bytes)
        flat = self.alloc(total)
        for key in params:
            self.model.release(key)
        if world_size > 1:  # NO_SHARD keeps the flat parameter whole
            self.alloc(-(-total // world_size))
            self.model.release(flat)


def fsdp_wrap_replay(units: Sequence[Sequence[int]], world_size: int, sync_module_states: bool = True) -> WrapReplay:
    """Replays FSDP's initialisation of `units` (each unit's parameter tensors in bytes, in wrapping order)
    on one of `world_size` cards sharding them (FULL_SHARD; 1: NO_SHARD)."""
    replay = _Replay()
    for tensors in units:
        replay.unit(tensors, world_size, sync_module_states)
    return WrapReplay(replay.model.peak_reserved, replay.model.allocated)


def card_step_events(events: Sequence[tuple[Key, int]], world_size: int) -> Iterator[tuple[Key, int]]:
    """One card's share of a whole-model step's allocation events under FULL_SHARD (the module docstring):
    no weight allocations, optimizer state divided (rounded up), each parameter gradient freed as it is
    made."""
    for key, size in events:
        if key.store == Store.WEIGHTS:
            continue
        if key.store == Store.OPTIMIZER_STATE:
            yield key, (1 if size > 0 else -1) * -(-abs(size) // world_size)
        elif key.store == Store.PARAM_GRAD:
            if size > 0:
                yield key, size
                yield key, -size
        else:
            yield key, size


def fsdp_step_reserved(units: Sequence[Sequence[int]], world_size: int, step_events: Sequence[tuple[Key, int]]) -> int:
    """The most one of `world_size` cards reserves on its compute stream: FSDP's wrapping of `units`
    (fsdp_wrap_replay), then two iterations of the training loop of the step's events as that card makes
    them (card_step_events; allocator.training_loop_events), in the blocks the wrap left cached and new ones."""
    replay = _Replay()
    for tensors in units:
        replay.unit(tensors, world_size, sync_module_states=True)
    replay.model.replay(training_loop_events(list(card_step_events(step_events, world_size))))
    return replay.model.peak_reserved
