"""llama.cpp traps a user review found: -ngl 0 reported 0 B on the card (a CUDA build still reserves its
compute buffer there), and --kv-cache fp8/int8 were taken though llama.cpp has no fp8 cache and its q8_0 is
8.5 bits per value. Each test writes the arithmetic beside the bytes it expects."""

import pytest

from advisor.core import zoo
from advisor.core.analytic import estimate
from advisor.core.errors import SpecError
from advisor.core.llm.kv_cache import kv_bytes_per_layer_token
from advisor.core.llm.runtime import llama_cpp_memory
from advisor.core.workload import Runtime, Workload
from advisor.core.zoo.llm import preset_decoder

MIB = 2**20


def test_ngl_0_keeps_weights_and_cache_in_ram_but_reserves_the_cuda_compute_buffer() -> None:
    spec = preset_decoder("llama-3.1-8b")
    full = llama_cpp_memory(spec, "q4_k_m", 4096, None)
    zero = llama_cpp_memory(spec, "q4_k_m", 4096, 0)
    assert (zero.weights_bytes, zero.kv_cache_bytes) == (0, 0)
    # the scheduler runs the n_ubatch 512-row matmuls on CUDA0 (op offload, ggml-cuda min_batch_size 32), so its
    # compute buffer is reserved as at -ngl > 0 without the output layer: gate, up and their product of 512 x
    # 14336 f32 + one f32 hidden state of 512 x 4096 = 88,080,384 + 8,388,608 = 96,468,992 B (92 MiB)
    assert zero.workspace_bytes == 3 * 512 * 14336 * 4 + 512 * 4096 * 4 == 96_468_992
    # all the weights and the whole f16 cache (4096 x 32 layers x K,V x 8 heads x 128 x 2 B = 512 MiB) move to
    # system RAM; its CPU compute buffer grows from the inputs (f32 embeddings 512 x 4096 + KQ mask 512 x 4096:
    # 16 MiB) to the whole graph's stages (92 MiB)
    kv = 4096 * 32 * 2 * 8 * 128 * 2
    assert full.kv_cache_bytes == kv
    inputs = 512 * 4096 * 4 + 512 * 4096 * 4
    assert zero.host_bytes - full.host_bytes == full.weights_bytes + kv + zero.workspace_bytes - inputs
    # a decode step reads every weight but the token embedding (one row) in RAM, and the whole cache there
    assert zero.host_read_bytes == full.weights_bytes + kv


def test_ngl_0_estimate_says_nothing_of_the_model_is_on_the_card() -> None:
    w = Workload("generate", 1, "bf16", weights="q4_k_m", prompt_len=512, new_tokens=128, gpu_layers=0)
    e = estimate(zoo.build("llama-3.1-8b", 512), w)
    m = e.memory
    assert (m.at_peak.weights, m.at_peak.kv_cache) == (0, 0)
    assert m.required_bytes == m.at_peak.temporaries == 3 * 512 * 14336 * 4 + 512 * 4096 * 4  # 92 MiB, as above
    note = "-ngl 0: none of the model's weights and none of its KV cache are on the card"
    assert any(note in a for a in e.assumptions)
    # with layers on the GPU the note is not given
    e8 = estimate(zoo.build("llama-3.1-8b", 512), Workload("generate", 1, "bf16", weights="q4_k_m", gpu_layers=8))
    assert not any(a.startswith("-ngl 0") for a in e8.assumptions)


def test_llama_cpp_has_no_fp8_cache() -> None:
    with pytest.raises(SpecError, match=r"^kv_cache: llama\.cpp has no fp8 cache type"):
        Workload("generate", 1, "bf16", weights="q4_k_m", kv_cache="fp8")  # GGUF weights: llama.cpp by default
    with pytest.raises(SpecError, match=r"kv_cache: llama\.cpp has no fp8"):
        Workload("generate", 1, "bf16", kv_cache="fp8", runtime=Runtime.LLAMA_CPP)
    # the runtimes that have one keep it
    assert Workload("generate", 1, "bf16", kv_cache="fp8", runtime=Runtime.VLLM).kv_cache_dtype == "fp8"


def test_llama_cpp_int8_cache_is_q8_0() -> None:
    spec = preset_decoder("llama-3.1-8b")
    w = Workload("generate", 1, "bf16", weights="q4_k_m", kv_cache="int8")
    assert w.kv_cache_dtype == "q8_0"
    # ggml-common.h block_q8_0: 32 int8 + one fp16 scale = 34 B per 32 values; per token and layer the K row and
    # the V row of 8 heads x 128 = 1024 values: 2 x 1024 / 32 x 34 = 2176 B (8.5 bits per value)
    assert kv_bytes_per_layer_token(spec, "q8_0") == 2 * 1024 // 32 * 34 == 2176
    # transformers' int8 (LMDeploy): 1 B per value + a 4 B scale and zero point per head: 2 x 8 x (128 + 4) = 2112
    assert kv_bytes_per_layer_token(spec, "int8") == 2112
    m = llama_cpp_memory(spec, "q4_k_m", 4096, None, w.kv_cache_dtype)
    assert m.kv_cache_bytes == 4096 * 32 * 2176 == 272 * MIB  # n_ctx 4096 x 32 layers: 272 MiB (f16: 512)
    e = estimate(zoo.build("llama-3.1-8b", 512), w)
    assert e.memory.at_peak.kv_cache == 768 * 32 * 2176  # n_ctx 640 padded to 768: 51 MiB
    assert e.generation is not None and e.generation.kv_bytes_per_token == 32 * 2176  # 68 KiB, what decode reads
    assert any("q8_0 (34 bytes per 32 values) KV cache" in a for a in e.assumptions)
