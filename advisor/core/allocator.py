"""A model of PyTorch's CUDA caching allocator, replaying a step's allocations to predict what it reserves.

Rules from c10/cuda/CUDACachingAllocator.cpp (defaults, no PYTORCH_CUDA_ALLOC_CONF):
- requests of at most 1 MiB come from the small pool, carved out of 2 MiB segments;
- larger requests come from the large pool: under 10 MiB from 20 MiB segments, otherwise from a segment
  of exactly the request rounded up to 2 MiB;
- a request takes the smallest cached free block that fits (best fit); the rest of the block is split
  off when more than 512 bytes (small pool) or 1 MiB (large pool) would remain;
- freed blocks merge with free neighbours of the same segment; segments are kept (no empty_cache).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable

from advisor.core.tracker import Key

MIB = 1024 * 1024
SMALL_SIZE = 1 * MIB
SMALL_SEGMENT = 2 * MIB
LARGE_SEGMENT = 20 * MIB
MIN_LARGE_ALLOC = 10 * MIB
ROUND_LARGE = 2 * MIB
MIN_LARGE_SPLIT_REMAINDER = 1 * MIB
MIN_SMALL_SPLIT_REMAINDER = 512


def segment_size(request: int) -> int:
    if request <= SMALL_SIZE:
        return SMALL_SEGMENT
    if request < MIN_LARGE_ALLOC:
        return LARGE_SEGMENT
    return -(-request // ROUND_LARGE) * ROUND_LARGE


class _Pool:
    """Free blocks of one pool, sorted by (size, segment, offset) for best-fit lookup."""

    def __init__(self, split_remainder: int) -> None:
        self.free: list[tuple[int, int, int]] = []
        self.split_remainder = split_remainder

    def take(self, size: int) -> tuple[int, int, int] | None:
        index = bisect.bisect_left(self.free, (size, -1, -1))
        if index == len(self.free):
            return None
        return self.free.pop(index)

    def give(self, block: tuple[int, int, int]) -> None:
        bisect.insort(self.free, block)


class CachingAllocatorModel:
    def __init__(self) -> None:
        self.pools = {True: _Pool(MIN_SMALL_SPLIT_REMAINDER), False: _Pool(MIN_LARGE_SPLIT_REMAINDER)}
        self.segments: list[int] = []  # sizes by segment id
        self.blocks: dict[Key, tuple[bool, int, int, int]] = {}  # key -> (small, segment, offset, size)
        self.free_at: dict[tuple[int, int], int] = {}  # (segment, offset) -> size of a free block there
        self.free_ending: dict[tuple[int, int], int] = {}  # (segment, end offset) -> start of that free block
        self.reserved = 0
        self.peak_reserved = 0
        self.allocated = 0  # sum of the sizes of blocks in use, as the allocator's allocated_bytes stat counts

    def malloc(self, key: Key, size: int) -> None:
        small = size <= SMALL_SIZE
        pool = self.pools[small]
        block = pool.take(size)
        if block is None:
            seg_size = segment_size(size)
            self.segments.append(seg_size)
            self.reserved += seg_size
            self.peak_reserved = max(self.peak_reserved, self.reserved)
            block = (seg_size, len(self.segments) - 1, 0)
        else:
            del self.free_at[(block[1], block[2])]
            del self.free_ending[(block[1], block[2] + block[0])]
        block_size, segment, offset = block
        if block_size - size > pool.split_remainder:
            self._add_free(small, segment, offset + size, block_size - size)
            block_size = size
        self.blocks[key] = (small, segment, offset, block_size)
        self.allocated += block_size

    def release(self, key: Key) -> None:
        small, segment, offset, size = self.blocks.pop(key)
        self.allocated -= size
        after = self.free_at.get((segment, offset + size))
        if after is not None:
            self._remove_free(small, segment, offset + size, after)
            size += after
        before = self.free_ending.get((segment, offset))
        if before is not None:
            before_size = self.free_at[(segment, before)]
            self._remove_free(small, segment, before, before_size)
            offset, size = before, size + before_size
        self._add_free(small, segment, offset, size)

    def _add_free(self, small: bool, segment: int, offset: int, size: int) -> None:
        self.pools[small].give((size, segment, offset))
        self.free_at[(segment, offset)] = size
        self.free_ending[(segment, offset + size)] = offset

    def _remove_free(self, small: bool, segment: int, offset: int, size: int) -> None:
        free = self.pools[small].free
        free.pop(bisect.bisect_left(free, (size, segment, offset)))
        del self.free_at[(segment, offset)]
        del self.free_ending[(segment, offset + size)]


PERSISTENT_KINDS = frozenset({"weights", "optimizer_state", "input"})


def peak_reserved_bytes(events: Iterable[tuple[Key, int]]) -> int:
    """Replays one step's allocation events (+size alloc, -size free), drops what the training loop drops
    between steps (outputs, gradients), and replays the step again: the second step reuses cached blocks
    and shows the steady state's reservation."""
    model = CachingAllocatorModel()
    event_list = list(events)
    for _ in range(2):
        for key, size in event_list:
            if size > 0 and key not in model.blocks:
                model.malloc(key, size)
            elif size < 0 and key in model.blocks:
                model.release(key)
        for key in [k for k in model.blocks if k[0] not in PERSISTENT_KINDS]:
            model.release(key)
    return model.peak_reserved


def replay_peaks(events: Iterable[tuple[Key, int]], measure_from: int = 0) -> tuple[int, int]:
    """Replays a complete event sequence once (model load, warm-up and measured steps, as a simulator
    records them). Returns the most the allocator reserved, and the most it counted as allocated from event
    `measure_from` on: a block handed out whole because the remainder was too small to split counts in
    full, as in torch.cuda.max_memory_allocated()."""
    model = CachingAllocatorModel()
    peak_allocated = 0
    for index, (key, size) in enumerate(events):
        if size > 0 and key not in model.blocks:
            model.malloc(key, size)
            if index >= measure_from:
                peak_allocated = max(peak_allocated, model.allocated)
        elif size < 0 and key in model.blocks:
            model.release(key)
        if index == measure_from:
            peak_allocated = max(peak_allocated, model.allocated)
    return model.peak_reserved, peak_allocated
