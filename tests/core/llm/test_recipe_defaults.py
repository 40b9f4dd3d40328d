"""Issue 25 item 2: where the user gives no --precision or --checkpointing, generation computes in half
precision (unless its weights are fp32) and QLoRA checkpoints, as the common recipes do; the assumptions say so."""

import json

import pytest

from advisor.cli import main
from advisor.core.workload import recipe_defaults


def run_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, object]:
    assert main(["estimate", *args, "--json"]) == 0
    data: dict[str, object] = json.loads(capsys.readouterr().out)
    return data


def test_quantized_generation_computes_in_bf16(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(
        capsys,
        "zoo:llama-3.1-8b",
        "--mode",
        "generate",
        "--weights",
        "q4_k_m",
        "--batch",
        "8",
        "--prompt-len",
        "2048",
        "--new-tokens",
        "512",
    )
    config, memory = data["config"], data["memory"]
    assert isinstance(config, dict) and isinstance(memory, dict)
    # llama.cpp (the runtime of GGUF weights) caches f16: n_ctx 8 x 2,560 tokens x 32 layers x 2 (K, V) x 8
    # heads x 128 x 2 B = 2.5 GiB, not the 5 GiB of an fp32 cache
    assert config["precision"] == "bf16" and config["kv_cache"] == "fp16"
    assert memory["kv_cache_bytes"] == 8 * 2560 * 32 * 2 * 8 * 128 * 2
    assert any("bf16 by default" in note for note in data["assumptions"])  # type: ignore[attr-defined]


def test_explicit_precision_wins(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, "zoo:qwen2.5-0.5b", "--mode", "generate", "--weights", "q8_0", "--precision", "fp32")
    assert data["config"]["precision"] == "fp32"  # type: ignore[index]
    assert not any("by default" in note for note in data["assumptions"])  # type: ignore[attr-defined]


def test_qlora_checkpoints_unless_told_not_to(capsys: pytest.CaptureFixture[str]) -> None:
    on = run_json(
        capsys, "zoo:qwen2.5-0.5b", "--finetune", "qlora", "--precision", "amp_bf16", "--batch", "1", "--seq-len", "512"
    )
    off = run_json(
        capsys,
        "zoo:qwen2.5-0.5b",
        "--finetune",
        "qlora",
        "--precision",
        "amp_bf16",
        "--batch",
        "1",
        "--seq-len",
        "512",
        "--no-checkpointing",
    )
    assert on["config"]["checkpointing"] is True and off["config"]["checkpointing"] is False  # type: ignore[index]
    assert any("prepare_model_for_kbit_training" in n for n in on["assumptions"])  # type: ignore[attr-defined]
    assert on["memory"]["activations"] < off["memory"]["activations"]  # type: ignore[index]

    def block_kept(data: dict[str, object]) -> dict[str, int]:
        return {r["name"]: r["kept_bytes"] for r in data["layers"] if r["name"].startswith("layers.0.")}  # type: ignore[attr-defined, index]

    # checkpointed, a block keeps only its output for the next block's recompute: the fp32 residual stream
    # that prepare_model_for_kbit_training's fp32 embeddings make, 512 tokens x 896 x 4 B = 1,835,008 B
    kept = block_kept(on)
    assert kept.pop("layers.0.add_mlp") == 512 * 896 * 4 and not any(kept.values())
    # without it every adapted layer keeps, among others, the bf16 copy of its input that lora_A saves under
    # autocast: 512 x 896 x 2 B = 917,504 B for q_proj
    assert block_kept(off)["layers.0.self_attn.q_proj"] > 512 * 896 * 2


def test_recipe_defaults_leave_other_workloads_alone() -> None:
    assert recipe_defaults("train", None, "full", None, None) == ("fp32", False, ())
    # every generation recipe loads 16-bit weights (torch_dtype, vLLM's dtype auto); fp32 weights keep fp32
    assert recipe_defaults("generate", None, "full", None, None) == ("bf16", False, ("precision",))
    assert recipe_defaults("generate", "fp32", "full", None, None) == ("fp32", False, ())
    assert recipe_defaults("generate", "nf4", "full", None, None) == ("bf16", False, ("precision",))
    assert recipe_defaults("train", None, "qlora", "bf16", None) == ("bf16", True, ("checkpointing",))


def test_plain_generation_computes_in_bf16_and_says_why(capsys: pytest.CaptureFixture[str]) -> None:
    """`estimate zoo:llama-3.2-1b --mode generate` used fp32: twice the weights nobody loads for generation.
    1,235,814,400 parameters x 2 B (bf16) = 2.30 GiB of weights, not 4.60 GiB."""
    data = run_json(capsys, "zoo:llama-3.2-1b", "--mode", "generate", "--batch", "1")
    assert data["config"]["precision"] == "bf16"  # type: ignore[index]
    assert data["memory"]["weights"] == 1_235_814_400 * 2  # type: ignore[index]
    assert any("generation loads 16-bit weights" in note for note in data["assumptions"])  # type: ignore[attr-defined]
