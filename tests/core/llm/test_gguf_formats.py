"""Every llama-quantize file type: block bytes from ggml-common.h and the per-tensor types llama-quant.cpp
picks, checked against published file sizes."""

import pytest

from advisor.core.llm.gguf import FILE_TYPES, GGUF_BLOCKS, gguf_bytes, gguf_type
from advisor.core.llm.quant import weight_bytes
from advisor.core.llm.tensors import tensor_groups
from advisor.core.workload import GGUF_WEIGHTS
from advisor.core.zoo.llm import preset_decoder


@pytest.mark.parametrize(
    "gtype, block_bytes, bits",
    [
        ("q4_0", 2 + 16, 4.5),
        ("q4_1", 2 + 2 + 16, 5.0),
        ("q5_0", 2 + 4 + 16, 5.5),
        ("q5_1", 2 + 2 + 4 + 16, 6.0),
        ("q8_0", 2 + 32, 8.5),
        ("iq4_nl", 2 + 16, 4.5),
        ("q2_k", 16 + 64 + 2 + 2, 2.625),
        ("q3_k", 32 + 64 + 12 + 2, 3.4375),
        ("q4_k", 2 + 2 + 12 + 128, 4.5),
        ("q5_k", 2 + 2 + 12 + 32 + 128, 5.5),
        ("q6_k", 128 + 64 + 16 + 2, 6.5625),
        ("iq1_s", 2 + 32 + 16, 1.5625),
        ("iq1_m", 32 + 16 + 8, 1.75),
        ("iq2_xxs", 2 + 64, 2.0625),
        ("iq2_xs", 2 + 64 + 8, 2.3125),
        ("iq2_s", 2 + 64 + 8 + 8, 2.5625),
        ("iq3_xxs", 2 + 96, 3.0625),
        ("iq3_s", 2 + 64 + 8 + 32 + 4, 3.4375),
        ("iq4_xs", 2 + 2 + 4 + 128, 4.25),
    ],
)
def test_block_layouts(gtype: str, block_bytes: int, bits: float) -> None:
    size, weights = GGUF_BLOCKS[gtype]
    assert size == block_bytes and 8 * size / weights == bits
    assert gguf_bytes(gtype, 1, 4096) == 4096 / weights * block_bytes


def test_rows_not_made_of_super_blocks_fall_back() -> None:
    # Qwen2.5-0.5B rows of 896 = 3.5 x 256: Q4_K -> Q5_0, Q6_K -> Q8_0, IQ4_XS -> IQ4_NL (32-weight blocks)
    assert gguf_bytes("q4_k", 1, 896) == 896 / 32 * 22
    assert gguf_bytes("q6_k", 1, 896) == 896 / 32 * 34
    assert gguf_bytes("iq4_xs", 1, 896) == 896 / 32 * 18


def test_the_quantizer_keeps_sensitive_tensors_wider() -> None:
    spec = preset_decoder("llama-3.1-8b")  # 32 layers, GQA 4
    groups = {(g.role, g.layer): g for g in tensor_groups(spec)}
    head, embed = groups[("lm_head", -1)], groups[("embed", -1)]
    assert gguf_type("q4_k_m", head, spec) == "q6_k" and gguf_type("q4_k_m", embed, spec) == "q4_k"
    assert gguf_type("iq2_xxs", head, spec) == "q5_k" and gguf_type("iq2_xxs", embed, spec) == "q2_k"
    assert gguf_type("q8_0", head, spec) == "q8_0"
    # Q4_K_M: attn_v and ffn_down in Q6_K on use_more_bits layers (0-3, 28-31, every third between)
    assert [gguf_type("q4_k_m", groups[("v_proj", i)], spec) for i in (0, 4, 6, 7, 31)] == [
        "q6_k",
        "q4_k",
        "q6_k",
        "q4_k",
        "q6_k",
    ]
    assert gguf_type("q3_k_m", groups[("o_proj", 5)], spec) == "q4_k"
    assert gguf_type("q2_k", groups[("v_proj", 5)], spec) == "q4_k"  # GQA >= 4
    assert gguf_type("iq3_xs", groups[("q_proj", 5)], spec) == "iq3_xxs"
    assert set(GGUF_WEIGHTS) == set(FILE_TYPES)


# bartowski's Llama-3.1-70B-architecture files (Llama-3.1-Nemotron-70B-Instruct GGUF, file table as
# reproduced at ozeki.chat/p_8590-understanding-ai-model-files.html, read 2026-12-01), in GB; a file adds
# its metadata and tokenizer (about 10 MB) to the tensors
PUBLISHED_70B = {
    "q8_0": 74.98,
    "q6_k": 57.89,
    "q5_k_m": 49.95,
    "q5_k_s": 48.66,
    "q4_k_m": 42.52,
    "q4_k_s": 40.35,
    "q4_0": 40.12,
    "iq4_xs": 37.90,
    "q3_k_l": 37.14,
    "q3_k_m": 34.27,
    "iq3_m": 31.94,
    "q3_k_s": 30.91,
}


@pytest.mark.parametrize("fmt, published_gb", sorted(PUBLISHED_70B.items()))
def test_llama_70b_file_sizes(fmt: str, published_gb: float) -> None:
    assert weight_bytes(preset_decoder("llama-3.1-70b"), fmt) / 1e9 == pytest.approx(published_gb, rel=0.002)


def test_every_file_type_is_ordered_by_its_bits() -> None:
    spec = preset_decoder("llama-3.1-8b")
    sizes = {fmt: weight_bytes(spec, fmt) for fmt in FILE_TYPES}
    assert sizes["iq1_s"] < sizes["iq2_xxs"] < sizes["iq2_xs"] < sizes["iq2_s"] < sizes["iq2_m"] < sizes["iq3_xxs"]
    assert sizes["q2_k"] < sizes["q3_k_s"] < sizes["q3_k_m"] < sizes["q3_k_l"] < sizes["q4_k_m"] < sizes["q5_k_m"]
    assert sizes["iq4_xs"] < sizes["q4_k_s"] < sizes["q4_k_m"] < sizes["q6_k"] < sizes["q8_0"]
