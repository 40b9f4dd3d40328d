"""vLLM 0.17-0.19's CUDA graphs and non-torch memory per card (core/llm/vllm_graphs.py), with the arithmetic."""

from __future__ import annotations

from advisor.core.llm.vllm_graphs import (
    GRAPH_BYTES_PER_LAYER_GRAPH,
    NON_TORCH_ONE_CARD_BYTES,
    NON_TORCH_STAGE_BYTES,
    NON_TORCH_TENSOR_PARALLEL_BYTES,
    capture_sizes,
    vllm_engine_shape,
)
from advisor.core.zoo.llm import preset_decoder


def test_capture_sizes_are_vllms_default_list() -> None:
    # 1, 2, 4; 8 to 248 by 8 (31 sizes); 256 to 512 by 16 (17 sizes)
    assert capture_sizes(512) == 3 + 31 + 17 == 51
    assert capture_sizes(256) == 3 + 31 + 1 == 35  # the log's "FULL=35 (largest=256)" at 256 sequences
    assert capture_sizes(4) == 3


def test_llama_8b_graphs_on_one_card_and_split() -> None:
    spec = preset_decoder("llama-3.1-8b")  # 32 layers, hidden 4,096, MLP 14,336, 32 heads of 128
    shape = vllm_engine_shape(spec, 2, 1024, enforce_eager=False)
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
    eager = vllm_engine_shape(spec, 2, 256, enforce_eager=True)
    assert eager.graph_bytes() == 0 and eager.held_bytes() == NON_TORCH_ONE_CARD_BYTES  # libraries stay
    # fp32 cannot run FlashAttention (no accumulators); the pool's tensors are 4 bytes an element
    fp32 = vllm_engine_shape(spec, 4, 256, enforce_eager=False)
    assert fp32.accumulator_bytes == 0 and fp32.split_activation_bytes == 512 * 3 * 14336 * 4
    assert fp32.graphs == 51 + 35  # 256 sequences: full decode graphs up to 256
    mla = vllm_engine_shape(preset_decoder("deepseek-v2-lite"), 2, 256, enforce_eager=False)
    assert mla.accumulator_bytes == 0  # FlashMLA's own buffers are not modelled
