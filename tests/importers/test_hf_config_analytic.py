"""hf:CONFIG.json and .safetensors + config.json of decoder families through the analytic graph: MACs and
activations (not parameters only), generation, and one clear line for families not modelled."""

import json
from pathlib import Path

import pytest

from advisor.cli import main
from advisor.core.analytic import estimate
from advisor.core.workload import Workload
from advisor.importers import spec_graph
from advisor.importers.spec_graph import load_graph
from tests.importers.model_files import safetensors_bytes

MISTRAL = {
    "model_type": "mistral",
    "hidden_size": 64,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "intermediate_size": 96,
    "vocab_size": 128,
    "sliding_window": 16,
}
# embed 128x64, per layer q 64x64, k and v 32x64, o 64x64, gate/up/down 3 x 96x64, 2 norms x 64; norm; lm_head
PARAMS = 128 * 64 + 2 * (64 * 64 + 2 * 32 * 64 + 64 * 64 + 3 * 96 * 64 + 2 * 64) + 64 + 128 * 64


def test_safetensors_with_a_mistral_config_has_macs(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(json.dumps(MISTRAL))
    path = tmp_path / "model.safetensors"
    path.write_bytes(safetensors_bytes({"model.embed_tokens.weight": ("BF16", [128, 64])}))
    graph = load_graph(str(path), 10)
    assert graph.param_count == PARAMS == 78_144
    e = estimate(graph, Workload("infer", 2, "bf16"))
    # per token: every weight but the embedding table multiplies once, plus attention over 10 keys
    assert e.forward_macs >= 2 * 10 * (PARAMS - 128 * 64)
    assert e.memory.at_peak.activations > 0


def test_hf_config_generates_without_torch(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "config.json"
    config.write_text(json.dumps(MISTRAL))
    assert (
        main(
            [
                "estimate",
                f"hf:{config}",
                "--method",
                "analytic",
                "--mode",
                "generate",
                "--batch",
                "3",
                "--prompt-len",
                "20",
                "--new-tokens",
                "12",
                "--precision",
                "bf16",
                "--json",
            ]
        )
        == 0
    )
    data = json.loads(capsys.readouterr().out)
    assert data["params"] == PARAMS and data["method"] == "analytic"
    # 2 layers x 2 (K, V) x 2 KV heads x 16 head dim x 2 bytes, 32 tokens capped at the 16-token window
    assert data["memory"]["kv_cache_bytes"] == 3 * 16 * 2 * 2 * 2 * 16 * 2


@pytest.mark.parametrize("model_type", ["mamba", "jamba"])
def test_state_space_models_are_traced_and_cannot_generate(
    tmp_path: Path, model_type: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The decoder description has no state-space layers: the analytic method traces the transformers module
    instead, and generation (which needs a per-layer KV cache) is one line, said before any tracing (which
    took 5 s for these two layers)."""
    config = tmp_path / "config.json"
    config.write_text(
        json.dumps(
            {
                "model_type": model_type,
                "hidden_size": 64,
                "num_hidden_layers": 2,
                "vocab_size": 1000,
                "intermediate_size": 128,
                "num_attention_heads": 4,
                "num_key_value_heads": 2,
                "num_experts": 2,
            }
        )
    )
    assert main(["estimate", f"hf:{config}", "--method", "analytic", "--seq-len", "16", "--batch", "2", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["method"] == "analytic"
    monkeypatch.setattr(spec_graph, "_import_torch", lambda *_args: pytest.fail("traced for a refusal"))
    assert main(["estimate", f"hf:{config}", "--mode", "generate", "--prompt-len", "16"]) == 2
    err = capsys.readouterr().err.strip()
    assert "not a decoder language model the analytic path describes" in err and "\n" not in err


def test_bad_field_names_the_file_and_field(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "config.json"
    config.write_text(json.dumps({**MISTRAL, "num_key_value_heads": 3}))
    assert main(["estimate", f"hf:{config}", "--method", "analytic"]) == 2
    err = capsys.readouterr().err
    assert str(config) in err and "num_key_value_heads 3" in err


@pytest.mark.parametrize(
    "options",
    [
        ["--mode", "generate"],
        ["--finetune", "qlora", "--seq-len", "8"],
        ["--mode", "infer", "--weights", "int4", "--seq-len", "8"],
    ],
)
def test_auto_method_takes_llm_workloads_to_the_decoder_model(
    tmp_path: Path, options: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "config.json"
    config.write_text(json.dumps(MISTRAL))
    assert main(["estimate", f"hf:{config}", "--batch", "2", *options, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["method"] == "analytic" and data["params"] >= PARAMS
