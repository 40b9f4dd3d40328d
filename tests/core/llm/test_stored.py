"""config.json quantization_config -> the --weights format a checkpoint is stored in (transformers'
quantizers: GPTQ, AWQ, bitsandbytes, FP8, compressed-tensors, MXFP4), and the exact bytes a checkpoint's own
tensor table gives replacing the format's estimate."""

from __future__ import annotations

from dataclasses import replace

import pytest

from advisor.core.llm.quant import active_weight_bytes, exact_scale, weight_bytes
from advisor.core.llm.stored import StoredWeights, quantization_format
from advisor.core.zoo.llm import preset_decoder


@pytest.mark.parametrize(
    ("qc", "fmt", "words"),
    [
        ({"quant_method": "gptq", "bits": 4, "group_size": 128}, "int4", "GPTQ 4-bit, group size 128"),
        ({"quant_method": "gptq", "bits": 8, "group_size": 128}, "int8", "GPTQ 8-bit"),
        ({"quant_method": "awq", "bits": 4, "group_size": 128, "version": "gemm"}, "int4", "AWQ 4-bit"),
        ({"quant_method": "bitsandbytes", "load_in_4bit": True, "bnb_4bit_quant_type": "nf4"}, "nf4", "4-bit nf4"),
        ({"quant_method": "bitsandbytes", "load_in_8bit": True}, "int8", "LLM.int8"),
        ({"quant_method": "fp8", "weight_block_size": [128, 128]}, "fp8", "8-bit float"),
        ({"quant_method": "fbgemm_fp8"}, "fp8", "fbgemm_fp8"),
        ({"quant_method": "mxfp4"}, "mxfp4", "MXFP4"),
        (
            {
                "quant_method": "compressed-tensors",
                "config_groups": {"group_0": {"weights": {"num_bits": 8, "type": "float"}}},
            },
            "fp8",
            "8-bit float",
        ),
        (
            {
                "quant_method": "compressed-tensors",
                "config_groups": {"group_0": {"weights": {"num_bits": 4, "type": "int"}}},
            },
            "int4",
            "4-bit int",
        ),
    ],
)
def test_quantization_config_names_the_stored_format(qc: dict[str, object], fmt: str, words: str) -> None:
    found = quantization_format(qc)
    assert found is not None and found[0] == fmt and words in found[1]


@pytest.mark.parametrize(
    "qc", [None, "gptq", {"quant_method": "exl2"}, {"quant_method": "compressed-tensors", "config_groups": {}}]
)
def test_unknown_or_malformed_quantization_has_no_format(qc: object) -> None:
    assert quantization_format(qc) is None


def test_exact_bytes_replace_the_formats_estimate_only_in_that_format() -> None:
    spec = preset_decoder("llama-3.2-1b")
    estimated = weight_bytes(spec, "q4_k_m")
    exact = replace(spec, stored=StoredWeights("q4_k_m", "test", estimated + 1000, 12345))
    assert weight_bytes(exact, "q4_k_m") == estimated + 1000 and active_weight_bytes(exact, "q4_k_m") == 12345
    assert weight_bytes(exact, "bf16") == weight_bytes(spec, "bf16")  # another format: the estimate
    assert exact_scale(exact, "q4_k_m", estimated) == (estimated + 1000) / estimated
    assert exact_scale(exact, "bf16", estimated) == 1.0 and exact_scale(None, "q4_k_m", estimated) == 1.0
    assert exact == spec  # the checkpoint's storage is not part of the architecture's identity
