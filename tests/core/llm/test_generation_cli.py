"""`advisor estimate --mode generate`: the JSON contract (memory.kv_cache_bytes, the generation object) and the
KV-cache line of the text output."""

import json

import pytest

from advisor.cli import main


def test_generate_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(
            [
                "estimate",
                "zoo:llama-3.1-8b",
                "--mode",
                "generate",
                "--batch",
                "2",
                "--precision",
                "bf16",
                "--prompt-len",
                "1000",
                "--new-tokens",
                "24",
                "--json",
            ]
        )
        == 0
    )
    data = json.loads(capsys.readouterr().out)
    # 32 layers x 2 (K, V) x 8 KV heads x 128 head dim x 2 bytes = 131,072 bytes per token
    assert data["generation"]["kv_bytes_per_token"] == 32 * 2 * 8 * 128 * 2
    # the prefill sets the peak, when transformers' cache holds the prompts only: 2 sequences x 1000 tokens
    assert data["memory"]["kv_cache_bytes"] == 2 * 1000 * 131072
    assert data["memory"]["kv_cache"] == data["memory"]["kv_cache_bytes"]
    assert data["generation"]["weight_bytes"] == 8030261248 * 2  # bf16: 2 bytes per parameter
    assert data["generation"]["layers"] == 32 and data["generation"]["kv_heads"] == 8
    assert data["config"]["prompt_len"] == 1000 and data["config"]["kv_cache"] == "bf16"
    assert data["params"] == 8030261248


def test_generate_text_shows_the_kv_cache(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(
            [
                "estimate",
                "zoo:qwen2.5-0.5b",
                "--mode",
                "generate",
                "--batch",
                "1",
                "--precision",
                "bf16",
                "--prompt-len",
                "100",
                "--new-tokens",
                "28",
                "--kv-cache",
                "fp8",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    # at the prefill's peak the cache holds the prompt: 24 layers x 2 x 2 KV heads x 64 head dim x 1 byte (fp8)
    # x 100 tokens = 614,400 bytes = 600 KiB
    assert "kv_cache" in out and "600.00 KiB" in out
    assert "prompt 100 + 28 new tokens, KV cache fp8" in out


def test_generate_needs_a_decoder(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["estimate", "zoo:resnet18", "--mode", "generate"]) == 2
    assert "mode generate: resnet18 is not a decoder language model" in capsys.readouterr().err


def test_lora_options_on_the_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(
            [
                "estimate",
                "zoo:llama-3.2-1b",
                "--finetune",
                "qlora",
                "--lora-rank",
                "8",
                "--lora-targets",
                "q_proj,v_proj",
                "--batch",
                "1",
                "--seq-len",
                "64",
                "--precision",
                "amp_bf16",
                "--json",
            ]
        )
        == 0
    )
    data = json.loads(capsys.readouterr().out)
    assert data["config"]["finetune"] == "qlora" and data["config"]["weights"] == "nf4"
    assert data["config"]["lora_targets"] == ["q_proj", "v_proj"] and data["config"]["lora_rank"] == 8
    # Llama 3.2 1B: 16 layers; q_proj 8 x (2048 + 2048), v_proj 8 x (2048 + 512); Adam keeps 2 fp32 states
    assert data["memory"]["optimizer_state"] == 2 * 4 * 16 * (8 * 4096 + 8 * 2560)
    assert any(note.startswith("QLORA: base weights frozen in nf4") for note in data["assumptions"])


def test_bad_lora_target_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["estimate", "zoo:llama-3.2-1b", "--finetune", "lora", "--lora-targets", "q_proj,qkv"])
    assert exit_info.value.code == 2
    assert "argument --lora-targets: unknown qkv" in capsys.readouterr().err


def test_learned_positions_limit_the_whole_generation(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["estimate", "zoo:gpt2", "--mode", "generate", "--prompt-len", "1000", "--new-tokens", "100"]) == 2
    assert "new_tokens: gpt2 has 1024 learned positions; prompt_len 1000 + new_tokens 100" in capsys.readouterr().err
