"""ZeRO-3 / FSDP with a frozen base (LoRA, QLoRA): the base is all-gathered as it is stored (4-bit NF4 under
QLoRA) twice a step, and only the adapters' gradients are reduce-scattered (advisor.recommend.plans)."""

from functools import cache

import pytest

from advisor.core import zoo
from advisor.core.analytic import estimate
from advisor.core.estimate import Estimate
from advisor.core.workload import Finetune, Workload
from advisor.recommend.plans import largest_layer_params, plan_cost, root_gathered_bytes

# Answer.AI's fsdp_qlora defaults (train.py at AnswerDotAI/fsdp_qlora@4cd69234f84d): rank 64 on six projections
TARGETS = ("q_proj", "k_proj", "v_proj", "gate_proj", "up_proj", "down_proj")


@cache
def _llama2_7b(finetune: Finetune) -> Estimate:
    w = Workload("train", 1, "bf16", "adamw", checkpointing=True, finetune=finetune, lora_rank=64, lora_targets=TARGETS)
    return estimate(zoo.build("llama-7b", 2048), w)


def test_qlora_under_zero3_gathers_the_nf4_base_and_reduces_only_the_adapters() -> None:
    e = _llama2_7b("qlora")
    weights, adapters = e.memory.at_peak.weights, e.trainable_param_count
    # rank 64 per layer: q, k, v 3 x 64 x (4096 + 4096), gate, up, down 3 x 64 x (4096 + 11008); 32 layers
    assert adapters == 32 * (3 * 64 * 8192 + 3 * 64 * 15104) == 143_130_624
    full_bf16 = _llama2_7b("full").param_count * 2
    assert weights < 0.35 * full_bf16  # NF4 blocks (~4.13 bits) + bf16 embeddings + fp32 adapters
    cost = plan_cost(e, "zero3", 2)
    # each card sends (N-1)/N = 1/2 of: two all-gathers of the stored weights + the fp32 adapter gradients
    assert cost.comm_bytes == pytest.approx(0.5 * (2 * weights + 4 * adapters))
    largest = largest_layer_params(e)  # one decoder block (below): its gather buffer at the mean stored width
    m = e.memory.at_peak
    # and the root (embedding, norm, head: 2 x 32,000 x 4,096 + 4,096 params in bf16), gathered whole from
    # forward into backward
    root = (2 * 32_000 * 4_096 + 4_096) * 2
    assert root_gathered_bytes(e) == root == 524_296_192
    expected = 0.5 * (m.optimizer_state + m.gradients + weights) - 2 * largest * weights / e.param_count - root
    assert cost.saved_bytes == int(expected)
    lora = plan_cost(_llama2_7b("lora"), "zero3", 2)  # the bf16 base: about 3x the bytes to gather
    assert lora.comm_bytes > 2.9 * cost.comm_bytes


def test_full_training_under_zero3_still_moves_three_times_the_parameters() -> None:
    e = _llama2_7b("full")
    # pure bf16: 2 all-gathers + 1 reduce-scatter of 2 B per parameter, half of it per card on 2 cards
    assert plan_cost(e, "zero3", 2).comm_bytes == pytest.approx(0.5 * 3 * e.param_count * 2)


def test_data_parallel_all_reduces_only_the_adapters() -> None:
    e = _llama2_7b("qlora")
    # ring all-reduce: 2 x (N-1)/N x the fp32 adapter gradients = 143,130,624 x 4 B on 2 cards
    assert plan_cost(e, "data_parallel", 2).comm_bytes == 2 * 0.5 * 4 * 143_130_624


def test_zero3_gathers_a_whole_decoder_block_at_once() -> None:
    """FSDP all-gathers the module it wraps, a decoder layer (torchtune shard_model, accelerate's transformer
    wrap), not one linear: the unit is layers.N, the 32,000 x 4096 embedding (131,072,000) is smaller."""
    block = 4 * 4096 * 4096 + 3 * 4096 * 11008 + 2 * 4096  # q, k, v, o; gate, up, down; two RMSNorms
    assert largest_layer_params(_llama2_7b("full")) == block == 202_383_360
    # LoRA rank 64 adds its A and B to the six targets: 3 x 64 x (4096 + 4096) + 3 x 64 x (4096 + 11008)
    assert largest_layer_params(_llama2_7b("lora")) == block + 3 * 64 * 8192 + 3 * 64 * 15104 == 206_856_192


def test_fsdp_wrapping_leaves_answer_ais_reserved_after_model_wrap_on_the_card() -> None:
    """The card's reserved figure under ZeRO-3 (recommend.plans.zero3_reserved_floor_bytes)."""
    from advisor.core.sharded_init import fsdp_step_reserved, fsdp_wrap_replay
    from advisor.recommend.per_card import card_memory
    from advisor.recommend.plans import wrap_units, zero3_reserved_floor_bytes

    e = _llama2_7b("qlora")
    units = wrap_units(e)
    # 32 decoder blocks, then the root: embedding and head 32,000 x 4,096 x 2 B = 262,144,000 B each, the norm
    assert len(units) == 33 and units[-1] == (262_144_000, 4096 * 2, 262_144_000)
    wrap = fsdp_wrap_replay(units, 2)
    # Answer.AI (benchmarks_03_2024.md): "about 3.72GiB (see reserved_after_model_wrap)" on each of 2 cards;
    # the shards alone are about half the 3.87 GiB of stored weights
    assert 0.48 * e.memory.at_peak.weights < wrap.allocated_bytes < 0.52 * e.memory.at_peak.weights
    assert abs(wrap.reserved_bytes / 2**30 - 3.72) < 0.1 * 3.72
    # the compute stream: the step's own allocations, in the wrap's cache first; it reserves more than the
    # wrap, but less than the wrap plus what the whole-model step reserves beside its weights
    step = fsdp_step_reserved(units, 2, e.step_events)
    assert wrap.reserved_bytes < step < wrap.reserved_bytes + e.memory.reserved_bytes - e.memory.at_peak.weights
    floor = zero3_reserved_floor_bytes(e, 2)
    # + on FSDP's own streams: the root gathered whole (524,296,192 B), two block buffers, and the adapters'
    # sharded (fp32) gradients 143,130,624 x 4 B / 2
    gathered_root = 2 * 262_144_000 + 8192
    grads = 143_130_624 * 4 // 2
    assert floor - step - gathered_root - grads == int(
        2 * largest_layer_params(e) * e.memory.at_peak.weights / e.param_count
    )
    assert card_memory(e, plan_cost(e, "zero3", 2)).reserved_bytes == max(
        floor, e.memory.reserved_bytes - plan_cost(e, "zero3", 2).saved_bytes
    )


def test_full_training_optimizer_state_reuses_the_wrap_cache() -> None:
    from advisor.core.sharded_init import fsdp_step_reserved, fsdp_wrap_replay
    from advisor.recommend.plans import wrap_units, zero3_reserved_floor_bytes

    e = _llama2_7b("full")
    # every tensor trains: 6,738,415,616 params over 357 tensors, about 18.9 M params a tensor (18.9 MB in
    # bf16 on each of 2 cards), large-pool requests the wrap's cached blocks can hold
    assert (e.trainable_param_count, sum(row.param_tensors for row in e.layers)) == (6_738_415_616, 357)
    units = wrap_units(e)
    step, wrap = fsdp_step_reserved(units, 2, e.step_events), fsdp_wrap_replay(units, 2)
    # AdamW's two bf16 moments (25.1 GiB), half on each card: what the card's step adds to the wrap's 8.2 GiB
    # (23.7 GiB) is less than the whole-model step reserves beside its weights (12.6 GiB) and the other half
    # of the state (39.8 GiB): its state and activations partly land in the cached blocks
    half = e.memory.at_peak.optimizer_state // 2
    own = e.memory.reserved_bytes - e.memory.at_peak.weights - half
    assert wrap.reserved_bytes < step < wrap.reserved_bytes + own
    grads = e.param_count * 2 // 2
    gathered = int(2 * largest_layer_params(e) * e.param_count * 2 / e.param_count)
    assert zero3_reserved_floor_bytes(e, 2) == step + sum(units[-1]) + gathered + grads
