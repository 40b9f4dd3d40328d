"""vLLM 0.17-0.19's CUDA graphs and non-torch memory per card (core/llm/vllm_graphs.py), with the arithmetic."""

from __future__ import annotations

from dataclasses import replace

from advisor.core.llm.vllm_graphs import (
    BYTES_PER_KERNEL_NODE,
    GRAPH_BYTES_PER_LAYER_GRAPH,
    NON_TORCH_ONE_CARD_BYTES,
    NON_TORCH_STAGE_BYTES,
    NON_TORCH_TENSOR_PARALLEL_BYTES,
    capture_sizes,
    largest_split_batch,
    moe_extra_kernels,
    vllm_engine_shape,
)
from advisor.core.zoo.llm import preset_decoder


def test_capture_sizes_are_vllms_default_list() -> None:
    # 1, 2, 4; 8 to 248 by 8 (31 sizes); 256 to 512 by 16 (17 sizes)
    assert capture_sizes(512) == 3 + 31 + 17 == 51
    assert capture_sizes(256) == 3 + 31 + 1 == 35  # the log's "FULL=35 (largest=256)" at 256 sequences
    assert capture_sizes(4) == 3
    # gpt-oss's 1,024: 256 to 1,024 by 16 (49 sizes), the log's "PIECEWISE=83 (largest=1024)"
    assert capture_sizes(1024) == 3 + 31 + 49 == 83


def test_flash_attention_splits_no_batch_above_992() -> None:
    assert largest_split_batch(512) == 512  # a capture size itself
    assert largest_split_batch(1024) == 992  # 1,008 and 1,024 run unsplit (PREPARE_VARLEN_MAX_BATCHES_1CTA)
    assert largest_split_batch(300) == 288  # the largest full graph of at most 300 sequences
    assert largest_split_batch(0) == 0  # no full graphs


def test_llama_8b_graphs_on_one_card_and_split() -> None:
    spec = preset_decoder("llama-3.1-8b")  # 32 layers, hidden 4,096, MLP 14,336, 32 heads of 128
    shape = vllm_engine_shape(spec, 2, 1024, enforce_eager=False, mxfp4_experts=False)
    # 1,024 sequences: piecewise sizes up to min(2 x 1,024, 512) = 512 (51), full decode up to 512 (51)
    assert shape.graphs == 51 + 51
    executables = 32 * 102 * GRAPH_BYTES_PER_LAYER_GRAPH
    whole = 512 * 3 * 4096 * 2  # residual, normed input, o_proj output of 512 tokens in bf16
    split = 512 * 3 * 14336 * 2  # gate_up (2 x 14,336) and the activation
    accumulators = 32 * 512 * 32 * (128 + 1) * 4  # 32 splits x 512 sequences x 32 heads x (128 + lse) fp32
    assert shape.graph_bytes() == executables + whole + split + accumulators == 976_691_712  # 0.91 GiB; the log: 0.91
    # -tp 2: every card captures all 32 layers, its half of the heads and of the MLP
    assert shape.graph_bytes(tensor_ways=2) == executables + whole + (split + accumulators) // 2
    # -pp 4: a stage captures its 8 layers; the pool is the largest capture's, whole
    assert shape.graph_bytes(stages=4) == 8 * 102 * GRAPH_BYTES_PER_LAYER_GRAPH + whole + split + accumulators
    assert shape.non_torch_bytes() == NON_TORCH_ONE_CARD_BYTES
    assert shape.non_torch_bytes(tensor_ways=2) == NON_TORCH_TENSOR_PARALLEL_BYTES
    assert shape.non_torch_bytes(stages=2) == NON_TORCH_STAGE_BYTES
    assert shape.held_bytes(2) == shape.graph_bytes(2) + NON_TORCH_TENSOR_PARALLEL_BYTES


def test_eager_fp32_and_mla_engines() -> None:
    spec = preset_decoder("llama-3.1-8b")
    eager = vllm_engine_shape(spec, 2, 256, enforce_eager=True, mxfp4_experts=False)
    assert eager.graph_bytes() == 0 and eager.held_bytes() == NON_TORCH_ONE_CARD_BYTES  # libraries stay
    # fp32 cannot run FlashAttention (no accumulators); the pool's tensors are 4 bytes an element
    fp32 = vllm_engine_shape(spec, 4, 256, enforce_eager=False, mxfp4_experts=False)
    assert fp32.accumulator_bytes == 0 and fp32.split_activation_bytes == 512 * 3 * 14336 * 4
    assert fp32.graphs == 51 + 35  # 256 sequences: full decode graphs up to 256
    mla = vllm_engine_shape(preset_decoder("deepseek-v2-lite"), 2, 256, enforce_eager=False, mxfp4_experts=False)
    # FLASH_ATTN_MLA: 32 splits x 256 sequences x 16 heads x (512 latent values + lse) fp32
    assert mla.accumulator_bytes == 32 * 256 * 16 * (512 + 1) * 4 == 268_959_744


def test_dense_layers_launch_no_extra_kernels() -> None:
    spec = preset_decoder("llama-3.1-8b")
    shape = vllm_engine_shape(spec, 2, 1024, enforce_eager=False, mxfp4_experts=False)
    assert moe_extra_kernels(spec, mxfp4_experts=False) == 0 and shape.moe_layers == 0
    assert shape.graph_bytes() == 976_691_712  # as before the MoE kernels: test_llama_8b_graphs_on_one_card


def test_qwen3_moe_triton_experts() -> None:
    """Qwen3-30B-A3B in bf16 (vLLM's Triton experts): 48 MoE layers, each 5 kernels beyond a dense MLP."""
    spec = preset_decoder("qwen3-30b-a3b")  # hidden 2,048; 8 of 128 experts of 768; 32 heads of 128
    shape = vllm_engine_shape(spec, 2, 1024, enforce_eager=False, mxfp4_experts=False)
    assert shape.graphs == 51 + 51 and shape.moe_layers == 48 and shape.moe_extra_kernels == 5
    executables = 48 * 102 * GRAPH_BYTES_PER_LAYER_GRAPH  # 974,577,600
    moe = 48 * 102 * 5 * BYTES_PER_KERNEL_NODE  # router GEMM, topk_softmax, align, count_and_sort, moe_sum
    whole = 512 * 3 * 2048 * 2
    split = 512 * 3 * (768 * 8) * 2  # the routed experts' width: 8 x 768
    accumulators = 32 * 512 * 32 * (128 + 1) * 4
    assert moe == 244_800_000
    assert shape.graph_bytes() == executables + moe + whole + split + accumulators == 1_514_802_432
    # 1.41 GiB; the log (v019-qwen3-30b-a3b-h100): "CUDA graphs 1.41 GiB"


def test_gpt_oss_captures_to_1024_and_splits_to_992() -> None:
    """gpt-oss-20b with MXFP4 experts at 1,024 sequences: graphs of up to 1,024 tokens (83 + 83), split-KV
    accumulators of the 992-sequence full graph, 5 kernels a layer beyond a dense MLP."""
    spec = preset_decoder("gpt-oss-20b")  # 24 layers, hidden 2,880, 4 of 32 experts of 2,880, 64 heads of 64
    shape = vllm_engine_shape(spec, 2, 1024, enforce_eager=False, mxfp4_experts=True)
    assert shape.graphs == 83 + 83 and shape.moe_extra_kernels == 5
    executables = 24 * 166 * GRAPH_BYTES_PER_LAYER_GRAPH  # 792,816,000
    moe = 24 * 166 * 5 * BYTES_PER_KERNEL_NODE  # 199,200,000
    whole = 1024 * 3 * 2880 * 2  # the 1,024-token piecewise capture
    split = 1024 * 3 * (2880 * 4) * 2
    accumulators = 32 * 992 * 64 * (64 + 1) * 4  # 528,220,160: the 992 graph, not the unsplit 1,024
    total = executables + moe + whole + split + accumulators
    assert shape.graph_bytes() == total == 1_608_709_760  # 1.50 GiB; the log: 1.84 (module docstring)
    # in bf16 the same model runs the Triton experts: one kernel fewer fused, the same count beyond dense
    assert moe_extra_kernels(spec, mxfp4_experts=False) == 5
    # 256 sequences: piecewise still to 1,024 tokens (the override), full decode graphs to 256 (35)
    assert vllm_engine_shape(spec, 2, 256, enforce_eager=False, mxfp4_experts=True).graphs == 83 + 35


def test_llama4_chunked_attention_captures_piecewise_only() -> None:
    """Llama 4 Scout: no full graphs beside chunked local attention, so no split-KV accumulators; 48 MoE
    layers of routed experts and a shared expert (5 + 4 kernels beyond a dense MLP)."""
    spec = preset_decoder("llama-4-scout")  # hidden 5,120; 1 of 16 experts of 8,192 and a shared one
    shape = vllm_engine_shape(spec, 2, 1024, enforce_eager=False, mxfp4_experts=False)
    assert shape.graphs == 51 and shape.accumulator_bytes == 0 and shape.moe_extra_kernels == 5 + 4
    executables = 48 * 51 * GRAPH_BYTES_PER_LAYER_GRAPH
    moe = 48 * 51 * 9 * BYTES_PER_KERNEL_NODE
    whole = 512 * 3 * 5120 * 2
    split = 512 * 3 * 8192 * 2  # one routed expert's width
    # -tp 4: 0.68 GiB; the log (v019-llama-4-scout-tp4-h100): 1.13 (module docstring)
    assert shape.graph_bytes(tensor_ways=4) == executables + moe + whole + split // 4 == 729_492_096


def test_shared_experts_and_dense_first_layers() -> None:
    deepseek = preset_decoder("deepseek-v2-lite")  # layer 0 dense, 26 MoE layers with 2 shared experts
    shape = vllm_engine_shape(deepseek, 2, 256, enforce_eager=False, mxfp4_experts=False)
    assert shape.graphs == 51 + 35 and shape.moe_layers == 26 and shape.moe_extra_kernels == 5 + 4
    accumulators = 32 * 256 * 16 * (512 + 1) * 4  # FLASH_ATTN_MLA over the 512-wide latent
    pool = 512 * 3 * 2048 * 2 + 512 * 3 * (1408 * 6) * 2 + accumulators
    # two stages: the busiest holds 14 layers, 13 of them MoE (ceil(26 / 2))
    per_stage = 14 * 86 * GRAPH_BYTES_PER_LAYER_GRAPH + 13 * 86 * 9 * BYTES_PER_KERNEL_NODE
    assert shape.graph_bytes(stages=2) == per_stage + pool == 340_216_000 + pool
    qwen2_moe = replace(deepseek, moe=replace(deepseek.moe, shared_gate=True))  # sigmoid-gated shared expert
    assert moe_extra_kernels(qwen2_moe, mxfp4_experts=False) == 5 + 4 + 2
