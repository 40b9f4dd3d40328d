"""hf:ORG/NAME through the real huggingface_hub client, against a Hub-like server on 127.0.0.1
(tests/hub_server.py): config.json, safetensors headers by byte range, the stored format of a quantized
checkpoint, the client's cache, and one line for each way the Hub refuses."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from advisor.core.errors import SpecError
from advisor.core.workload import Workload
from advisor.importers.hf_hub import fetch, is_hub_spec
from advisor.importers.spec_estimate import estimate_spec
from advisor.importers.spec_graph import load_graph
from tests.hub_server import PARAMS, H, HubServer, hub_env

pytest.importorskip("huggingface_hub")


@pytest.fixture()
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[HubServer]:
    yield from hub_env(tmp_path, monkeypatch)


def test_hub_ids_and_local_configs_are_told_apart(tmp_path: Path) -> None:
    local = tmp_path / "org"
    local.mkdir()
    (local / "model").write_text("{}")
    assert is_hub_spec("hf:Qwen/Qwen3-8B") and is_hub_spec("hf:Qwen/Qwen3-8B@main")
    assert not is_hub_spec("hf:some/dir/config.json")  # ends with .json: a local config
    assert not is_hub_spec(f"hf:{local / 'model'}")  # exists on disk


def test_single_file_checkpoint_gives_the_exact_parameter_count(hub: HubServer) -> None:
    ckpt = fetch("hf:acme/tiny-llama")
    assert ckpt.tensors is not None and sum(t.numel for t in ckpt.tensors) == PARAMS  # 106_816
    graph = load_graph("hf:acme/tiny-llama")
    assert graph.param_count == PARAMS and graph.decoder is not None
    # the weights were never downloaded: every request for a safetensors file asked for a byte range
    weights = [r for r in hub.requests if r[1].endswith(".safetensors") and r[0] == "GET"]
    assert weights and all(r[2] is not None and r[2].startswith("bytes=") for r in weights)


def test_sharded_checkpoint_reads_every_shard_header(hub: HubServer) -> None:
    est = estimate_spec("hf:acme/tiny-sharded", Workload(mode="generate", batch=1, precision="bf16"))
    assert est.param_count == PARAMS
    note = next(a for a in est.assumptions if "safetensors file(s)" in a)
    assert f"{PARAMS:,} parameters in 2 safetensors file(s), {2 * PARAMS:,} bytes" in note  # BF16: 2 bytes each


def test_gptq_checkpoint_is_estimated_as_stored(hub: HubServer) -> None:
    ckpt = fetch("hf:acme/tiny-gptq")
    assert ckpt.tensors is not None
    stored = sum(t.nbytes for t in ckpt.tensors) - H * 2 * H * 2  # without the MTP layer's 64x128 BF16 eh_proj
    # per 64x64 matrix: qweight 8x64x4 + qzeros 2x8x4 + scales 2x64x2 + g_idx 64x4 = 2048 + 64 + 256 + 256
    assert sum(t.nbytes for t in ckpt.tensors if ".q_proj." in t.name and "layers.0." in t.name) == 2624
    est = estimate_spec("hf:acme/tiny-gptq", Workload(mode="generate", batch=1, precision="bf16"))
    assert est.workload.weights == "int4"
    assert est.generation is not None and est.generation.weight_bytes == stored
    assert est.memory.at_peak.weights == stored
    assert any("GPTQ 4-bit, group size 32" in a for a in est.assumptions)
    # an explicit --weights wins over the stored format
    bf16 = estimate_spec("hf:acme/tiny-gptq", Workload(mode="generate", batch=1, precision="bf16", weights="bf16"))
    assert bf16.generation is not None and bf16.generation.weight_bytes == 2 * PARAMS


def test_a_repo_without_safetensors_is_estimated_from_its_config(hub: HubServer) -> None:
    est = estimate_spec("hf:acme/bin-only", Workload(mode="generate", batch=1, precision="bf16"))
    assert est.param_count == PARAMS  # config.json alone describes the same layers
    assert any("no safetensors headers" in a for a in est.assumptions)
    assert not any(r[1].endswith(".bin") for r in hub.requests)  # the pickled weights are never fetched


def test_second_run_and_offline_use_the_cache(hub: HubServer, monkeypatch: pytest.MonkeyPatch) -> None:
    fetch("hf:acme/tiny-llama")
    first = len(hub.requests)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    ckpt = fetch("hf:acme/tiny-llama")
    assert len(hub.requests) == first  # offline: nothing asked of the server
    assert ckpt.tensors is not None and sum(t.numel for t in ckpt.tensors) == PARAMS


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ("hf:acme/gated", "gated repo: accept its license"),
        ("hf:acme/missing", "no such model on the Hub"),
        ("hf:acme/tiny-llama@v9", "no such revision"),
        ("hf:acme/no-config", "has no config.json"),
        ("hf:acme/busy", "rate-limited by the Hub (HTTP 429)"),  # on the safetensors header
        ("hf:acme/busier", "rate-limited by the Hub (HTTP 429)"),  # on config.json
    ],
)
def test_refusals_give_one_line(hub: HubServer, spec: str, words: str) -> None:
    with pytest.raises(SpecError) as caught:
        load_graph(spec)
    message = str(caught.value)
    assert message.startswith(spec) and words in message and "\n" not in message


def test_unreachable_hub_is_said_at_once_and_the_cache_still_answers(
    hub: HubServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    fetch("hf:acme/tiny-llama")
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{probe.getsockname()[1]}")
        ckpt = fetch("hf:acme/tiny-llama")  # cached: the config and the tensor table come from disk
        assert ckpt.tensors is not None and sum(t.numel for t in ckpt.tensors) == PARAMS
        started = time.perf_counter()
        with pytest.raises(SpecError, match=r"cannot reach the Hub and config\.json is not in the local cache"):
            fetch("hf:acme/tiny-sharded")
        assert time.perf_counter() - started < 5  # no five retries with backoff (24 s)


def test_offline_without_cache_says_what_to_do(hub: HubServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(SpecError, match="not in the local cache"):
        fetch("hf:acme/tiny-llama")


def test_cli_exit_code_2_and_token_is_sent(hub: HubServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_TOKEN", "hf_test_token")
    run = subprocess.run(
        [sys.executable, "-m", "advisor", "estimate", "hf:acme/gated", "--mode", "generate"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 2 and "gated repo" in run.stderr and "Traceback" not in run.stderr
    assert "Bearer hf_test_token" in hub.authorizations
