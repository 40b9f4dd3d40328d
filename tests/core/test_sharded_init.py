"""FSDP's wrapping replayed through the caching-allocator model (advisor.core.sharded_init): the blocks freed
while each unit is moved, broadcast, flattened and sharded stay reserved."""

from advisor.core.sharded_init import broadcast_buckets, fsdp_wrap_replay

MIB = 2**20


def test_broadcast_buckets_close_once_they_reach_250_mib() -> None:
    # 4 x 32 + 86 = 214, + 86 = 300 >= 250 closes the first bucket; 86 + 0.5 are left for the last one
    assert broadcast_buckets([32 * MIB] * 4 + [86 * MIB] * 3 + [MIB // 2]) == [300 * MIB, 86 * MIB + MIB // 2]
    assert broadcast_buckets([250 * MIB, 250 * MIB]) == [250 * MIB, 250 * MIB]  # a bucket at the size closes


def test_one_unit_keeps_its_shard_and_caches_the_rest() -> None:
    # one unit of two 40 MiB tensors on 2 cards, no broadcast: move 40 + 40 (segments of 40 MiB each), cat 80
    # (a new segment), free the two 40s, clone the 40 MiB shard into a freed 40 MiB segment, free the 80:
    # 40 + 40 + 80 = 160 MiB reserved, 40 in use
    wrap = fsdp_wrap_replay([(40 * MIB, 40 * MIB)], 2, sync_module_states=False)
    assert (wrap.reserved_bytes, wrap.allocated_bytes) == (160 * MIB, 40 * MIB)


def test_the_broadcast_buckets_add_their_own_segments() -> None:
    # two like units, each broadcast first (one 80 MiB bucket, under 250 MiB). Unit 1: tensors in new
    # segments A, B (40 each), bucket in C (80), freed; the cat reuses C, the shard takes A (best fit), C is
    # freed. Unit 2: tensors in B and the first half of C (split: 40 MiB remain), the bucket fits nowhere: D
    # (80), freed; the cat reuses D, the shard takes B: A + B + C + D = 40 + 40 + 80 + 80 = 240 MiB reserved
    # for 2 x 40 MiB of shards
    wrap = fsdp_wrap_replay([(40 * MIB, 40 * MIB)] * 2, 2)
    assert (wrap.reserved_bytes, wrap.allocated_bytes) == (240 * MIB, 80 * MIB)


def test_no_shard_keeps_the_flat_parameter_whole() -> None:
    # NO_SHARD (1 card's share): the 80 MiB flat parameter stays; the two 40 MiB originals are cache
    wrap = fsdp_wrap_replay([(40 * MIB, 40 * MIB)], 1, sync_module_states=False)
    assert (wrap.reserved_bytes, wrap.allocated_bytes) == (160 * MIB, 80 * MIB)


def test_one_card_runs_its_share_of_the_step_in_the_wrap_cache() -> None:
    from advisor.core.sharded_init import card_step_events, fsdp_step_reserved
    from advisor.core.tracker import Key, Store

    weights, state, out, grad = (Key(Store.WEIGHTS, 0, 0), Key(Store.OPTIMIZER_STATE, 0, 0),
                                 Key(Store.OUT, 1, 0), Key(Store.PARAM_GRAD, 0, 0))  # fmt: skip
    step = [(weights, 80 * MIB), (state, 40 * MIB), (out, 60 * MIB), (grad, 30 * MIB), (out, -60 * MIB)]
    # on 1 of 2 cards: no weights (its shard is held since wrapping), half the optimizer state, the gradient
    # freed once reduce-scattered
    assert list(card_step_events(step, 2)) == [
        (state, 20 * MIB), (out, 60 * MIB), (grad, 30 * MIB), (grad, -30 * MIB), (out, -60 * MIB)
    ]  # fmt: skip
    # the wrap leaves A (40, the shard), B (40) and C (80) reserved, B and C free (the test above). Step 1: the
    # 60 MiB output splits C, the gradient splits B, both merge back when freed; the state (made at the first
    # optimizer step) splits B: 20 + 20. Step 2: the output splits C again (60 + 20), and the 30 MiB gradient
    # finds only 20 MiB blocks: a new 30 MiB segment. 160 + 30 = 190 MiB
    assert fsdp_step_reserved([(40 * MIB, 40 * MIB)], 2, step) == 190 * MIB
