"""Recommendations in generate mode on the bundled catalog: split plans, their memory per card, speed, why."""

from pathlib import Path

import pytest

from advisor.catalog import Catalog, find_card, open_catalog
from advisor.core import zoo
from advisor.core.workload import Workload
from advisor.recommend.prepare import RankingInput, prepare_graph
from advisor.recommend.present import render_table, to_json
from advisor.recommend.ranking import RankingOptions, rank
from advisor.recommend.reasons import reasons_text
from advisor.recommend.recommendation import Recommendation

GIB = 2**30


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Catalog:
    return open_catalog(Path(tmp_path_factory.mktemp("catalog")) / "catalog.sqlite3")


def generate(model: str, weights: str | None = None, batch: int = 1, prompt: int = 512, new: int = 128) -> RankingInput:
    workload = Workload(
        "generate",
        batch,
        "bf16",
        weights=weights,
        prompt_len=prompt,  # type: ignore[arg-type]
        new_tokens=new,
    )
    return prepare_graph(zoo.build(model, prompt + new), workload)


def ranked(
    catalog: Catalog, job: RankingInput, card: str, counts: tuple[int, ...]
) -> dict[tuple[int, str], Recommendation]:
    with catalog.read() as s:
        record = find_card(s, card)
    return {(e.count, e.plan): e for e in rank(job, [record], {}, RankingOptions(counts=counts))}


def test_llama_70b_at_4_bit_fits_two_3090s_only_split_and_not_at_16_bit(catalog: Catalog) -> None:
    q4 = ranked(catalog, generate("llama-3.1-70b", "q4_k_m"), "RTX 3090", (1, 2))
    weights = q4[(1, "single")].required_bytes
    assert not q4[(1, "single")].fits and not q4[(2, "data_parallel")].fits  # 42.5 GB of weights > 24 GB
    assert "memory does not pool" in reasons_text(q4[(2, "data_parallel")].reasons)
    for plan in ("tensor_parallel", "layer_split"):
        entry = q4[(2, plan)]
        assert entry.fits, reasons_text(entry.reasons)
        split = (
            "weights and KV cache are split over 2 cards"
            if plan == "tensor_parallel"
            else "layers are split over 2 cards"
        )
        assert reasons_text(entry.reasons).endswith("fits only because " + split)
        assert weights / 2 < entry.required_bytes < weights / 2 + 2 * GIB  # its half, plus the unsplit rest
    # a token passes both cards in turn under layer split; tensor parallel reads half the weights per card
    assert q4[(2, "layer_split")].decode_tokens_per_s < q4[(2, "tensor_parallel")].decode_tokens_per_s  # type: ignore[operator]
    # 16-bit: 70.6e9 weights x 2 B = 141 GB, 70.6 GB per card even split in two
    bf16 = ranked(catalog, generate("llama-3.1-70b"), "RTX 3090", (1, 2))
    assert not any(e.fits for e in bf16.values())


def test_llama_70b_q4_k_m_per_card_bytes_over_two_3090s(catalog: Catalog) -> None:
    """Issue 25: llama.cpp ran Llama 3 70B Q4_K_M split over two RTX 3090s, where we asked 23.54 GiB a card of
    the 23.15 usable. One card holds llama.cpp's buffers; the layer split takes the other card's 40 of the 80
    layers, with their weights and cache, off it."""
    from advisor.core.llm.quant import weight_bytes
    from advisor.core.zoo.llm import preset_decoder
    from advisor.recommend.devices import usable_bytes

    q4 = ranked(catalog, generate("llama-3.1-70b", "q4_k_m"), "RTX 3090", (1, 2))
    token_embd = 128256 * 8192 * 144 // 256  # Q4_K, 144 B per 256 weights, kept in system RAM: 591,003,648 B
    gpu_weights = weight_bytes(preset_decoder("llama-3.1-70b"), "q4_k_m") - token_embd  # 41,921,527,808 B
    kv_ctx = 768 * 80 * 2 * 8 * 128 * 2  # n_ctx 768 (512 + 128 tokens, rounded up to 256), f16: 240 MiB
    compute = 512 * 128256 * 4 + 512 * 8192 * 4  # n_ubatch 512: f32 logits and one f32 hidden state
    single = gpu_weights + kv_ctx + compute
    assert q4[(1, "single")].required_bytes == single == 42_452_631_552  # 39.54 GiB: one card cannot
    # the split takes layers 0-39 off the busiest card, which keeps layers 40-79 and the output (the last card
    # in llama.cpp and vLLM, core/llm/layout.py): the Q6_K lm_head 128256 x 8192 x 210 / 256 = 861,880,320 B
    # and its f32 norm 8192 x 4 B; the 80 layers are two alike halves of 20,529,807,360 B. It moves half the
    # cache llama.cpp holds, that of the 768-token n_ctx (serving.kv_cache_bytes)
    output = 128256 * 8192 * 210 // 256 + 8192 * 4
    first_layers = (gpu_weights - output) // 2
    per_card = single - first_layers - kv_ctx // 2  # 21,796,995,072 B = 20.30 GiB
    assert q4[(2, "layer_split")].required_bytes == per_card < usable_bytes(24 * GIB)  # 23.15 GiB usable


def test_layer_split_decodes_about_as_fast_as_one_card(catalog: Catalog) -> None:
    # 8B at 4-bit fits one 24 GB card: splitting its layers over two only adds a hop per token
    entries = ranked(catalog, generate("llama-3.1-8b", "q4_k_m"), "RTX 4090", (1, 2))
    single, split = entries[(1, "single")], entries[(2, "layer_split")]
    assert single.fits and split.fits
    assert split.decode_tokens_per_s == pytest.approx(single.decode_tokens_per_s, rel=0.02)
    # data parallel: two replicas, each generating its own batch: twice the tokens/s
    assert entries[(2, "data_parallel")].throughput == pytest.approx(2 * single.throughput)


def test_llama_8b_bf16_barely_fits_16_gb_at_a_short_context_and_not_at_4k(catalog: Catalog) -> None:
    # weights 8.03e9 x 2 B = 16.06e9 B = 14.96 GiB of the 15.18 GiB a 16 GiB card leaves usable
    short = ranked(catalog, generate("llama-3.1-8b"), "RTX 4060 Ti 16GB", (1,))[(1, "single")]
    assert short.usable_bytes - short.required_bytes < 0.5 * GIB
    # 4,096 + 512 tokens of cache: 4,608 x 131,072 B = 0.56 GiB more
    long = ranked(catalog, generate("llama-3.1-8b", prompt=4096, new=512), "RTX 4060 Ti 16GB", (1,))[(1, "single")]
    assert not long.fits
    assert long.required_bytes - short.required_bytes > 4096 * 131_072


def test_mixture_of_experts_holds_every_expert_and_reads_the_active_ones(catalog: Catalog) -> None:
    job = generate("mixtral-8x7b", "q4_k_m")
    profile = job.estimate.generation
    assert profile is not None and profile.active_weight_bytes < profile.weight_bytes / 3  # 2 of 8 experts
    h200 = ranked(catalog, job, "H200 SXM", (1,))[(1, "single")]
    assert h200.required_bytes > profile.weight_bytes  # all experts in memory
    dense = generate("llama-3.1-70b", "q4_k_m")  # 70B reads ~3x mixtral's active bytes per token
    assert h200.decode_tokens_per_s > 2 * ranked(catalog, dense, "H200 SXM", (1,))[(1, "single")].decode_tokens_per_s  # type: ignore[operator]


def test_tensor_parallel_only_where_heads_divide(catalog: Catalog) -> None:
    # Qwen2.5 7B: 28 query heads, 4 KV heads: 2 and 4 ways divide both, 8 does not
    entries = ranked(catalog, generate("qwen2.5-7b", "q4_k_m"), "RTX 4090", (2, 4, 8))
    assert sorted(count for count, plan in entries if plan == "tensor_parallel") == [2, 4]
    assert sorted(count for count, plan in entries if plan == "layer_split") == [2, 4, 8]


def test_generation_speed_is_presented_and_absent_outside_generate(catalog: Catalog) -> None:
    job = generate("llama-3.1-8b", "q4_k_m")
    entries = list(ranked(catalog, job, "RTX 4090", (1,)).values())
    row = to_json(entries)[0]
    assert row["decode_tokens_per_s"] == row["throughput"] and row["prefill_tokens_per_s"] > row["throughput"]
    assert row["throughput_unit"] == "tokens/s" and row["price_usd"] is None and row["perf_per_dollar"] is None
    assert "Prefill tok/s" in render_table(entries, 5)
    classic = prepare_graph(zoo.build("resnet50"), Workload("train", 8))
    with catalog.read() as s:
        plain = rank(classic, [find_card(s, "RTX 4090")], {}, RankingOptions(counts=(1,)))
    assert plain[0].decode_tokens_per_s is None and plain[0].prefill_tokens_per_s is None
    assert "Prefill tok/s" not in render_table(plain, 5)


def test_one_card_needs_exactly_what_the_estimate_says(catalog: Catalog) -> None:
    # one answer everywhere: `advisor estimate`'s required_bytes is the recommendation's single-card need
    for weights in ("q4_k_m", None):
        job = generate("llama-3.1-8b", weights, batch=4)
        single = ranked(catalog, job, "RTX 4090", (1,))[(1, "single")]
        assert single.required_bytes == pytest.approx(job.estimate.memory.required_bytes, abs=1)


def test_the_pytorch_allocator_note_is_given_only_where_pytorch_allocates(catalog: Catalog) -> None:
    """On a ROCm card the ranking says its memory is modelled on CUDA's allocator, as PyTorch runs it; llama.cpp
    sizes its own ggml buffers, so a GGUF model there gets no such note (it said 'PyTorch runs this card')."""
    for weights, noted in (("bf16", True), ("q4_k_m", False)):
        rows = ranked(catalog, generate("llama-3.2-1b", weights), "Radeon RX 7900 XTX", (1,))
        text = reasons_text(rows[(1, "single")].reasons)
        assert ("CUDA's allocator" in text) is noted, (weights, text)
