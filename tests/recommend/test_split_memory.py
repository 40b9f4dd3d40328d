"""What the busiest card holds when one model is split over several (issue 25: published vLLM tensor- and
pipeline-parallel runs, transformers' device_map="auto" layer split): the weights' layout, vLLM's rules for
KV heads and stages, vLLM's share taken per card, and the named plans the benchmark replays."""

from functools import cache
from pathlib import Path

import pytest

from advisor.catalog import find_card, open_catalog
from advisor.core import zoo
from advisor.core.analytic import estimate
from advisor.core.errors import SpecError
from advisor.core.estimate import Estimate
from advisor.core.llm.layout import weight_layout
from advisor.core.llm.runtime import VLLM_OUTSIDE_SHARE_BYTES
from advisor.core.llm.vllm_graphs import NON_TORCH_ONE_CARD_BYTES, NON_TORCH_TENSOR_PARALLEL_BYTES
from advisor.core.workload import Runtime, Workload
from advisor.core.zoo.llm import preset_decoder
from advisor.recommend.per_card import card_memory, named_cost
from advisor.recommend.plans import Plan, pipeline_layers, plan_cost, stage_param_share
from advisor.recommend.prepare import prepare_graph
from advisor.recommend.ranking import RankingOptions, rank

# Llama 3.1 8B in bf16: one block = q, o 2 x 4096 x 4096 + k, v 2 x 1024 x 4096 + gate, up, down
# 3 x 4096 x 14336 + two RMSNorms 2 x 4096 = 218,112,000 weights x 2 B
BLOCK = (2 * 4096 * 4096 + 2 * 1024 * 4096 + 3 * 4096 * 14336 + 2 * 4096) * 2
EMBED = 128256 * 4096 * 2  # the token embedding; the untied head the same
KV_PROJ = 32 * 2 * 1024 * 4096 * 2
REPLICATED = 32 * 2 * 4096 * 2 + 4096 * 2  # the blocks' norms and the final norm
TOTAL = 32 * BLOCK + EMBED + EMBED + 4096 * 2


@cache
def _generate(model: str, prompt: int, runtime: str = "vllm") -> Estimate:
    w = Workload("generate", 1, "bf16", weights="bf16", prompt_len=prompt, new_tokens=1, runtime=Runtime(runtime))
    return estimate(zoo.build(model, prompt + 1), w)


def test_layout_puts_the_embedding_first_the_head_last_and_names_what_tensor_parallel_replicates() -> None:
    layout = weight_layout(preset_decoder("llama-3.1-8b"), "bf16", Runtime.VLLM)
    assert layout.layer_bytes == (BLOCK,) * 32 and BLOCK == 436_224_000
    assert (layout.first_bytes, layout.last_bytes) == (EMBED, EMBED + 4096 * 2) == (1_050_673_152, 1_050_681_344)
    assert (layout.replicated_bytes, layout.kv_proj_bytes) == (REPLICATED, KV_PROJ) == (532_480, 536_870_912)
    # llama.cpp keeps the token embedding in system RAM (core/llm/runtime.py): no first-stage bytes on a card
    assert weight_layout(preset_decoder("llama-3.1-8b"), "bf16", Runtime.LLAMA_CPP).first_bytes == 0


def test_tensor_parallel_replicates_norms_and_keeps_one_kv_head_past_the_kv_heads() -> None:
    e = _generate("llama-3.1-8b", 512)
    two = named_cost(e, "tensor_parallel", 2)
    # 8 KV heads over 2 cards: 4 each; everything but the norms and the K/V projections halves
    on_card = REPLICATED + KV_PROJ * 4 / 8 + (TOTAL - REPLICATED - KV_PROJ) / 2  # 8,030,527,488 B
    assert two.weight_share == pytest.approx(on_card / TOTAL) and two.kv_share == 4 / 8
    # 16 cards divide the 32 query heads but not the 8 KV heads: vLLM keeps one KV head on every card
    sixteen = named_cost(e, "tensor_parallel", 16)
    on_card = REPLICATED + KV_PROJ / 8 + (TOTAL - REPLICATED - KV_PROJ) / 16  # 1,037,836,288 B, not 1/16
    assert sixteen.weight_share == pytest.approx(on_card / TOTAL) and sixteen.kv_share == 1 / 8


def test_pipeline_stages_take_blocks_as_vllm_assigns_them() -> None:
    # vLLM's own examples (docs, tests/distributed/test_pipeline_partition.py): 61 layers
    assert pipeline_layers(61, 2) == (31, 30) and pipeline_layers(61, 4) == (15, 15, 16, 15)
    split = named_cost(_generate("llama-3.1-8b", 512), "layer_split", 2)
    # 16 blocks each; the last stage's head and final norm outweigh the first's embedding by the norm's 8,192 B
    assert split.weight_share == pytest.approx((16 * BLOCK + EMBED + 4096 * 2) / TOTAL) and split.kv_share == 0.5


def test_vllm_takes_its_share_of_each_card_not_of_the_whole_model() -> None:
    """vLLM's worker on each card claims gpu_memory_utilization of that card: the busiest card needs what it
    holds / 0.9, less the CUDA context outside the share; before, the whole model's 10% was added to every card."""
    e = _generate("llama-3.1-8b", 8191)
    at, cost = e.memory.at_peak, named_cost(e, "tensor_parallel", 2)
    card = card_memory(e, cost)
    kv = 8192 * 32 * 2 * 8 * 128 * 2  # 8,192 tokens (512 blocks of 16) x 32 layers x K, V x 8 heads x 128 x 2 B
    assert at.kv_cache == kv
    # vLLM 0.17-0.19's graphs at -tp 2 (core/llm/vllm_graphs.py): 32 layers x 86 graphs x 199,000 B and the
    # pool: 512 tokens x 3 x 4,096 x 2 B whole, 512 x 3 x 14,336 x 2 B and FlashAttention 3's accumulators of
    # 32 splits x 256 sequences x 32 heads x 129 x 4 B halved; one card's are in the estimate's workspace
    graphs = 32 * 86 * 199_000 + 512 * 3 * 4096 * 2 + (512 * 3 * 14336 * 2 + 32 * 256 * 32 * 129 * 4) // 2
    one_card = 32 * 86 * 199_000 + 512 * 3 * (4096 + 14336) * 2 + 32 * 256 * 32 * 129 * 4
    engine = graphs - one_card + NON_TORCH_TENSOR_PARALLEL_BYTES - NON_TORCH_ONE_CARD_BYTES  # communicators
    held = int(at.weights * cost.weight_share + at.temporaries + kv * cost.kv_share) + engine
    assert card.peak_bytes == pytest.approx(held, abs=2) and card.kv_cache_bytes == kv // 2
    # the CUDA graphs come after the share, held outside it: ceil((held - graphs) / 0.9) - 804,061,184 B for the
    # share; the rest of the card (10%) holds the context, the graphs and the sampler warm-up, and at -tp 2 that
    # is what sets the card: ceil((804,061,184 + graphs + warm-up) / 0.1) - 804,061,184 B
    in_share = -(-(card.peak_bytes - graphs) * 10 // 9) - VLLM_OUTSIDE_SHARE_BYTES
    assert e.generation is not None
    after = VLLM_OUTSIDE_SHARE_BYTES + graphs + e.generation.after_share_warmup_bytes
    rest = -(-after * 10) - VLLM_OUTSIDE_SHARE_BYTES
    assert rest > in_share and card.required_bytes == pytest.approx(rest, abs=2)
    assert card.required_bytes < e.memory.required_bytes  # each of two cards needs less than one card alone


@cache
def _train(model: str = "llama-7b") -> Estimate:
    w = Workload("train", 1, "amp_fp16", "adamw", checkpointing=True, finetune="lora", lora_rank=64)
    return estimate(zoo.build(model, 512), w)


def test_training_layer_split_keeps_each_cards_blocks_state() -> None:
    e = _train()
    # LLaMA 7B: 32 blocks of 202,383,360 weights (+ LoRA r64 on the seven projections: 3 x 64 x 8192 on q, k, v,
    # 64 x 8192 on o, 3 x 64 x 15104 on gate, up, down), the 32,000 x 4096 embedding on the first card, the final
    # norm and the 32,000 x 4096 head on the last: 16 blocks + 131,076,096 there
    block = 202_383_360 + 4 * 64 * 8192 + 3 * 64 * 15104
    total = 32 * block + 2 * 32000 * 4096 + 4096
    assert e.param_count == total == 6_898_323_456
    share = stage_param_share(e, 2)
    assert share == pytest.approx((16 * block + 32000 * 4096 + 4096) / total)
    cost = plan_cost(e, "layer_split", 2)
    m = e.memory.at_peak
    assert cost.saved_bytes == int((m.weights + m.gradients + m.optimizer_state) * (1 - share))
    assert cost.replicas == 1 and cost.stages == 2  # one copy of the model: one card computes at a time
    assert card_memory(e, cost).required_bytes == e.memory.required_bytes - cost.saved_bytes


def test_named_plans_that_do_not_apply_are_refused_with_what_is_offered() -> None:
    with pytest.raises(SpecError, match=r"tensor_parallel does not apply to train .* offered: data_parallel, zero1"):
        named_cost(_train(), "tensor_parallel", 2)
    with pytest.raises(SpecError, match="tensor_parallel does not apply to generate"):  # 32 heads over 3 cards
        named_cost(_generate("llama-3.1-8b", 512), "tensor_parallel", 3)
    with pytest.raises(SpecError, match="'pipeline' is not one of single, data_parallel"):
        named_cost(_train(), "pipeline", 2)
    assert named_cost(_train(), "single", 1).plan is Plan.SINGLE


def test_recommend_ranks_a_training_layer_split_at_one_cards_throughput(tmp_path: Path) -> None:
    catalog = open_catalog(tmp_path / "catalog.sqlite3")
    job = prepare_graph(zoo.build("llama-7b", 512), _train().workload)
    with catalog.read() as session:
        card = find_card(session, "RTX 4090")
    entries = {(r.count, r.plan): r for r in rank(job, [card], {}, RankingOptions(counts=(1, 2)))}
    single, split = entries[(1, Plan.SINGLE)], entries[(2, Plan.LAYER_SPLIT)]
    assert split.throughput == pytest.approx(single.throughput)
    assert split.required_bytes < single.required_bytes
    assert "layer_split_train" in [r.code for r in split.reasons]
