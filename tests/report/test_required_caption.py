"""The PDF's "Required memory" caption says how this workload's required bytes are sized: vLLM's share rule
for a vLLM engine (it described the caching allocator's replay under every estimate), the replay otherwise."""

from __future__ import annotations

from advisor.core.workload import Workload
from advisor.i18n import translator
from advisor.report.card_pages import _required_rule


def same(text: str) -> str:
    return text


def test_a_vllm_engine_is_sized_by_its_share() -> None:
    caption = _required_rule(Workload("generate", 8, "bf16", runtime="vllm", gpu_memory_utilization=0.8), same)
    assert caption.startswith("Required memory (vLLM)") and "share (0.80)" in caption
    assert "caching allocator" not in caption
    assert "（0.80）" in _required_rule(
        Workload("generate", 8, "bf16", runtime="vllm", gpu_memory_utilization=0.8), translator("zh_CN")
    )


def test_every_other_workload_is_sized_by_the_replay() -> None:
    for workload in (Workload(), Workload("generate", 1, "bf16"), Workload("generate", 1, runtime="llama.cpp")):
        assert "caching allocator, replayed under a limit" in _required_rule(workload, same), workload
