"""Quantized weight bytes from the formats' block layouts, and KV-cache bytes (GQA, sliding windows, MLA,
quantized caches)."""

import pytest

from advisor.core import zoo
from advisor.core.analytic import estimate
from advisor.core.errors import SpecError
from advisor.core.llm.kv_cache import kv_bytes_per_layer_token, kv_cache_bytes
from advisor.core.llm.quant import gguf_bytes, matrix_bytes, weight_bytes
from advisor.core.workload import Workload
from advisor.core.zoo.llm import preset_decoder

GIB = 2**30
N = 4096 * 4096


def test_transformers_formats_per_matrix() -> None:
    # GPTQ/AWQ int4, group 128: N/2 bytes + per group an fp16 scale and a 4-bit zero (2.5 bytes)
    assert matrix_bytes("int4", 4096, 4096) == N / 2 + 4096 * 32 * 2.5  # 4.15625 bits per weight
    # bnb nf4, double quantization: N/2 + one byte per 64 weights + an fp32 per 256 blocks + the 1 KiB code
    assert matrix_bytes("nf4", 4096, 4096) == N / 2 + N / 64 + 4 * N / 64 / 256 + 1024
    # LLM.int8 and fp8: one byte per weight + an fp32 scale per output row
    assert matrix_bytes("int8", 4096, 4096) == N + 4 * 4096
    # MXFP4: 4-bit E2M1 values + one E8M0 byte per 32 along the row: 4.25 bits per weight
    assert matrix_bytes("mxfp4", 4096, 4096) == N / 2 + 4096 * 4096 / 32 == N * 4.25 / 8


def test_gguf_block_layouts() -> None:
    assert gguf_bytes("q8_0", 1, 4096) == 4096 / 32 * 34  # 8.5 bits per weight
    assert gguf_bytes("q4_k", 1, 4096) == 4096 / 256 * 144  # 4.5
    assert gguf_bytes("q5_k", 1, 4096) == 4096 / 256 * 176  # 5.5
    assert gguf_bytes("q6_k", 1, 4096) == 4096 / 256 * 210  # 6.5625
    # Qwen2.5-0.5B rows of 896 (3.5 x 256) cannot hold K-quant super-blocks: llama.cpp falls back to Q5_0
    assert gguf_bytes("q4_k", 1, 896) == 896 / 32 * 22


@pytest.mark.parametrize(
    "name, fmt, published_gb, source",
    [
        ("llama-3.1-8b", "bf16", 16.06, "8,030,261,248 params x 2 bytes; HF safetensors 16.1 GB"),
        ("llama-3.1-8b", "q4_k_m", 4.92, "bartowski/Meta-Llama-3.1-8B-Instruct-GGUF Q4_K_M 4.92 GB"),
        ("llama-3.1-8b", "q5_k_m", 5.73, "bartowski/Meta-Llama-3.1-8B-Instruct-GGUF Q5_K_M 5.73 GB"),
        ("llama-3.1-8b", "q8_0", 8.54, "bartowski/Meta-Llama-3.1-8B-Instruct-GGUF Q8_0 8.54 GB"),
        ("llama-3.1-70b", "q4_k_m", 42.52, "bartowski/Meta-Llama-3.1-70B-Instruct-GGUF Q4_K_M 42.52 GB"),
        ("qwen2.5-7b", "q4_k_m", 4.7, "ollama qwen2.5:7b q4_K_M 4.7 GB"),
        # MXFP4 experts, the rest bf16: huggingface.co/openai/gpt-oss-20b/tree/refs%2Fpr%2F52 shards 4.79 + 4.8 +
        # 4.17 GB; gpt-oss-120b (huggingface.co/the-qa-company/gpt-oss-120b, the safetensors alone) 65.3 GB
        ("gpt-oss-20b", "mxfp4", 13.76, "openai/gpt-oss-20b model-0000[0-2]-of-00002.safetensors"),
        ("gpt-oss-120b", "mxfp4", 65.3, "openai/gpt-oss-120b 14 safetensors shards"),
    ],
)
def test_weight_bytes_against_published_files(name: str, fmt: str, published_gb: float, source: str) -> None:
    # a GGUF file adds its metadata and tokenizer (a few MB) to the tensors
    assert weight_bytes(preset_decoder(name), fmt) / 1e9 == pytest.approx(published_gb, rel=0.01), source


def test_llama3_8b_kv_cache_at_8k_tokens_is_one_gib() -> None:
    spec = preset_decoder("llama-3.1-8b")
    assert kv_cache_bytes(spec, "bf16", 8192, 1) == 32 * 2 * 8 * 128 * 8192 * 2 == GIB
    assert kv_cache_bytes(spec, "fp8", 8192, 4) == 4 * GIB // 2  # one byte per element, 4 sequences
    # int8: per token and head an fp16 scale and zero for K and for V: 2 x 8 x (128 + 4) bytes per layer
    assert kv_bytes_per_layer_token(spec, "int8") == 2 * 8 * (128 + 4)


def test_sliding_window_layers_hold_their_window() -> None:
    mistral, gemma = preset_decoder("mistral-7b"), preset_decoder("gemma-2-9b")
    # Mistral 7B v0.1: window 4096 on all 32 layers: 16k tokens cost what 4096 do
    assert kv_cache_bytes(mistral, "bf16", 16384, 1) == 32 * 2 * 8 * 128 * 4096 * 2
    # Gemma 2 9B: 21 of its 42 layers slide over 4096 tokens; 8 KV heads x 256 head dim
    per_layer_token = 2 * 8 * 256 * 2
    assert kv_cache_bytes(gemma, "bf16", 8192, 1) == per_layer_token * (21 * 8192 + 21 * 4096)


def test_mla_caches_the_latent_and_the_rope_key() -> None:
    lite = preset_decoder("deepseek-v2-lite")
    assert kv_bytes_per_layer_token(lite, "bf16") == (512 + 64) * 2  # kv_lora_rank + qk_rope_head_dim
    assert kv_cache_bytes(lite, "bf16", 1000, 2) == 2 * 1000 * 27 * (512 + 64) * 2


def test_mxfp4_quantizes_the_experts_alone() -> None:
    """gpt-oss-20b: 24 layers x 32 experts x 3 matrices of 2,880 x 2,880 (gate, up, down) = 19,110,297,600
    weights in MXFP4 (x 4.25 / 8 B = 10,152,345,600 B); attention, router, embedding, LM head, norms, sinks
    and the experts' biases stay bf16 (the checkpoint's modules_to_not_convert)."""
    spec = preset_decoder("gpt-oss-20b")
    experts = 24 * 32 * 3 * 2880 * 2880
    rest = 20_914_757_184 - experts  # published total less the experts: 1,804,459,584 bf16 parameters
    assert weight_bytes(spec, "mxfp4") == experts * 17 // 32 + 2 * rest == 13_761_264_768
    with pytest.raises(SpecError, match=r"mxfp4 stores a mixture-of-experts model.s experts.*llama-3\.1-8b has no"):
        estimate(zoo.build("llama-3.1-8b", 8), Workload("generate", 1, "bf16", weights="mxfp4"))


@pytest.mark.parametrize(
    "name, fmt",
    [("mixtral-8x7b", "int4"), ("llama-3.1-8b", "nf4"), ("gpt-oss-20b", "fp8"), ("gpt-oss-20b", "mxfp4")],
)
def test_inference_graph_stores_the_same_bytes(name: str, fmt: str) -> None:
    """One answer: the graph replay (--mode infer) and the decoder's tensor list (--mode generate) agree on
    the weights, up to the allocator's 512-byte rounding of each tensor."""
    workload = Workload("infer", 1, "bf16", weights=fmt)  # type: ignore[arg-type]
    replayed = estimate(zoo.build(name, 8), workload).memory.at_peak.weights
    assert replayed == pytest.approx(weight_bytes(preset_decoder(name), fmt), rel=1e-5)
