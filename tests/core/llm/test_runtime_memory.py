"""Issue 25: LLM memory as PyTorch, transformers and PEFT really allocate it. Each test writes the arithmetic
beside the bytes it expects."""

import json
import math
from dataclasses import replace

import pytest

from advisor.core import zoo
from advisor.core.analytic import estimate
from advisor.core.errors import SpecError
from advisor.core.estimate import Estimate
from advisor.core.workload import Runtime, VLLMRelease, Workload

GIB = 2**30


def qwen7b_full(checkpointing: bool) -> Workload:
    return Workload("train", 1, "amp_bf16", "adamw", checkpointing=checkpointing)


def test_checkpointed_block_outputs_are_freed_in_backward() -> None:
    """Qwen2.5 7B full fine-tune at 2,048 tokens: the optimizer step sets the peak with and without
    checkpointing; a recomputed block's output, which no op of the block reads, is not kept to the step."""
    graph = zoo.build("qwen2.5-7b", 2048)
    plain, ckpt = (estimate(graph, qwen7b_full(c)).memory for c in (False, True))
    assert plain.peak_phase == ckpt.peak_phase == "optimizer step"
    leaked = 28 * 2048 * 3584 * 4  # one fp32 residual stream per layer: 822,083,584 B before the fix
    assert ckpt.peak_bytes <= plain.peak_bytes < ckpt.peak_bytes + leaked
    # at the step only the caller's bf16 logits remain of the activations: 2048 x 152064 x 2 = 622,854,144 B
    assert ckpt.at_peak.activations == plain.at_peak.activations == 2048 * 152064 * 2 + 512  # + the loss


def test_data_parallel_buckets_hold_only_trainable_gradients() -> None:
    """Llama 3.1 8B QLoRA on two cards in data parallel: DDP's buckets cover the rank-16 adapters only."""
    from advisor.recommend.plans import plan_cost

    w = Workload("train", 1, "amp_bf16", "adamw", checkpointing=True, finetune="qlora")
    e = estimate(zoo.build("llama-3.1-8b", 4096), w)
    adapters = 32 * 16 * (2 * (4096 + 4096) + 2 * (4096 + 1024) + 3 * (4096 + 14336))  # 41,943,040
    assert e.trainable_param_count == adapters
    dp = plan_cost(e, "data_parallel", 2)
    assert dp.saved_bytes == -adapters * 4  # one fp32 bucket copy: 167,772,160 B, not 8.07e9 x 4 B
    assert dp.comm_bytes == 2 * (1 / 2) * adapters * 4  # ring all-reduce of the adapters' gradients
    full = estimate(zoo.build("llama-3.2-1b", 256), Workload("train", 1, "amp_bf16", "adamw"))
    assert full.trainable_param_count == full.param_count == 1_235_814_400  # tied head counted once


def test_peft_fp32_adapters_save_an_fp32_copy_of_each_adapted_input() -> None:
    """Pure-bf16 LoRA on Llama 3.1 8B: PEFT keeps the adapters in fp32 and each adapted layer casts its
    input to fp32 for lora_A (peft/tuners/lora/layer.py Linear.forward: x = self._cast_input_dtype(x,
    lora_A.weight.dtype)), which lora_A saves for its weight gradient; q, k and v each make their own copy."""
    graph = zoo.build("llama-3.1-8b", 2048)
    e = estimate(graph, Workload("train", 1, "bf16", "adamw", finetune="lora"))
    rows = {r.name: r for r in e.layers}
    lora_a_out = 2048 * 16 * 4  # rank-16 lora_A output, fp32: 131,072 B
    for name in ("q_proj", "k_proj", "o_proj"):
        assert rows[f"layers.0.self_attn.{name}"].kept_bytes == 2048 * 4096 * 4 + lora_a_out  # 33,685,504
    # v_proj also holds its bf16 output, which the attention saves: + 2048 x 1024 x 2
    assert rows["layers.0.self_attn.v_proj"].kept_bytes == 2048 * 4096 * 4 + lora_a_out + 2048 * 1024 * 2
    assert rows["layers.0.mlp.down_proj"].kept_bytes == 2048 * 14336 * 4 + lora_a_out  # 117,571,584
    assert e.memory.at_peak.optimizer_state == 2 * 41_943_040 * 4  # AdamW on fp32 adapters, not bf16 ones
    amp = estimate(graph, Workload("train", 1, "amp_bf16", "adamw", finetune="lora"))
    amp_rows = {r.name: r for r in amp.layers}
    # under autocast the input is fp32 already (no PEFT copy); lora_A's autocast saves a bf16 copy of it, the
    # base and the adapters keep their bf16 weight copies: 2048x4096x2 + 4096x4096x2 + 2x16x4096x2 + 2048x16x2
    amp_q = 2048 * 4096 * 2 + 4096 * 4096 * 2 + 2 * 16 * 4096 * 2 + 2048 * 16 * 2
    assert amp_rows["layers.0.self_attn.q_proj"].kept_bytes == amp_q  # 50,659,328


MIB = 2**20


def test_llama_cpp_buffers_match_a_published_log() -> None:
    """Llama 3 8B Q4_K_M, n_ctx 512, -ngl all, flash attention off, on an RTX 3070 (developer0hye/
    llama-3-korean-bllossom-8b-q4-docker README.md, 2024-06): CPU buffer 281.81 MiB, CUDA0 buffer
    4403.49 MiB, KV self 64.00 MiB, CUDA0 compute buffer 258.50 MiB, CUDA_Host compute 9.01 MiB, output 0.49."""
    from advisor.core.llm.runtime import llama_cpp_context, llama_cpp_memory
    from advisor.core.zoo.llm import preset_decoder

    spec = preset_decoder("llama-3.1-8b")
    n_ctx = llama_cpp_context(400 + 112, 1)
    assert n_ctx == 512
    m = llama_cpp_memory(spec, "q4_k_m", n_ctx, None, flash_attention=False)
    assert m.weights_bytes / MIB == pytest.approx(4403.49, abs=0.01)
    assert m.kv_cache_bytes == 512 * 32 * 2 * 8 * 128 * 2  # f16 K and V of 512 tokens: 64 MiB
    # logits of 512 tokens (512 x 128256 x 4 = 250.5 MiB) + one f32 hidden state (8 MiB) = 258.5 MiB
    assert m.workspace_bytes == 512 * 128256 * 4 + 512 * 4096 * 4
    token_embd = 128256 * 4096 * 144 // 256  # Q4_K: 281.81 MiB stays on the CPU
    host_compute = 512 * 4096 * 4 + 512 * 512 * 4  # 9 MiB: input embeddings and the f32 KQ mask
    assert m.host_bytes == token_embd + host_compute + 128256 * 4  # + the 0.49 MiB output buffer


def test_llama_cpp_partial_offload_moves_layers_and_their_cache_to_system_ram() -> None:
    from advisor.core.llm.runtime import llama_cpp_memory
    from advisor.core.zoo.llm import preset_decoder

    spec = preset_decoder("llama-3.1-8b")
    full = llama_cpp_memory(spec, "q4_k_m", 4096, None)
    half = llama_cpp_memory(spec, "q4_k_m", 4096, 16)
    assert half.kv_cache_bytes == full.kv_cache_bytes // 2  # 16 of 32 layers' cache: 256 MiB of 512
    # the output layer (Q6_K, 128256 x 4096 x 210/256 B = 411 MiB) and 16 layers move to the host
    output = 128256 * 4096 * 210 // 256
    assert full.weights_bytes - half.weights_bytes > output
    assert half.host_bytes - full.host_bytes > full.weights_bytes - half.weights_bytes
    # what left the GPU is what the CPU streams each decode step (the token embedding only gives one row)
    assert half.host_read_bytes == (full.weights_bytes - half.weights_bytes) + (
        full.kv_cache_bytes - half.kv_cache_bytes
    )
    assert full.host_read_bytes == 0


def test_llama_cpp_8b_f16_at_4k_fits_a_16_gib_card() -> None:
    """Issue 25: llama.cpp ran Llama 3 8B F16 at a 4k context on a 16 GB RTX 4080, where we said it did not
    fit. The token embedding stays in system RAM (llama.cpp keeps token_embd on the CPU: one row per token),
    the f16 cache of n_ctx 4096 is allocated up front and the compute buffer holds one micro-batch's logits."""
    from advisor.recommend.devices import usable_bytes

    w = Workload("generate", 1, "fp16", weights="fp16", prompt_len=3584, new_tokens=512, runtime=Runtime.LLAMA_CPP)
    m = estimate(zoo.build("llama-3.1-8b", 3584), w).memory
    # every parameter but token_embd at 2 B: 15,009,849,344 (the norms too, which an F16 GGUF keeps in f32:
    # 65 x 4096 x 2 B = 532,480 B more in the file, not modelled)
    weights = (8_030_261_248 - 128256 * 4096) * 2
    kv = 4096 * 32 * 2 * 8 * 128 * 2  # n_ctx 4096 x 32 layers x K,V x 8 heads x 128 x f16: 512 MiB
    compute = 512 * 128256 * 4 + 512 * 4096 * 4  # n_ubatch 512: f32 logits + one f32 hidden state: 258.5 MiB
    assert (m.at_peak.weights, m.at_peak.kv_cache, m.at_peak.temporaries) == (weights, kv, compute)
    assert m.required_bytes == weights + kv + compute == 15_817_777_152  # 14.73 GiB: ggml buffers, no churn
    assert m.required_bytes < usable_bytes(16 * GIB)  # 15.18 GiB usable of a 16 GiB card: it fits


def test_generate_runtime_defaults_follow_the_weights(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from advisor.cli import main

    assert (
        main(
            [
                "estimate",
                "zoo:llama-3.1-8b",
                "--mode",
                "generate",
                "--weights",
                "q4_k_m",
                "--prompt-len",
                "3584",
                "--new-tokens",
                "512",
                "--batch",
                "1",
                "--json",
            ]
        )
        == 0
    )
    data = json.loads(capsys.readouterr().out)
    assert data["generation"]["runtime"] == "llama.cpp"
    assert any("the default for q4_k_m" in n for n in data["assumptions"])
    # f16 cache for n_ctx 4096 allocated up front: 4096 x 32 x 2 x 8 x 128 x 2 B = 512 MiB
    assert data["memory"]["kv_cache_bytes"] == 512 * MIB
    assert data["memory"]["required_bytes"] == data["memory"]["peak_bytes"]  # ggml buffers: no allocator churn
    assert main(["estimate", "zoo:llama-3.1-8b", "--mode", "generate", "--weights", "int4", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["generation"]["runtime"] == "transformers"


def test_transformers_decode_counts_the_cache_cat() -> None:
    """At batch 16 the decode step sets the peak: weights + the whole cache + one layer's keys copied by
    DynamicLayer.update's torch.cat + the fp32 logits, scores and probabilities of the last position."""
    w = Workload("generate", 16, "bf16", prompt_len=64, new_tokens=960)
    e = estimate(zoo.build("llama-3.1-8b", 64), w)
    m = e.memory
    assert m.peak_phase == "decode"
    tokens = 64 + 960
    kv = 16 * tokens * 32 * 2 * 8 * 128 * 2  # 8 GiB
    cat = 16 * tokens * 8 * 128 * 2  # one layer's keys: 32 MiB
    logits = 16 * 3 * 128256 * 4
    hidden = 16 * (4 * 4096 + 3 * 14336) * 2
    assert m.at_peak.kv_cache == kv
    assert m.at_peak.temporaries == pytest.approx(cat + logits + hidden, abs=512 * 8)


def test_vllm_pool_and_concurrency() -> None:
    """vLLM on an 80 GiB card with Llama 3.1 8B bf16: 0.9 of the card minus weights and workspace in blocks of
    16 tokens x 32 layers x 2 x 8 x 128 x 2 B = 2 MiB."""
    from advisor.core.llm.runtime import vllm_block_bytes, vllm_pool
    from advisor.core.zoo.llm import preset_decoder

    spec = preset_decoder("llama-3.1-8b")
    block = vllm_block_bytes(spec, "bf16")
    assert block == 16 * 32 * 2 * 8 * 128 * 2
    pool = vllm_pool(80 * GIB, 8_030_261_248 * 2, 2 * GIB, block)
    assert pool.budget_bytes == int(80 * GIB * 0.9)
    assert pool.blocks == (int(80 * GIB * 0.9) - 8_030_261_248 * 2 - 2 * GIB) // block
    assert pool.concurrent_sequences(8192) == pool.blocks // 512  # 8192 tokens = 512 blocks
    e = estimate(
        zoo.build("llama-3.1-8b", 64),
        Workload("generate", 4, "bf16", prompt_len=1000, new_tokens=24, runtime=Runtime.VLLM),
    )
    assert e.memory.at_peak.kv_cache == 4 * 64 * block  # 1024 tokens = 64 blocks per sequence
    # the card memory whose 0.9 holds it, less the CUDA context (726,466,560 B) and workspaces (77,594,624 B)
    # the fit takes off usable memory: vLLM's share of total memory leaves the context outside it
    # 0.17-0.19 capture the CUDA graphs after the share, held outside it too, in the rest of the card (10%),
    # which holds them: 32 layers x 86 graphs (51 piecewise sizes up to 512 tokens, 35 full ones up to 256
    # sequences) x 199,000 B, the pool of 512 tokens x 3 x (4,096 + 14,336) x 2 B, and FlashAttention 3's
    # accumulators of 32 splits x 256 sequences x 32 heads x 129 x 4 B (core/llm/vllm_graphs.py)
    outside = 726_466_560 + 77_594_624
    graphs = 32 * 86 * 199_000 + 512 * 3 * (4096 + 14336) * 2 + 32 * 256 * 32 * 129 * 4
    assert graphs == 739_537_408
    assert e.memory.required_bytes == math.ceil((e.memory.peak_bytes - graphs) / 0.9) - outside
    half = estimate(
        zoo.build("llama-3.1-8b", 64),
        Workload(
            "generate", 4, "bf16", prompt_len=1000, new_tokens=24, runtime=Runtime.VLLM, gpu_memory_utilization=0.5
        ),
    )
    assert half.memory.required_bytes == math.ceil((half.memory.peak_bytes - graphs) / 0.5) - outside


def test_vllm_profile_sorts_a_vocabulary_row_per_sequence() -> None:
    """Up to 0.16 the profile's sampler sorts max_num_seqs rows of the vocabulary (top_p 0.9, top_k vocab - 1):
    38 bytes per entry held (bf16 logits 2, fp32 copy 4, sorted values 4 and int64 indices 8, the sort's int64
    index input 8 and its scratch 12). Llama 3.1 8B, 1024 sequences (V1 on an H100): 1024 x 128,256 x 38 B."""
    from advisor.core.llm.runtime import VLLM_PROFILE_TOKENS, vllm_sampler_bytes, vllm_workspace_bytes
    from advisor.core.zoo.llm import preset_decoder

    old = VLLMRelease.V0_16
    spec = preset_decoder("llama-3.1-8b")
    assert vllm_sampler_bytes(spec, 1024, old) == 1024 * 128_256 * 38 == 4_990_697_472  # 4.65 GiB (log: 4.76)
    assert vllm_sampler_bytes(spec, 256, old) == 256 * 128_256 * 38
    # the forward's hidden states (8,192 x 4,096 x 2 B) are still held while the sampler runs; the CUDA-graph
    # pool: 512 decode tokens x ((4 x 4,096 + 3 x 14,336) x 2 + 128,256 x 2) B
    graphs = 512 * ((4 * 4096 + 3 * 14336) * 2 + 128_256 * 2)
    held = VLLM_PROFILE_TOKENS * 4096 * 2 + 4_990_697_472
    assert vllm_workspace_bytes(spec, 10**9, 2, 1024, release=old) == held + graphs  # exceeds a 1 GB forward
    assert vllm_workspace_bytes(spec, 6 * 10**9, 2, 1024, release=old) == 6 * 10**9 + graphs  # a larger one sets it


def test_vllm_0_17_on_masks_top_k_top_p_without_sorting() -> None:
    """From 0.17 a Triton kernel masks the fp32 logits in place (apply_top_k_top_p_triton, 8 rows and more), so
    the profile's sampler holds per entry the bf16 logits 2, their fp32 copy 4, the softmax's probabilities 4
    and random_sample's exponential draws 4: Llama 3.1 8B at 1,024 sequences, 1,024 x 128,256 x 14 B =
    1.71 GiB; with the forward's hidden states (8,192 x 4,096 x 2 B) 1.77 GiB, where vLLM 0.19's log prints
    1.89 GiB of activation (llm-d-planner v0.19.0 logs). In fp32 there is no copy: 12 B."""
    from advisor.core.llm.runtime import sampler_bytes_per_entry, vllm_sampler_bytes, vllm_warmup_bytes
    from advisor.core.zoo.llm import preset_decoder

    spec = preset_decoder("llama-3.1-8b")
    assert sampler_bytes_per_entry(VLLMRelease.V0_19, 2) == 2 + 4 + 4 + 4 == 14
    assert sampler_bytes_per_entry(VLLMRelease.V0_19, 4) == 4 + 4 + 4 == 12
    assert sampler_bytes_per_entry(VLLMRelease.V0_16, 4) == 4 + 4 + 8 + 8 + 12 == 36
    assert vllm_sampler_bytes(spec, 1024) == 1024 * 128_256 * 14 == 1_838_678_016  # the newest by default
    # the warm-up after the KV pool samples min(1,024, 8,192) rows again, in the profile's freed activations:
    # it needs 1,024 x 3 x 4,096 x 2 B of hidden states more than the sampler, less the profile's 8,192 x
    # 4,096 x 2 B of them, so nothing beyond; with 64 batched tokens: 64 rows x 3 x 4,096 x 2 B + their
    # sampler (64 x 128,256 x 14 B) against the profile's 64 x 4,096 x 2 B + 1,024 rows of sampler: none either
    assert vllm_warmup_bytes(spec, 2, 1024, 8192, VLLMRelease.V0_19) == 0
    assert vllm_warmup_bytes(spec, 2, 1024, 64, VLLMRelease.V0_19) == 0
    assert vllm_warmup_bytes(spec, 2, 1024, 8192, VLLMRelease.V0_16) == 0


def test_vllm_profiles_with_its_fused_attention() -> None:
    """vLLM's attention backends take the window as an argument: its profiling forward of Mistral 7B over
    32,768 tokens builds no (seq, seq) mask, where transformers' SDPA path builds a boolean one (32,768^2 B =
    1 GiB) and an additive bias for each masked call; so vLLM's workspace is that of the same model without
    a window. gpt-oss's profile runs fused attention too, not transformers' eager scores."""
    from advisor.core.graph import Graph
    from advisor.core.llm.graph import decoder_graph
    from advisor.core.llm.runtime import vllm_profile_spec
    from advisor.core.zoo.llm import preset_decoder

    spec = preset_decoder("mistral-7b")
    assert spec.sliding_window == 4096 and vllm_profile_spec(spec).sliding_window == 0
    assert not vllm_profile_spec(preset_decoder("gpt-oss-20b")).eager_attention

    def workspace(graph: Graph) -> int:
        w = Workload("generate", 1, "fp16", prompt_len=32767, new_tokens=1, runtime=Runtime.VLLM)
        return estimate(graph, replace(w, max_num_batched_tokens=32768)).memory.at_peak.temporaries

    windowless = decoder_graph(replace(spec, sliding_window=0, sliding_layers=()), 64)
    assert workspace(zoo.build("mistral-7b", 64)) == workspace(windowless)
    assert spec.sdpa_mask_bytes(32768) == 32768 * 32768  # what transformers would hold and vLLM does not


def test_vllm_fp32_profile_keeps_its_fused_attention() -> None:
    """In fp32 PyTorch's SDPA runs grouped KV heads on its math path, which holds the scores; vLLM's own
    backends (FlexAttention or Triton where FlashAttention needs half) stay fused. Llama 3.1 8B over 1,024
    tokens: the transformers replay holds at least one layer's fp32 scores, 32 heads x 1,024^2 x 4 B =
    134,217,728 B, beside what the vLLM profile's replay holds."""
    from advisor.core.llm.decoder import DecoderSpec
    from advisor.core.llm.graph import decoder_graph
    from advisor.core.llm.runtime import vllm_profile_spec
    from advisor.core.replay import replay_step
    from advisor.core.zoo.llm import preset_decoder

    spec = preset_decoder("llama-3.1-8b")
    w = Workload("infer", 1, "fp32")

    def activations(s: DecoderSpec) -> int:
        p = replay_step(decoder_graph(s, 1024, last_token_logits=True), w)
        return p.peak_bytes - p.at_peak.weights

    assert activations(spec) - activations(vllm_profile_spec(spec)) >= 32 * 1024 * 1024 * 4 == 134_217_728


def test_vllm_holds_mxfp4_scales_twice_and_expert_biases_in_fp32() -> None:
    """vLLM's Triton MoE backend (Hopper) swizzles the MXFP4 values and scales into new tensors but keeps the
    checkpoint's scales registered, and turns the experts' biases to fp32. gpt-oss-20b: the file's
    13,761,264,768 B + one E8M0 byte per 32 of the 19,110,297,600 expert weights (597,196,800 B) + 2 B more
    for each of the 24 x 32 x (2 x 2,880 + 2,880) = 6,635,520 biases = 14,371,732,608 B = 13.385 GiB
    (llm-d's H100 log: 13.47 GiB)."""
    from advisor.core.llm.quant import weight_bytes
    from advisor.core.llm.runtime import vllm_weight_bytes
    from advisor.core.zoo.llm import preset_decoder

    spec = preset_decoder("gpt-oss-20b")
    file_bytes = weight_bytes(spec, "mxfp4")
    assert vllm_weight_bytes(spec, "mxfp4", file_bytes) == file_bytes + 597_196_800 + 2 * 6_635_520 == 14_371_732_608
    assert vllm_weight_bytes(spec, "bf16", 123) == 123  # other formats: the file's bytes
    w = Workload("generate", 1, "bf16", prompt_len=4000, new_tokens=96, runtime=Runtime.VLLM, weights="mxfp4")
    assert estimate(zoo.build("gpt-oss-20b", 64), w).memory.at_peak.weights == 14_371_732_608


def test_enforce_eager_captures_no_cuda_graphs() -> None:
    """vLLM --enforce-eager captures no CUDA graphs. Up to 0.16 the workspace loses the graph pool, 512 decode
    tokens x ((4 x 4,096 + 3 x 14,336) x 2 + 128,256 x 2) B = 192,151,552 B for Llama 3.1 8B in bf16; from 0.17
    the engine's graphs (core/llm/vllm_graphs.py): 739,537,408 B at 256 sequences (test_vllm_pool_and_
    concurrency), while its non-torch memory stays. Nothing else moves."""
    from advisor.core.llm.runtime import vllm_graph_bytes, vllm_workspace_bytes
    from advisor.core.zoo.llm import preset_decoder

    spec = preset_decoder("llama-3.1-8b")
    old = VLLMRelease.V0_16
    assert vllm_graph_bytes(spec, 2) == 512 * ((4 * 4096 + 3 * 14336) * 2 + 128_256 * 2) == 192_151_552
    eager = vllm_workspace_bytes(spec, 6 * 10**9, 2, 256, enforce_eager=True, release=old)
    assert vllm_workspace_bytes(spec, 6 * 10**9, 2, 256, release=old) - eager == 192_151_552
    w = Workload("generate", 1, "bf16", prompt_len=4000, new_tokens=96, runtime=Runtime.VLLM)
    graphs, none = (estimate(zoo.build("llama-3.1-8b", 64), x) for x in (w, replace(w, enforce_eager=True)))
    assert graphs.memory.at_peak.temporaries - none.memory.at_peak.temporaries == 739_537_408
    assert graphs.memory.at_peak.kv_cache == none.memory.at_peak.kv_cache
    assert any("no CUDA-graph pool (--enforce-eager" in note for note in none.assumptions)


@pytest.mark.parametrize(
    "optimizer, state_bytes",
    [
        ("adamw", 2 * 4 * 41_943_040),  # two fp32 states per adapter weight: 335,544,320 B
        # bitsandbytes blockwise 8-bit: per state 1 byte + an fp32 absmax per 256 = 2 x 1.015625 B per weight
        ("adamw8bit", 2 * 41_943_040 + 2 * 41_943_040 // 256 * 4),  # 85,196,800 B
        # paged: tensors of >= 100,000 elements (gate B, up B: 14336 x 16; down A: 16 x 14336) page out;
        # 32 x (1,310,720 - 3 x 229,376) = 19,922,944 weights stay in device memory
        ("paged_adamw8bit", 2 * 19_922_944 + 2 * 19_922_944 // 256 * 4),
        ("lion", 4 * 41_943_040),  # one fp32 state
        # Adafactor, no first moment: rows + cols fp32 per adapter matrix, per layer q 2 x 4112, k and v 4112 +
        # 1040, o 2 x 4112, gate and up 4112 + 14352, down 14352 + 4112 = 82,144 values
        ("adafactor", 32 * 82_144 * 4),
    ],
)
def test_optimizer_state_bytes_per_implementation(optimizer: str, state_bytes: int) -> None:
    w = Workload("train", 1, "amp_bf16", optimizer, finetune="lora")  # type: ignore[arg-type]
    e = estimate(zoo.build("llama-3.1-8b", 64), w)
    # each layer's state is one allocation per slot, rounded up to 512 B by the allocator model
    assert e.memory.at_peak.optimizer_state == pytest.approx(state_bytes, abs=32 * 7 * 2 * 512)


def test_eager_attention_keeps_the_probabilities() -> None:
    """--attention eager on Llama 3.2 1B under autocast: each layer keeps the fp32 softmax and its half copy,
    batch x heads x seq^2 x (4 + 2) B, where SDPA keeps a log-sum-exp of batch x heads x seq x 4 B."""
    graph = zoo.build("llama-3.2-1b", 1024)
    kept = {}
    for attention in ("sdpa", "eager", "flash"):
        e = estimate(graph, Workload("train", 2, "amp_bf16", "adamw", attention=attention))  # type: ignore[arg-type]
        kept[attention] = next(r.kept_bytes for r in e.layers if r.name == "layers.0.self_attn.sdpa")
    probabilities = 2 * 32 * 1024 * 1024 * (4 + 2)  # 402,653,184 B
    lse = 2 * 32 * 1024 * 4
    assert kept["eager"] - kept["sdpa"] == probabilities - lse
    assert kept["flash"] == kept["sdpa"]


def test_offload_moves_optimizer_state_to_system_ram() -> None:
    """Llama 3.1 8B full fine-tune, amp_bf16, AdamW, checkpointing: ZeRO-Offload keeps the bf16 weights
    (8,030,261,248 x 2 B) and a 5e8-element bf16 gradient bucket on the GPU; master weights, gradients and
    both Adam states in fp32 (16 B a weight) in system RAM. Offloading the params too leaves two layer-sized
    buffers (the largest, the LM head: 128,256 x 4096 x 2 B each)."""
    from advisor.core.offload import host_bytes

    graph = zoo.build("llama-3.1-8b", 2048)
    base = Workload("train", 1, "amp_bf16", "adamw", checkpointing=True)
    plain = estimate(graph, base).memory
    opt = estimate(graph, Workload("train", 1, "amp_bf16", "adamw", checkpointing=True, offload="optimizer"))
    params = estimate(graph, Workload("train", 1, "amp_bf16", "adamw", checkpointing=True, offload="params"))
    n = 8_030_261_248
    assert plain.at_peak.optimizer_state > 0 == opt.memory.at_peak.optimizer_state
    assert opt.memory.at_peak.weights == pytest.approx(n * 2, abs=300 * 512)
    assert params.memory.at_peak.weights == 2 * 128256 * 4096 * 2
    assert host_bytes(opt.workload, n, n, 8) == n * 16  # 128.5 GB
    assert any("119.7 GiB" in note for note in opt.assumptions)
    assert params.memory.peak_bytes < opt.memory.peak_bytes < plain.peak_bytes / 5


def test_fused_linear_cross_entropy_never_holds_the_logits() -> None:
    """--loss fused (Liger / Cut Cross-Entropy) on Llama 3.1 8B QLoRA at 4,096 tokens: the head keeps only the
    grad_input it computed in forward (4096 x 4096 x 4 B: the fp32 final norm output's size) and holds one
    chunk of fp32 logits at a time, ceil(4096 / ceil(128256 / 4096)) = 128 rows, instead of the sequence's."""
    graph = zoo.build("llama-3.1-8b", 4096)

    def run(loss: str) -> Estimate:
        return estimate(
            graph, Workload("train", 1, "amp_bf16", "adamw", checkpointing=True, finetune="qlora", loss=loss)
        )  # type: ignore[arg-type]

    plain, fused = run("standard"), run("fused")
    rows = {r.name: r for r in fused.layers}
    assert rows["lm_head"].kind == "cross_entropy" and "loss" not in rows
    assert rows["lm_head"].kept_bytes == 4096 * 4096 * 4
    logits_fp32 = 4096 * 128256 * 4  # 2.1 GB, of which the plain loss keeps two and makes more in backward
    assert plain.memory.peak_bytes - fused.memory.peak_bytes > 2 * logits_fp32
    assert fused.trainable_param_count == plain.trainable_param_count


def test_expandable_segments_leave_no_stranded_segments() -> None:
    """Llama 3.1 8B QLoRA at 12,264 tokens (Unsloth's 40 GB Hugging Face + FA2 row): the plain allocator
    replay strands memory in segments that a checkpointed layer's fp32 residual pins, so the budget is above
    1.05 x the peak; with expandable_segments:True freed pages are unmapped and the budget is the peak + the
    replay's 20 MiB granule (core/budget.py REPLAY_MARGIN_BYTES)."""
    graph = zoo.build("llama-3.1-8b", 12264)

    def run(expandable: bool) -> Estimate:
        return estimate(
            graph,
            Workload(
                "train",
                1,
                "amp_bf16",
                "adamw8bit",
                checkpointing=True,
                finetune="qlora",
                lora_rank=32,
                attention="flash",
                expandable_segments=expandable,
            ),
        )

    plain, expandable = run(False).memory, run(True).memory
    assert plain.peak_bytes == expandable.peak_bytes
    assert plain.required_bytes > 1.05 * plain.peak_bytes
    # peak + 20 MiB + blocks handed out whole where the remainder was too small to split: 0.23% here
    assert expandable.required_bytes == pytest.approx(expandable.peak_bytes + 20 * 2**20, rel=0.005)
    assert expandable.required_bytes >= expandable.peak_bytes + 20 * 2**20


def test_max_num_seqs_reaches_the_profile(capsys: pytest.CaptureFixture[str]) -> None:
    """--max-num-seqs sets how many vocabulary rows the profile's sampler sorts: 1,024 more sequences hold
    1,024 x 128,256 x 38 B = 4,990,697,472 B more (Llama 3.1 8B, where the sampler sets the profile's peak)."""
    from advisor.cli import main

    def peak(seqs: str, release: str = "") -> int:
        assert (
            main(
                [
                    "estimate",
                    "zoo:llama-3.1-8b",
                    "--mode",
                    "generate",
                    "--precision",
                    "bf16",
                    "--runtime",
                    "vllm",
                    "--max-num-seqs",
                    seqs,
                    "--json",
                    *(["--vllm-version", release] if release else []),
                ]
            )
            == 0
        )
        return int(json.loads(capsys.readouterr().out)["memory"]["peak_bytes"])

    # vLLM 0.17-0.19 (the default) hold 14 B per entry (bf16 logits, fp32 copy, probabilities, draws); 0.16 sorts
    assert peak("2048") - peak("1024") == 1024 * 128_256 * 14 == 1_838_678_016
    assert peak("2048", "0.16") - peak("1024", "0.16") == 1024 * 128_256 * 38 == 4_990_697_472
    with pytest.raises(SystemExit) as refused:  # argparse: one line, exit code 2
        main(["estimate", "zoo:llama-3.1-8b", "--mode", "generate", "--runtime", "vllm", "--max-num-seqs", "0"])
    assert refused.value.code == 2 and "--max-num-seqs: must be at least 1" in capsys.readouterr().err


def test_enforce_eager_reaches_the_engine(capsys: pytest.CaptureFixture[str]) -> None:
    """--enforce-eager on the command line takes the CUDA graphs out of vLLM 0.19's memory: Llama 3.2 1B in bf16,
    16 layers x 86 graphs x 199,000 B, the pool of 512 tokens x 3 x (2,048 + 8,192) x 2 B and the accumulators
    of 32 splits x 256 sequences x 32 heads x 65 x 4 B (core/llm/vllm_graphs.py)."""
    from advisor.cli import main

    def peak(*extra: str) -> int:
        argv = ["estimate", "zoo:llama-3.2-1b", "--mode", "generate", "--precision", "bf16", "--runtime", "vllm"]
        assert main([*argv, *extra, "--json"]) == 0
        return int(json.loads(capsys.readouterr().out)["memory"]["peak_bytes"])

    graphs = 16 * 86 * 199_000 + 512 * 3 * (2048 + 8192) * 2 + 32 * 256 * 32 * 65 * 4
    assert peak() - peak("--enforce-eager") == graphs == 373_438_720


def test_bitsandbytes_4bit_layers_hand_back_their_input_dtype() -> None:
    """QLoRA under autocast: prepare_model_for_kbit_training leaves an fp32 residual stream, and bitsandbytes'
    Linear4bit returns its input's dtype (out.to(inp_dtype)): q_proj and down_proj (fp32 inputs) give 4 bytes
    per element, o_proj (the bf16 attention output) 2, lm_head (not quantized) autocast's 2. Plain LoRA on a
    bf16 base: autocast's 2 everywhere."""
    from advisor.core.llm.lora import with_adapters
    from advisor.core.loss_head import step_graph
    from advisor.core.step_dtypes import element_bytes

    def dtypes(finetune: str) -> dict[str, int]:
        w = Workload("train", 1, "amp_bf16", "adamw", finetune=finetune)  # type: ignore[arg-type]
        graph = step_graph(with_adapters(zoo.build("llama-3.2-1b", 64), w), w)
        specs = [[graph.nodes[s].output for s in n.inputs] for n in graph.nodes]
        sizes = element_bytes(graph.nodes, specs, w)
        return {n.name: b for n, b in zip(graph.nodes, sizes, strict=True) if n.name.startswith(("layers.0.", "lm"))}

    qlora, lora = dtypes("qlora"), dtypes("lora")
    assert (qlora["layers.0.self_attn.q_proj"], qlora["layers.0.mlp.down_proj"]) == (4, 4)
    assert (qlora["layers.0.self_attn.o_proj"], qlora["lm_head"]) == (2, 2)
    assert {lora[name] for name in ("layers.0.self_attn.q_proj", "layers.0.mlp.down_proj", "lm_head")} == {2}


def test_peft_clones_the_4bit_base_output() -> None:
    """peft's Linear4bit.forward copies the base output (`result = result.clone()`) before adding the adapters:
    under QLoRA each adapted layer allocates one more output-sized tensor in forward, 512 tokens x 14,336 for
    Llama 3.1 8B's gate_proj = 7,340,032 elements; plain LoRA on a 16-bit base does not."""
    from advisor.core.graph import TensorSpec
    from advisor.core.llm.lora import LoRALinear, with_adapters

    graph = zoo.build("llama-3.1-8b", 512)
    qlora = with_adapters(graph, Workload("train", 1, "amp_bf16", finetune="qlora"))
    lora = with_adapters(graph, Workload("train", 1, "amp_bf16", finetune="lora"))
    gate = next(i for i, n in enumerate(graph.nodes) if n.name == "layers.0.mlp.gate_proj")
    q_op, l_op = qlora.nodes[gate].op, lora.nodes[gate].op
    assert isinstance(q_op, LoRALinear) and isinstance(l_op, LoRALinear)
    x, y = TensorSpec((512, 4096), "float"), TensorSpec((512, 14336), "float")
    clone = q_op.forward_transients([x], y, True)
    assert [(t.numel, t.dtype) for t in clone] == [(512 * 14336, "act")] and 512 * 14336 == 7_340_032
    assert l_op.forward_transients([x], y, True) == ()


def test_lora_on_int8_weights_is_prepared_as_trl_does() -> None:
    """LoRA on LLM.int8 weights under autocast: TRL's SFTTrainer calls prepare_model_for_int8_training on an
    8-bit model (trl 5fb5af7, 2023-05-24), which casts every fp16 parameter that is not int8 to fp32 (peft
    3714aa2 utils/other.py): embeddings, LM head and norms. Autocast then casts the fp32 LM head back to
    fp16 for its matmul; the int8 layers go through bitsandbytes' MatMul8bitLt, which autocast leaves alone."""
    from advisor.core.llm.lora import with_adapters
    from advisor.core.replay import replay_step, stored_graph
    from advisor.core.tracker import Store

    graph = zoo.build("llama-7b", 256)
    amp = Workload("train", 1, "amp_fp16", "adamw", weights="int8", finetune="lora", lora_targets=("q_proj",))
    pure = Workload("train", 1, "fp16", "adamw", weights="int8", finetune="lora", lora_targets=("q_proj",))
    assert amp.kbit_prepared and not pure.kbit_prepared
    prepared, half = ([n.stored for n in stored_graph(graph, w).nodes if n.stored] for w in (amp, pure))
    plain = 2 * 32000 * 4096 + 65 * 4096  # embed_tokens, lm_head, 65 RMSNorm weights: 262,410,240 parameters
    assert sum(s.nbytes for s in prepared) - sum(s.nbytes for s in half) == plain * (4 - 2)  # 524,820,480 B
    assert sum(s.int8_matmul for s in prepared) == 32 * 7  # the blocks' seven projections; the LM head stays 16-bit
    adapted = with_adapters(graph, amp)
    int8 = [n for n in stored_graph(adapted, amp).nodes if n.stored and n.stored.int8_matmul]
    assert len(int8) == 32 * 7  # q_proj keeps its int8 base under the adapter
    names = [n.name for n in adapted.nodes]
    events = replay_step(adapted, amp).events
    casts = {names[k.node]: size for k, size in events if k.store == Store.WEIGHT_CAST and size > 0}
    assert casts == {"lm_head": 32000 * 4096 * 2}  # one fp16 copy of the fp32 head: 262,144,000 B


def test_a_loop_that_drops_the_logits_frees_them_before_backward(capsys: pytest.CaptureFixture[str]) -> None:
    """Qwen2.5 7B full fine-tune, 2,048 tokens: a plain loop keeps the bf16 logits to the optimizer step;
    transformers' Trainer (compute_loss returns the loss alone) and torchtune (`del logits` in _loss_step)
    free them once the loss exists, so backward and the step run without 2048 x 152064 x 2 B."""
    from advisor.cli import main

    graph = zoo.build("qwen2.5-7b", 2048)
    kept = estimate(graph, qwen7b_full(True)).memory
    dropped = estimate(graph, replace(qwen7b_full(True), drops_logits=True)).memory
    logits = 2048 * 152064 * 2  # 622,854,144 B
    assert kept.at_peak.activations == logits + 512  # + the loss
    assert dropped.at_peak.activations == 512  # the loss alone
    assert kept.peak_bytes - dropped.peak_bytes == logits  # the optimizer step sets both peaks
    with pytest.raises(SpecError, match="drops_logits"):
        Workload("infer", 1, drops_logits=True)
    argv = ["estimate", "zoo:qwen2.5-0.5b", "--seq-len", "64", "--batch", "1", "--json"]
    assert main([*argv, "--drop-logits"]) == 0
    notes = json.loads(capsys.readouterr().out)["assumptions"]
    assert any("drops the model output before backward" in n for n in notes)


def test_max_num_batched_tokens_sizes_the_vllm_profile() -> None:
    """vLLM profiles one forward over max_num_batched_tokens (V1 profile_run: _dummy_run(max_num_tokens); before
    chunked prefill, 0.2-0.5, SchedulerConfig made it max(max_model_len, 2048)). Llama 3.1 8B with 1,024
    sequences, where the sampler's sort sets the profile's peak: the hidden states it holds meanwhile are
    tokens x 4,096 x 2 B, so 8,192 tokens hold (8,192 - 2,048) x 4,096 x 2 = 50,331,648 B more than 2,048."""

    def peak(tokens: int) -> int:
        w = Workload(
            "generate",
            1,
            "bf16",
            prompt_len=1000,
            new_tokens=24,
            runtime=Runtime.VLLM,
            max_num_seqs=1024,
            max_num_batched_tokens=tokens,
        )
        return estimate(zoo.build("llama-3.1-8b", 64), w).memory.peak_bytes

    assert peak(8192) - peak(2048) == (8192 - 2048) * 4096 * 2 == 50_331_648
    with pytest.raises(SpecError, match="max_num_batched_tokens: must be at least 1"):
        Workload("generate", 1, "bf16", runtime=Runtime.VLLM, max_num_batched_tokens=0)


def test_vllm_0_19_needs_room_after_its_share() -> None:
    """0.17-0.19 size the KV pool to fill the share without the CUDA graphs, then capture them: the rest of the
    card, (1 - utilization) of it, must hold them beside the CUDA context and workspaces (804,061,184 B). 10 GiB
    held of which 1 GiB of graphs: at 0.95 the rest needs (804,061,184 + 2^30) / 0.05 B of card, more than the
    share needs (9 GiB / 0.95); at 0.5 the share sets it."""
    from advisor.core.llm.runtime import VLLM_OUTSIDE_SHARE_BYTES, vllm_held_limit, vllm_required_bytes

    outside = VLLM_OUTSIDE_SHARE_BYTES
    assert outside == 726_466_560 + 77_594_624 == 804_061_184
    held, graphs = 10 * GIB, GIB
    rest = (804_061_184 + 1_073_741_824) * 20  # / 0.05 = 37,556,060,160 B of card
    assert vllm_required_bytes(held, 0.95, graphs) == pytest.approx(rest - outside, abs=1)  # 36,751,998,976
    share = math.ceil(9 * GIB / 0.5)  # 19,327,352,832 B of card; the rest (half of it) holds the graphs
    assert vllm_required_bytes(held, 0.5, graphs) == share - outside
    assert vllm_required_bytes(held, 0.5) == math.ceil(held / 0.5) - outside  # up to 0.16: all in the share
    # turned round: a 78 GiB card holds its 0.95 share plus the graphs; 4 GiB of graphs do not fit its 5%
    card = 78 * GIB + outside
    assert vllm_held_limit(78 * GIB, 0.95, graphs) == min(78 * GIB, int(card * 0.95) + GIB)
    assert vllm_held_limit(78 * GIB, 0.95, 4 * GIB) == 0
