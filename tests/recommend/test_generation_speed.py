"""Generation speed (prefill, decode) per card and the split plans' memory, from the roofline's arithmetic."""

from dataclasses import replace

import pytest

from advisor.core.generation import GenerationProfile as Profile
from advisor.recommend.devices import GenerationRates
from advisor.recommend.generation_runtimes import TRANSFORMERS, VLLM
from advisor.recommend.generation_speed import (
    FITTED,
    PREFILL_CHUNK_TOKENS,
    GenerationRun,
    Split,
    decode_step,
    dequantized_bytes,
    generation_speed,
    prefill_seconds,
)
from advisor.recommend.kernels import BANDWIDTH_CEILING
from advisor.recommend.plans import plans_for, split_cost, tensor_parallel_fits
from advisor.recommend.tensor_power import HOPPER, graphics

# Llama 3 8B: 8.03e9 weights, 32 layers, hidden 4096, 32 query heads, 8 KV heads of 128;
# K and V in fp16: 2 x 32 layers x 8 heads x 128 x 2 B = 131,072 B per token
Q4_BYTES = 4_600_000_000  # ~4.6 bits per weight (Q4_K_M)
LLAMA8B_Q4 = Profile(Q4_BYTES, Q4_BYTES, 131_072, 2 * 8e9 * 512, 2 * 8e9, 32, 4096, 8, 32, "llama.cpp", 0, 0)
PARAMS = 8_000_000_000
# 128 SMs x 2.52 GHz = 82.6 TFLOPS FP32 / (2 x 128 lanes) = 322.7e9 multiprocessor cycles per second
RTX4090_LIKE = GenerationRates(
    bandwidth_gbs=1008.0,
    fp16_accumulate_tflops=330.3,
    hbm=False,
    half_tflops=165.2,
    tdp_w=450.0,
    sm_cycles_per_s=322.7e9,
    tensor_power=graphics("Ada Lovelace"),
)
IDEAL = replace(FITTED, tensor=1.0, memory_gddr=1.0, memory_hbm=1.0, seconds_per_layer=0.0)
HOST_OPS = 32 * 38  # ~38 ops per Llama layer as the estimate's rows count them


def run(
    profile: Profile = LLAMA8B_Q4, batch: int = 1, prompt: int = 512, new: int = 128, quantized: int = 0
) -> GenerationRun:
    return GenerationRun(
        profile=profile,
        param_count=PARAMS,
        batch=batch,
        prompt_len=prompt,
        new_tokens=new,
        host_ops=HOST_OPS,
        quantized_linears=quantized,
    )


def test_decode_at_batch_one_reads_the_weights_and_the_cache_once_per_token() -> None:
    step, bound = decode_step(run(), RTX4090_LIKE, IDEAL)
    # mean context 512 + 128/2 = 576 tokens: 4.6e9 + 131,072 x 576 = 4,675,497,472 B at 1,008 GB/s
    assert step == pytest.approx(4_675_497_472 / 1008e9)
    assert bound == "memory"
    assert generation_speed(run(), RTX4090_LIKE, IDEAL).decode_tokens_per_s == pytest.approx(215.6, abs=0.1)


def test_fitted_decode_adds_bandwidth_efficiency_and_a_fixed_cost_per_layer() -> None:
    step, _ = decode_step(run(), RTX4090_LIKE)
    # GDDR card: 4,675,497,472 B / (1,008e9 x 0.88) + 32 layers x 72 us = 5.271 ms + 2.304 ms
    expected = 4_675_497_472 / (1008e9 * FITTED.memory_gddr) + 32 * FITTED.seconds_per_layer
    assert step == pytest.approx(expected)
    assert 1 / step == pytest.approx(132.0, abs=0.5)
    hbm = replace(RTX4090_LIKE, hbm=True)
    assert decode_step(run(), hbm)[0] > step  # HBM streams a lower share of its peak (0.50 vs 0.88)


def test_large_batches_make_decode_compute_bound() -> None:
    big = run(batch=1024, prompt=16, new=16)
    step, bound = decode_step(big, RTX4090_LIKE, IDEAL)
    # compute: 1,024 x 16e9 FLOPs / 330.3e12 = 49.6 ms; memory: (4.6e9 + 1,024 x 131,072 x 24) / 1,008e9 = 7.8 ms
    assert bound == "compute"
    assert step == pytest.approx(1024 * 16e9 / 330.3e12)
    assert generation_speed(big, RTX4090_LIKE, IDEAL).decode_tokens_per_s == pytest.approx(1024 / step)


def test_prefill_is_compute_bound_and_quantized_weights_pay_their_fp16_expansion() -> None:
    # one 512-token chunk: 8.192e12 FLOPs / 330.3e12 = 24.8 ms (the fp16 weights' 16e9 B take 15.9 ms)
    fp16 = replace(LLAMA8B_Q4, weight_bytes=2 * PARAMS, active_weight_bytes=2 * PARAMS)
    assert dequantized_bytes(run(fp16)) == 0
    assert prefill_seconds(run(fp16), RTX4090_LIKE, IDEAL) == pytest.approx(2 * 8e9 * 512 / 330.3e12)
    # q4: read 4.6e9 B and write the 16e9 B fp16 copy = 20.6e9 B more at 1,008 GB/s = 20.4 ms more
    assert dequantized_bytes(run()) == 4.6e9 + 16e9
    q4 = prefill_seconds(run(), RTX4090_LIKE, IDEAL)
    assert q4 == pytest.approx(2 * 8e9 * 512 / 330.3e12 + 20.6e9 / 1008e9)
    speed = generation_speed(run(), RTX4090_LIKE, IDEAL)
    assert speed.prefill_tokens_per_s == pytest.approx(512 / q4)


def test_pytorch_prefill_gemms_follow_the_dies_power_rule_as_training_does() -> None:
    """vLLM's prefill GEMMs accumulate in FP32 at the share the die's power rule gives (recommend.tensor_power)."""
    vllm = replace(VLLM, tensor=1.0, memory_gddr=1.0, seconds_per_layer=0.0, host_step_seconds=0.0)
    bf16 = run(replace(BF16_8B, runtime="vllm"))
    # a graphics Ada die holds its boost clock from 3.0 x Hopper's 0.905 = 2.71 W per TFLOPS; 450 W / 165.2 =
    # 2.72: full peak, 8.192e12 FLOPs / 165.2e12 = 49.6 ms (the 16e9 B of weights take 15.9 ms)
    assert prefill_seconds(bf16, RTX4090_LIKE, vllm) == pytest.approx(2 * 8e9 * 512 / 165.2e12)
    # Hopper's rule (the one prefill used before) stops the same board at its maximum, 0.95 of peak
    hopper = replace(RTX4090_LIKE, tensor_power=HOPPER)
    assert prefill_seconds(bf16, hopper, vllm) == pytest.approx(2 * 8e9 * 512 / (165.2e12 * 0.95))


def test_prefill_goes_in_chunks_of_512_tokens() -> None:
    four = run(batch=4)  # 4 x 512 = 2,048 tokens = 4 chunks, each re-expanding the quantized weights
    flops = replace(LLAMA8B_Q4, prefill_flops=4 * LLAMA8B_Q4.prefill_flops)
    seconds = prefill_seconds(replace(four, profile=flops), RTX4090_LIKE, IDEAL)
    assert 4 * 512 // PREFILL_CHUNK_TOKENS == 4
    assert seconds == pytest.approx(4 * (2 * 8e9 * 512 / 330.3e12 + 20.6e9 / 1008e9))


def test_tensor_parallel_divides_the_reads_and_pays_two_all_reduces_per_layer() -> None:
    single, _ = decode_step(run(), RTX4090_LIKE, IDEAL)
    split = Split(tensor_ways=2, link_gbs=31.5)
    two, _ = decode_step(run(), RTX4090_LIKE, IDEAL, split)
    # 2 all-reduces x 32 layers, each a 20 us latency + 2 (2-1)/2 x 4,096 x 2 B / 31.5 GB/s
    comm = 64 * (20e-6 + 8192 / 31.5e9)
    assert two == pytest.approx(single / 2 + comm)
    assert two < single  # faster than one card, by less than 2x


def test_tensor_parallel_past_the_kv_heads_reads_one_replicated_kv_head_per_card() -> None:
    # 8 KV heads over 16 cards: vLLM keeps one on each (QKVParallelLinear replicates it), so each card reads
    # 1/8 of the cache, not 1/16; the weights still divide by 16
    sixteen, _ = decode_step(run(), RTX4090_LIKE, IDEAL, Split(tensor_ways=16, link_gbs=31.5))
    comm = 64 * (20e-6 + 2 * 15 / 16 * 8192 / 31.5e9)  # 2 all-reduces x 32 layers over a 16-card ring
    cache = 131_072 * 576  # mean context 512 + 128 / 2 tokens
    assert sixteen == pytest.approx((Q4_BYTES / 16 + cache / 8) / 1008e9 + comm)


def test_layer_split_decodes_at_one_cards_speed_plus_the_hops() -> None:
    single, _ = decode_step(run(), RTX4090_LIKE, IDEAL)
    three, _ = decode_step(run(), RTX4090_LIKE, IDEAL, Split(stages=3, link_gbs=31.5))
    # a token crosses 2 boundaries: 2 x (20 us + 8,192 B / 31.5 GB/s)
    assert three == pytest.approx(single + 2 * (20e-6 + 8192 / 31.5e9))


def test_tensor_parallel_needs_whole_heads_on_every_card() -> None:
    # 32 query heads and 8 KV heads: 2, 4, 8 ways divide both; 16 divides the query heads and is a multiple
    # of the KV heads (vLLM keeps one KV head, replicated, on each card); 3 divides neither, 64 not the 32
    assert [n for n in (2, 3, 4, 8, 16, 64) if tensor_parallel_fits(LLAMA8B_Q4, n)] == [2, 4, 8, 16]


def test_split_plans_take_model_state_off_each_card() -> None:
    kv = 131_072 * 640  # batch 1, 512 + 128 tokens
    tp = split_cost(LLAMA8B_Q4, "tensor_parallel", 4, kv)
    assert tp.saved_bytes == (Q4_BYTES + kv) * 3 // 4 and tp.tensor_ways == 4 and tp.replicas == 1
    # 32 layers over 3 cards: the busiest holds ceil(32/3) = 11 of them, so 21/32 of the state leaves it
    ls = split_cost(LLAMA8B_Q4, "layer_split", 3, kv)
    assert ls.saved_bytes == int((Q4_BYTES + kv) * (1 - 11 / 32)) and ls.stages == 3 and ls.replicas == 1


def test_generation_offers_split_plans_and_data_parallel_on_several_cards() -> None:
    assert plans_for(1, False, generating=True) == ("single",)
    assert plans_for(2, False, generating=True) == ("data_parallel", "tensor_parallel", "layer_split")
    assert plans_for(2, False) == ("data_parallel", "zero3")  # inference without generation as before


def test_partial_offload_decodes_at_host_memory_speed() -> None:
    """llama.cpp -ngl: the bytes left in system RAM stream at HOST_DECODE_BANDWIDTH (60 GB/s) each step."""
    from advisor.recommend.generation_speed import HOST_DECODE_BANDWIDTH, decode_step

    host = 2_000_000_000  # 2 GB of layers on the CPU
    offloaded = replace(LLAMA8B_Q4, host_read_bytes=host)
    card = replace(RTX4090_LIKE, fp16_accumulate_tflops=165.2, half_tflops=82.6)
    full = decode_step(run(LLAMA8B_Q4), card)[0]
    partial = decode_step(run(offloaded), card)[0]
    gpu_share = host / (1008e9 * FITTED.memory_gddr)
    assert partial - full == pytest.approx(host / HOST_DECODE_BANDWIDTH - gpu_share, rel=1e-6)  # +31.1 ms


BF16_8B = replace(LLAMA8B_Q4, weight_bytes=2 * PARAMS, active_weight_bytes=2 * PARAMS, runtime="transformers")


def test_transformers_decode_is_the_hosts_python_when_it_outlasts_the_reads() -> None:
    """Eager generate(): every op is dispatched from Python; the launches queue, so the step is the longer."""
    step, bound = decode_step(run(BF16_8B, prompt=1, new=2), RTX4090_LIKE)
    host = HOST_OPS * TRANSFORMERS.host_op_seconds  # 1,216 ops x 22 us = 26.8 ms
    # device: 16e9 B + 2 tokens (1 + 2/2) x 131,072 B at 1,008 GB/s x 0.87 = 18.2 ms, + 32 layers x 54 us = 20.0 ms
    assert step == pytest.approx(host) and bound == "host"
    assert 1 / step == pytest.approx(37.4, abs=0.1)
    # the same reads as a CUDA graph (vLLM): the device's time plus the engine's host work between steps
    graph, bound = decode_step(run(replace(BF16_8B, runtime="vllm"), prompt=1, new=2), RTX4090_LIKE)
    device = (16e9 + 2 * 131_072) / (1008e9 * BANDWIDTH_CEILING) + 32 * VLLM.seconds_per_layer
    assert graph == pytest.approx(device + VLLM.host_step_seconds) and bound == "memory"


def test_transformers_reads_the_cache_once_per_query_head() -> None:
    """32 query heads over 8 KV heads: a long context costs 4x its bytes, at the attention's rate per SM cycle."""
    short = decode_step(run(BF16_8B, prompt=1, new=2), RTX4090_LIKE, TRANSFORMERS)[0]
    long_run = run(BF16_8B, prompt=32_000, new=2)
    long = decode_step(long_run, RTX4090_LIKE, replace(TRANSFORMERS, host_op_seconds=0.0))[0]
    weights = 16e9 / (1008e9 * BANDWIDTH_CEILING) + 32 * TRANSFORMERS.seconds_per_layer
    rate = 322.7e9 * TRANSFORMERS.cache_bytes_per_sm_cycle  # 1.8 B per cycle: 581 GB/s, under 0.87 x 1,008
    cache = 131_072 * 32_001 * 32 / 8 / rate  # 16.8e9 B at 581 GB/s = 28.9 ms
    assert long == pytest.approx(weights + cache)
    assert long > 1.8 * short  # 48.9 ms of reads against the 26.8 ms the host takes at a short context


def test_quantized_linears_cost_their_extra_kernels_and_python() -> None:
    gptq = replace(BF16_8B, weight_bytes=PARAMS // 2, active_weight_bytes=PARAMS // 2)
    plain = decode_step(run(gptq), RTX4090_LIKE)[0]
    quant = decode_step(run(gptq, quantized=224), RTX4090_LIKE)[0]  # 32 layers x 7 projections
    assert quant - plain == pytest.approx(224 * TRANSFORMERS.quantized_linear_host_seconds)  # host-bound: +8.1 ms


def test_decode_at_batch_b_reads_the_weights_once_and_every_sequences_cache() -> None:
    one = decode_step(run(prompt=1024, new=2), RTX4090_LIKE, IDEAL)[0]
    eight = decode_step(run(batch=8, prompt=1024, new=2), RTX4090_LIKE, IDEAL)[0]
    # 4.6e9 B of weights once, then 131,072 B x 1,025 tokens per sequence: 7 more caches = 0.94e9 B
    assert eight - one == pytest.approx(7 * 131_072 * 1025 / 1008e9)
    assert eight < 2 * one  # 8 sequences for less than twice one's time


def test_layer_split_prefill_of_one_chunk_is_no_faster_than_one_card() -> None:
    """One sequence's 512 tokens pass the stages in turn (llama-bench pp512): 4 cards take one card's time."""
    single = prefill_seconds(run(), RTX4090_LIKE, IDEAL)
    split = prefill_seconds(run(), RTX4090_LIKE, IDEAL, Split(stages=4, link_gbs=31.5))
    assert split == pytest.approx(single + 3 * (20e-6 + 512 * 4096 * 2 / 31.5e9))
    # eight chunks pipeline: (8 + 4 - 1) / 4 chunk times instead of 8, each chunk with its 3 hops' latency
    eight = replace(run(batch=8), profile=replace(LLAMA8B_Q4, prefill_flops=8 * LLAMA8B_Q4.prefill_flops))
    one_card = prefill_seconds(eight, RTX4090_LIKE, IDEAL)
    pipelined = prefill_seconds(eight, RTX4090_LIKE, IDEAL, Split(stages=4))
    assert pipelined == pytest.approx((one_card / 8 + 3 * 20e-6) * 11 / 4)


def test_mxfp4_projections_are_not_quantized_linears() -> None:
    """gpt-oss keeps attention in bf16 under MXFP4 (its experts alone are MXFP4): none of its 24 x 4 q/k/v/o
    projections runs a quantized kernel, where GPTQ int4 would quantize all 96."""
    from advisor.core import zoo
    from advisor.core.analytic import estimate
    from advisor.core.workload import Workload
    from advisor.recommend.serving import generation_run

    def linears(weights: str) -> int:
        w = Workload("generate", 1, "bf16", prompt_len=64, new_tokens=8, weights=weights)  # type: ignore[arg-type]
        run = generation_run(estimate(zoo.build("gpt-oss-20b", 64), w))
        assert run is not None
        return run.quantized_linears

    assert linears("int4") == 24 * 4 and linears("mxfp4") == 0
