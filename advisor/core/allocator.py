"""A model of PyTorch's CUDA caching allocator, replaying a step's allocations to predict what it reserves.

Rules from c10/cuda/CUDACachingAllocator.cpp (pytorch 001074d2, defaults, no PYTORCH_CUDA_ALLOC_CONF):
- requests of at most 1 MiB (kSmallSize) come from the small pool, carved out of 2 MiB segments
  (kSmallBuffer);
- larger requests come from the large pool: under 10 MiB (kMinLargeAlloc) from 20 MiB segments
  (kLargeBuffer), otherwise from a segment of exactly the request rounded up to 2 MiB (kRoundLarge):
  get_allocation_size;
- a request takes the smallest cached free block that fits (best fit: get_free_block's lower_bound; its
  "oversize" refusals apply only once max_split_size_mb is set); should_split splits off the rest of the
  block when at least 512 bytes (kMinBlockSize, small pool) or more than 1 MiB (large pool) would remain;
- freed blocks merge with free neighbours of the same segment; segments are kept (no empty_cache).

Under a limit (torch.cuda.set_per_process_memory_fraction, or simply the card's memory) a new segment that
would pass the limit is not refused at once: DeviceCachingAllocator::malloc first calls
release_cached_blocks(), which returns every cached segment that holds no block in use (a free block
without neighbours) to the driver, and retries; only then it raises OutOfMemoryError. Segments that hold
one live block stay, so their free remainder is memory the step cannot use: the fragmentation that makes
the smallest budget larger than the peak allocated. (release_available_cached_blocks, tried before, does
nothing unless max_split_size_mb is set.)
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from advisor.core.tracker import Key, Store

MIB = 1024 * 1024
SMALL_SIZE = 1 * MIB
SMALL_SEGMENT = 2 * MIB
LARGE_SEGMENT = 20 * MIB
MIN_LARGE_ALLOC = 10 * MIB
ROUND_LARGE = 2 * MIB
MIN_LARGE_SPLIT_REMAINDER = 1 * MIB  # split when the remainder is more than this (remaining > kSmallSize)
MIN_SMALL_SPLIT_REMAINDER = 512  # split when the remainder is at least this (remaining >= kMinBlockSize)


def segment_size(request: int) -> int:
    if request <= SMALL_SIZE:
        return SMALL_SEGMENT
    if request < MIN_LARGE_ALLOC:
        return LARGE_SEGMENT
    return -(-request // ROUND_LARGE) * ROUND_LARGE


# Plain tuples, not dataclasses or named tuples: a budget search replays a step some twenty times (hundreds
# of thousands of events), where building a named tuple costs a Python-level call per block; the pools'
# bisection compares blocks as tuples (size first: best fit).
FreeBlock = tuple[int, int, int]  # a free block of a segment: (size, segment, offset)
UsedBlock = tuple[bool, int, int, int]  # a block in use: (from the small pool, segment, offset, size)


class _Pool:
    """Free blocks of one pool, sorted for best-fit lookup: the best fit is the first one large enough."""

    def __init__(self, small: bool) -> None:
        self.free: list[FreeBlock] = []
        self.small = small

    def splits(self, remainder: int) -> bool:
        """should_split: whether a block handed out leaves `remainder` bytes behind as a free block."""
        return remainder >= MIN_SMALL_SPLIT_REMAINDER if self.small else remainder > MIN_LARGE_SPLIT_REMAINDER


class OutOfBudget(Exception):
    """The allocator could not place a request within its limit, even after releasing its cache."""


class CachingAllocatorModel:
    def __init__(self, budget_bytes: int | None = None) -> None:
        self.budget_bytes = budget_bytes
        self.pools = {True: _Pool(small=True), False: _Pool(small=False)}
        self.segments: list[int] = []  # sizes by segment id
        self.blocks: dict[Key, UsedBlock] = {}
        self.free_at: dict[tuple[int, int], int] = {}  # (segment, offset) -> size of a free block there
        self.free_ending: dict[tuple[int, int], int] = {}  # (segment, end offset) -> start of that free block
        self.reserved = 0
        self.peak_reserved = 0
        self.allocated = 0  # sum of the sizes of blocks in use, as the allocator's allocated_bytes stat counts

    def malloc(self, key: Key, size: int) -> None:
        small = size <= SMALL_SIZE
        pool = self.pools[small]
        free = pool.free
        index = bisect.bisect_left(free, (size, -1, -1))
        if index == len(free):
            block_size = segment_size(size)
            if self.budget_bytes is not None and self.reserved + block_size > self.budget_bytes:
                self.release_cached_segments()
                if self.reserved + block_size > self.budget_bytes:
                    raise OutOfBudget(f"{block_size} bytes more than the {self.budget_bytes}-byte budget allows")
            self.segments.append(block_size)
            self.reserved += block_size
            self.peak_reserved = max(self.peak_reserved, self.reserved)
            segment, offset = len(self.segments) - 1, 0
        else:
            block_size, segment, offset = free.pop(index)
            del self.free_at[(segment, offset)]
            del self.free_ending[(segment, offset + block_size)]
        if pool.splits(block_size - size):
            self._add_free(free, segment, offset + size, block_size - size)
            block_size = size
        self.blocks[key] = (small, segment, offset, block_size)
        self.allocated += block_size

    def apply(self, key: Key, size: int) -> bool:
        """One event of a recorded sequence (+size: an allocation, -size: its free); True when it allocated.
        A key already placed, or one never placed, is ignored, as the sequences of several steps repeat them."""
        if size > 0 and key not in self.blocks:
            self.malloc(key, size)
            return True
        if size < 0 and key in self.blocks:
            self.release(key)
        return False

    def replay(self, events: Iterable[tuple[Key, int]]) -> None:
        blocks, malloc, release = self.blocks, self.malloc, self.release  # apply(), without a call per event
        for key, size in events:
            if size > 0:
                if key not in blocks:
                    malloc(key, size)
            elif size < 0 and key in blocks:
                release(key)

    def release(self, key: Key) -> None:
        small, segment, offset, size = self.blocks.pop(key)
        self.allocated -= size
        free = self.pools[small].free
        after = self.free_at.get((segment, offset + size))
        if after is not None:
            self._remove_free(free, segment, offset + size, after)
            size += after
        before = self.free_ending.get((segment, offset))
        if before is not None:
            before_size = self.free_at[(segment, before)]
            self._remove_free(free, segment, before, before_size)
            offset, size = before, size + before_size
        self._add_free(free, segment, offset, size)

    def release_cached_segments(self) -> None:
        """release_cached_blocks(): every segment that is one free block goes back to the driver."""
        for pool in self.pools.values():
            for size, segment, offset in [b for b in pool.free if b[2] == 0 and b[0] == self.segments[b[1]]]:
                self._remove_free(pool.free, segment, offset, size)
                self.reserved -= size
                self.segments[segment] = 0

    def _add_free(self, free: list[FreeBlock], segment: int, offset: int, size: int) -> None:
        bisect.insort(free, (size, segment, offset))
        self.free_at[(segment, offset)] = size
        self.free_ending[(segment, offset + size)] = offset

    def _remove_free(self, free: list[FreeBlock], segment: int, offset: int, size: int) -> None:
        free.pop(bisect.bisect_left(free, (size, segment, offset)))
        del self.free_at[(segment, offset)]
        del self.free_ending[(segment, offset + size)]


PERSISTENT_KINDS = frozenset({Store.WEIGHTS, Store.OPTIMIZER_STATE, Store.INPUT})
# torch.optim creates its state lazily, inside the first optimizer.step() (_init_group: zeros_like per
# parameter), after that step's activations were freed: the state lands in the blocks they left.
LAZY_KINDS = frozenset({Store.OPTIMIZER_STATE})
_OPTIMIZER_PHASE_KIND = Store.OPTIMIZER_TEMPORARY


def training_loop_events(step: Sequence[tuple[Key, int]], steps: int = 2) -> list[tuple[Key, int]]:
    """The allocation sequence of a training loop built from one steady-state step: the first iteration
    creates the optimizer state at its optimizer step (before the step's own temporaries), and between
    iterations the loop drops what the step made (outputs, loss; gradients at the next zero_grad)."""
    lazy = [(key, size) for key, size in step if size > 0 and key.store in LAZY_KINDS]
    rest = [(key, size) for key, size in step if key.store not in LAZY_KINDS]
    at = next((i for i, (key, _) in enumerate(rest) if key.store == _OPTIMIZER_PHASE_KIND), len(rest))
    live: dict[Key, int] = {}
    for key, size in step:
        if size > 0:
            live[key] = size
        else:
            live.pop(key, None)
    drops = [(key, -size) for key, size in live.items() if key.store not in PERSISTENT_KINDS]
    events = rest[:at] + lazy + rest[at:]
    for _ in range(steps - 1):
        events += drops + list(step)
    return events


def peak_reserved_bytes(events: Iterable[tuple[Key, int]]) -> int:
    """Replays one step's allocation events (+size alloc, -size free), drops what the training loop drops
    between steps (outputs, gradients), and replays the step again: the second step reuses cached blocks
    and shows the steady state's reservation."""
    model = CachingAllocatorModel()
    event_list = list(events)
    for _ in range(2):
        model.replay(event_list)
        for key in [k for k in model.blocks if k.store not in PERSISTENT_KINDS]:
            model.release(key)
    return model.peak_reserved


@dataclass(frozen=True)
class FreeReplay:
    """An event sequence replayed once without a limit."""

    reserved_bytes: int  # the most the allocator reserved
    allocated_bytes: int  # the most it counted as allocated over the whole sequence
    measured_allocated_bytes: int  # the same from event `measure_from` on


def free_replay(events: Iterable[tuple[Key, int]], measure_from: int = 0) -> FreeReplay:
    """Replays a complete event sequence once (model load, warm-up and measured steps, as a simulator
    records them). Allocated bytes count a block handed out whole, because the remainder was too small to
    split, in full, as torch.cuda.max_memory_allocated() does."""
    model = CachingAllocatorModel()
    peak_allocated = measured = 0
    for index, (key, size) in enumerate(events):
        if model.apply(key, size):
            peak_allocated = max(peak_allocated, model.allocated)
            if index >= measure_from:
                measured = max(measured, model.allocated)
        if index == measure_from:
            measured = max(measured, model.allocated)
    return FreeReplay(model.peak_reserved, peak_allocated, measured)


def runs_within(events: Sequence[tuple[Key, int]], budget_bytes: int) -> bool:
    """Whether the whole event sequence runs with the allocator limited to `budget_bytes` of segments."""
    try:
        CachingAllocatorModel(budget_bytes).replay(events)
    except OutOfBudget:
        return False
    return True


def required_budget_bytes(
    events: Sequence[tuple[Key, int]], free: FreeReplay | None = None, tolerance: float = 0.002
) -> int:
    """The smallest allocator budget in which the sequence runs, found to within `tolerance` (rounded up,
    so never below the edge): between the peak in use (no budget can be smaller) and what the allocator
    reserves without a limit (with it the limit is never reached). Running within a budget is monotone in the
    budget in practice, so a bisection finds the edge in about log2(range / (tolerance x peak)) replays.
    `free`: the sequence's free_replay, where the caller has it already (it is not replayed again)."""
    free = free or free_replay(events)
    step = max(int(free.allocated_bytes * tolerance), ROUND_LARGE)
    low, high = free.allocated_bytes - 1, free.reserved_bytes  # fails below the peak in use; runs at high
    while high - low > step:
        middle = (low + high) // 2
        if runs_within(events, middle):
            high = middle
        else:
            low = middle
    return high
