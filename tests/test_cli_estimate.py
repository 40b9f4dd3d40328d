"""`advisor estimate`: the DESIGN.md contract, one-line errors with exit code 2, golden tables."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from advisor.cli import main

GOLDEN = Path(__file__).parent / "core" / "golden"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "advisor", *args], capture_output=True, text=True)


def test_json_has_the_stable_keys(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["estimate", "zoo:seed:mlp", "--batch", "256", "--optimizer", "adam", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data) >= {"model", "config", "compute", "memory", "layers", "method", "assumptions"}
    assert data["method"] == "analytic"
    assert data["config"] == {
        "mode": "train",
        "batch": 256,
        "precision": "fp32",
        "optimizer": "adam",
        "checkpointing": False,
        "prompt_len": None,
        "new_tokens": None,
        "weights": "fp32",
        "kv_cache": None,
        "finetune": "full",
        "lora_rank": None,
        "lora_targets": [],
    }
    assert data["generation"] is None and data["memory"]["kv_cache_bytes"] == 0
    assert data["compute"]["macs_forward"] == 256 * 20029440  # 784*4096 + 4096*4096 + 4096*10 per sample
    assert data["compute"]["flops_forward"] >= 2 * data["compute"]["macs_forward"]
    memory = data["memory"]
    for key in (
        "weights",
        "gradients",
        "optimizer_state",
        "activations",
        "temporaries",
        "inputs",
        "peak_bytes",
        "reserved_bytes",
        "required_bytes",
        "device_total_bytes",
    ):
        assert isinstance(memory[key], int), key
    parts = sum(memory[k] for k in ("weights", "gradients", "optimizer_state", "activations", "temporaries", "inputs"))
    assert parts == memory["peak_bytes"]
    assert memory["peak_bytes"] <= memory["reserved_bytes"] < memory["device_total_bytes"]


@pytest.mark.parametrize(
    "args, message",
    [
        (["estimate", "zoo:resnet9000"], "unknown zoo model 'resnet9000'"),
        (["estimate", "zoo:seed:cnn", "--batch", "-4"], "argument --batch: must be from 1 to 16,777,216, got -4"),
        (["estimate", "zoo:seed:cnn", "--batch", "many"], "argument --batch: expected a whole number"),
        (["estimate", "zoo:seed:cnn", "--precision", "fp8"], "argument --precision: invalid choice"),
        (["estimate", "zoo:seed:cnn", "--seq-len", "128"], "--seq-len: seed:cnn is not a sequence model"),
        (["estimate", "zoo:seed:cnn", "--frobnicate"], "unrecognized arguments: --frobnicate"),
        (["estimate", "mystery"], "mystery: not a model spec"),
    ],
)
def test_bad_input_gives_one_line_and_exit_code_2(args: list[str], message: str) -> None:
    result = run(*args)
    assert result.returncode == 2
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.stderr


def test_list_names_the_zoo() -> None:
    result = run("estimate", "--list")
    assert result.returncode == 0
    assert "zoo:seed:cnn" in result.stdout.split()


@pytest.mark.parametrize(
    "name, args",
    [
        ("seed_cnn_train_b32_sgd", ["zoo:seed:cnn", "--batch", "32", "--optimizer", "sgd"]),
        ("seed_mlp_infer_b256", ["zoo:seed:mlp", "--batch", "256", "--mode", "infer"]),
        ("resnet18_train_b64_sgd", ["zoo:resnet18", "--batch", "64", "--optimizer", "sgd"]),
        (
            "bert_base_s128_amp_b32_adamw",
            ["zoo:bert-base", "--seq-len", "128", "--batch", "32", "--precision", "amp_bf16", "--optimizer", "adamw"],
        ),
    ],
)
def test_golden_tables(
    name: str, args: list[str], capsys: pytest.CaptureFixture[str], request: pytest.FixtureRequest
) -> None:
    assert main(["estimate", *args]) == 0
    golden, out = GOLDEN / f"{name}.txt", capsys.readouterr().out
    if request.config.getoption("--update-golden"):  # review the rewritten tables with git diff
        golden.write_text(out)
    assert out == golden.read_text()


def test_list_searches_the_library() -> None:
    result = run("estimate", "--list", "qwen3 moe")
    assert result.returncode == 0
    lines = result.stdout.splitlines()
    assert [line.split()[0] for line in lines] == [
        "zoo:qwen3-235b-a22b-2507",
        "zoo:qwen3-30b-a3b",
        "zoo:qwen3-coder-480b-a35b",
    ]
    assert lines[1].split()[1:] == ["Qwen3", "MoE", "30.5B", "Qwen/Qwen3-30B-A3B-Base"]
    missing = run("estimate", "--list", "no-such-model")
    assert missing.returncode == 2
    assert missing.stderr.strip().splitlines() == [
        "advisor estimate: error: --list: no zoo model matches 'no-such-model'"
    ]


def test_a_peak_without_a_layer_names_only_its_phase() -> None:
    """llama.cpp allocates its context before any layer runs: the line read "(context created, )"."""
    from advisor.core.formatting import render_text
    from advisor.core.workload import Runtime, Workload
    from advisor.importers.spec_estimate import estimate_spec

    result = estimate_spec("zoo:llama-3.2-1b", Workload("generate", 1, runtime=Runtime.LLAMA_CPP))
    assert result.memory.peak_layer == ""  # the premise: no layer at this peak
    line = next(line for line in render_text(result).splitlines() if line.startswith("Memory at the peak"))
    assert line == f"Memory at the peak ({result.memory.peak_phase}):"


def test_help_lists_the_spec_forms_and_says_a_python_file_runs(capsys: pytest.CaptureFixture[str]) -> None:
    # the help sent users to DESIGN.md, which an installed package does not have
    with pytest.raises(SystemExit):
        main(["estimate", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "DESIGN.md" not in text and "hf:ORG/NAME" in text and ".gguf" in text and "Python code and runs" in text


def test_adapter_dtype_sets_what_the_lora_adapters_and_their_adam_state_take(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """PEFT upcasts adapters on a bf16 base to fp32 (the default); torchtune and FSDP's mixed precision keep
    the base's bf16 (--adapter-dtype base). SmolLM2-135M: 30 layers x 7 projections of rank 16."""
    answers = {}
    for dtype in ("fp32", "base"):
        args = ["zoo:smollm2-135m", "--seq-len", "128", "--batch", "2", "--precision", "bf16", "--finetune", "lora"]
        assert main(["estimate", *args, "--adapter-dtype", dtype, "--json"]) == 0
        answers[dtype] = json.loads(capsys.readouterr().out)
    fp32, base = (answers[d]["memory"]["optimizer_state"] for d in ("fp32", "base"))
    # Adam's two states per adapter weight: 4 B each in fp32, 2 B each in bf16
    assert fp32 == 2 * base
    assert any("kept in fp32" in line for line in answers["fp32"]["assumptions"])
    assert any("kept in bf16" in line for line in answers["base"]["assumptions"])
