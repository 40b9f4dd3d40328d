"""--transformers-version 4.45: the attention of transformers up to 4.45 repeats grouped K/V heads before SDPA
(LlamaSdpaAttention.forward: key_states = repeat_kv(key_states, ...)), and SDPA keeps those copies."""

import pytest

from advisor.core import zoo
from advisor.core.analytic import estimate
from advisor.core.errors import SpecError
from advisor.core.workload import Workload
from advisor.importers.spec_estimate import choose_method


def _kept(release: str) -> dict[str, int]:
    w = Workload("train", 1, "bf16", "adamw", finetune="lora", lora_rank=16, adapter_dtype="base",
                 transformers_version=release, drops_logits=True)  # type: ignore[arg-type]  # fmt: skip
    rows = estimate(zoo.build("llama-3.1-8b", 1024), w).layers
    return {r.name.removeprefix("layers.0.self_attn."): r.kept_bytes for r in rows if r.name.startswith("layers.0.")}


def test_transformers_4_45_sdpa_keeps_the_repeated_keys_and_values() -> None:
    new, old = _kept("5"), _kept("4.45")
    # Llama 3.1 8B, 1,024 tokens: 32 heads and 8 KV heads of 128. transformers 5 hands SDPA the grouped k and v
    # (enable_gqa): it keeps its token-major output 1024 x 4096 x 2 B and the fp32 log-sum-exp 32 x 1024 x 4 B;
    # the rotary k (1024 x 1024 x 2 B) and v_proj's v (the same, + LoRA A's 1024 x 16 x 2 B) are kept too
    assert new["sdpa"] == 1024 * 4096 * 2 + 32 * 1024 * 4 == 8_519_680
    assert (new["rotary_k"], new["v_proj"]) == (1024 * 1024 * 2, 1024 * 1024 * 2 + 1024 * 16 * 2)
    # 4.45: SDPA keeps repeat_kv's copies, every head's keys and values (1024 x 32 x 128 x 2 x 2 B) instead
    assert old["sdpa"] == new["sdpa"] + 1024 * 32 * 128 * 2 * 2 == 25_296_896
    assert (old["rotary_k"], old["v_proj"]) == (0, 1024 * 16 * 2)


def test_the_simulation_runs_only_the_installed_transformers() -> None:
    w = Workload("train", 1, "bf16", "adamw", transformers_version="4.45")  # type: ignore[arg-type]
    assert choose_method("hf:config.json", "auto", w) == "analytic"
    with pytest.raises(SpecError, match=r"transformers-version 4\.45"):
        choose_method("hf:config.json", "simulated", w)
