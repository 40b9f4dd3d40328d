"""The LLM fields of Workload: defaults, one-line validation naming the field, derived storage formats."""

import pytest

from advisor.core.errors import SpecError
from advisor.core.workload import Workload


def test_defaults_keep_the_old_positional_order() -> None:
    w = Workload("infer", 8, "bf16", "sgd", True)
    assert (w.prompt_len, w.new_tokens, w.weights, w.kv_cache, w.finetune, w.lora_rank, w.lora_targets) == (
        512,
        128,
        None,
        None,
        "full",
        16,
        (),
    )
    assert w.weight_format == "bf16" and w.kv_cache_dtype == "bf16" and w.adapters == ()


@pytest.mark.parametrize(
    "fields, message",
    [
        ({"mode": "chat"}, "mode: must be one of train, infer, generate"),
        ({"prompt_len": 0}, "prompt_len: must be at least 1"),
        ({"new_tokens": -1}, "new_tokens: must be at least 1"),
        ({"weights": "int3"}, "weights: must be one of"),
        ({"kv_cache": "fp4"}, "kv_cache: must be one of"),
        ({"finetune": "dora"}, "finetune: must be one of"),
        ({"lora_rank": 0}, "lora_rank: must be at least 1"),
        ({"finetune": "lora", "lora_targets": ("qkv",)}, "lora_targets: unknown qkv"),
        ({"finetune": "qlora", "weights": "int8"}, "weights: QLoRA keeps the frozen base in nf4"),
    ],
)
def test_bad_fields_name_themselves(fields: dict[str, object], message: str) -> None:
    with pytest.raises(SpecError, match=message):
        Workload(**fields)  # type: ignore[arg-type]


def test_derived_formats() -> None:
    assert Workload(finetune="qlora").weight_format == "nf4"  # QLoRA implies an nf4 base
    assert Workload(precision="fp32").kv_cache_dtype == "fp32"  # an fp32 model caches fp32
    assert Workload(precision="amp_fp16").kv_cache_dtype == "fp16"
    assert Workload(kv_cache="fp8").kv_cache_dtype == "fp8"
    assert Workload(finetune="lora").adapters == (
        "q_proj",
        "k_proj",
        "v_proj",
        "o_proj",
        "gate_proj",
        "up_proj",
        "down_proj",
    )
    assert Workload(finetune="lora", lora_targets=("q_proj", "v_proj")).adapters == ("q_proj", "v_proj")
    assert Workload("infer", finetune="lora").adapters == ()  # adapters exist only while training
