"""`advisor estimate --mode generate`: the JSON contract (memory.kv_cache_bytes, the generation object) and the
KV-cache line of the text output."""

import json

import pytest

from advisor.cli import main


def test_generate_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["estimate", "zoo:llama-3.1-8b", "--mode", "generate", "--batch", "2", "--precision", "bf16",
                 "--prompt-len", "1000", "--new-tokens", "24", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    # 32 layers x 2 (K, V) x 8 KV heads x 128 head dim x 2 bytes = 131,072 bytes per token
    assert data["generation"]["kv_bytes_per_token"] == 32 * 2 * 8 * 128 * 2
    assert data["memory"]["kv_cache_bytes"] == 2 * 1024 * 131072  # 2 sequences x (1000 + 24) tokens
    assert data["memory"]["kv_cache"] == data["memory"]["kv_cache_bytes"]
    assert data["generation"]["weight_bytes"] == 8030261248 * 2  # bf16: 2 bytes per parameter
    assert data["generation"]["layers"] == 32 and data["generation"]["kv_heads"] == 8
    assert data["config"]["prompt_len"] == 1000 and data["config"]["kv_cache"] == "bf16"
    assert data["params"] == 8030261248


def test_generate_text_shows_the_kv_cache(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["estimate", "zoo:qwen2.5-0.5b", "--mode", "generate", "--batch", "1", "--precision", "bf16",
                 "--prompt-len", "100", "--new-tokens", "28", "--kv-cache", "fp8"]) == 0
    out = capsys.readouterr().out
    # 24 layers x 2 x 2 KV heads x 64 head dim x 1 byte (fp8) x 128 tokens = 786,432 bytes = 768 KiB
    assert "kv_cache" in out and "768.00 KiB" in out
    assert "prompt 100 + 28 new tokens, KV cache fp8" in out


def test_generate_needs_a_decoder(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["estimate", "zoo:resnet18", "--mode", "generate"]) == 2
    assert "mode generate: resnet18 is not a decoder language model" in capsys.readouterr().err
