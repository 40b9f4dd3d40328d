"""A local stand-in for the Hugging Face Hub's file routes, for the real huggingface_hub client.

It answers what huggingface_hub 2.x asks (file_download.py get_hf_file_metadata, hf_api.py
parse_safetensors_file_metadata): HEAD and GET of /{org}/{name}/resolve/{revision}/{file}, with the
X-Repo-Commit and ETag headers the client stores the blob under, Range requests for safetensors headers,
and the X-Error-Code header its hf_raise_for_status reads (RepoNotFound, GatedRepo, RevisionNotFound,
EntryNotFound) plus HTTP 429. Every request is recorded so a test can see what the client fetched.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import struct
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

DTYPE_BYTES = {"F32": 4, "F16": 2, "BF16": 2, "I32": 4, "U8": 1}


def safetensors_bytes(tensors: dict[str, tuple[str, tuple[int, ...]]], data: bool = True) -> bytes:
    """A real safetensors file (README "Format"): 8-byte header length, the JSON header, zeroed data; without
    `data` only the header (a Repo serves the rest as `sizes` says, for checkpoints of real size)."""
    header: dict[str, Any] = {"__metadata__": {"format": "pt"}}
    offset = 0
    for name, (dtype, shape) in tensors.items():
        n = DTYPE_BYTES[dtype]
        for d in shape:
            n *= d
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [offset, offset + n]}
        offset += n
    raw = json.dumps(header).encode()
    raw += b" " * (-len(raw) % 8)
    return struct.pack("<Q", len(raw)) + raw + (bytes(offset) if data else b"")


@dataclass
class Repo:
    files: dict[str, bytes]
    commit: str = "0123456789abcdef0123456789abcdef01234567"
    gated: bool = False
    rate_limited: tuple[str, ...] = ()  # files answered with 429
    delay_s: float = 0.0  # each answer waits this long (an import the app can cancel)
    sizes: dict[str, int] = field(default_factory=dict)  # declared sizes of files served header-only


@dataclass
class HubServer:
    repos: dict[str, Repo] = field(default_factory=dict)
    requests: list[tuple[str, str, str | None]] = field(default_factory=list)  # (method, path, Range)
    authorizations: list[str | None] = field(default_factory=list)  # the Authorization header of each
    url: str = ""


def _handler(hub: HubServer) -> type[BaseHTTPRequestHandler]:
    route = re.compile(r"^/([^/]+/[^/]+)/resolve/([^/]+)/(.+)$")

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_HEAD(self) -> None:
            self._answer(body=False)

        def do_GET(self) -> None:
            self._answer(body=True)

        def _error(self, status: int, code: str | None, body: bool) -> None:
            self.send_response(status)
            if code:
                self.send_header("X-Error-Code", code)
                self.send_header("X-Error-Message", code)
            if status == 429:
                self.send_header("Retry-After", "0")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def _answer(self, body: bool) -> None:
            hub.requests.append((self.command, self.path, self.headers.get("Range")))
            hub.authorizations.append(self.headers.get("Authorization"))
            found = route.match(self.path.split("?")[0])
            repo = hub.repos.get(found.group(1)) if found else None
            if found is None or repo is None:
                return self._error(401, "RepoNotFound", body)  # the Hub says 401 for a repo it will not show
            revision, filename = found.group(2), found.group(3)
            time.sleep(repo.delay_s)
            if repo.gated:
                return self._error(403, "GatedRepo", body)
            if revision not in ("main", repo.commit):
                return self._error(404, "RevisionNotFound", body)
            if filename in repo.rate_limited:
                return self._error(429, None, body)
            if filename not in repo.files:
                return self._error(404, "EntryNotFound", body)
            self._send_file(repo, repo.files[filename], body, repo.sizes.get(filename))

        def _send_file(self, repo: Repo, data: bytes, body: bool, declared: int | None) -> None:
            wanted = self.headers.get("Range")
            status, part = 200, data
            if wanted and body:
                begin, _, end = wanted.removeprefix("bytes=").partition("-")
                part = data[int(begin) : int(end) + 1 if end else None]
                status = 206
            self.send_response(status)
            self.send_header("X-Repo-Commit", repo.commit)
            self.send_header("ETag", f'"{hashlib.sha256(data).hexdigest()}"')
            self.send_header("Content-Length", str(declared if declared and not body else len(part)))
            if status == 206:
                self.send_header("Content-Range", f"bytes {begin}-{int(begin) + len(part) - 1}/{declared or len(data)}")
            self.end_headers()
            if body:
                self.wfile.write(part)

    return Handler


@contextlib.contextmanager
def serve(hub: HubServer) -> Iterator[HubServer]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(hub))
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    hub.url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield hub
    finally:
        server.shutdown()
        server.server_close()


# ---------------------------------------------------------------- a tiny Llama in several checkpoints
H, LAYERS, HEADS, KV, FF, VOCAB = 64, 2, 4, 2, 128, 256
CONFIG = {
    "model_type": "llama",
    "architectures": ["LlamaForCausalLM"],
    "hidden_size": H,
    "num_hidden_layers": LAYERS,
    "num_attention_heads": HEADS,
    "num_key_value_heads": KV,
    "intermediate_size": FF,
    "vocab_size": VOCAB,
    "max_position_embeddings": 2048,
    "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
}
# per layer: q 64x64 + k 32x64 + v 32x64 + o 64x64 + gate, up 128x64 + down 64x128 + 2 norms of 64
PER_LAYER = 4096 + 2048 + 2048 + 4096 + 3 * 8192 + 2 * 64  # = 36_992
PARAMS = 2 * VOCAB * H + LAYERS * PER_LAYER + H  # embed + lm_head + layers + final norm = 106_816


def _layer(i: int, dtype: str = "BF16") -> dict[str, tuple[str, tuple[int, ...]]]:
    p = f"model.layers.{i}."
    return {
        p + "self_attn.q_proj.weight": (dtype, (H, H)),
        p + "self_attn.k_proj.weight": (dtype, (KV * 16, H)),
        p + "self_attn.v_proj.weight": (dtype, (KV * 16, H)),
        p + "self_attn.o_proj.weight": (dtype, (H, H)),
        p + "mlp.gate_proj.weight": (dtype, (FF, H)),
        p + "mlp.up_proj.weight": (dtype, (FF, H)),
        p + "mlp.down_proj.weight": (dtype, (H, FF)),
        p + "input_layernorm.weight": (dtype, (H,)),
        p + "post_attention_layernorm.weight": (dtype, (H,)),
    }


def _ends() -> dict[str, tuple[str, tuple[int, ...]]]:
    return {
        "model.embed_tokens.weight": ("BF16", (VOCAB, H)),
        "model.norm.weight": ("BF16", (H,)),
        "lm_head.weight": ("BF16", (VOCAB, H)),
    }


def _gptq_layer(i: int) -> dict[str, tuple[str, tuple[int, ...]]]:
    """AutoGPTQ's QuantLinear: qweight int32 (in/8, out), qzeros int32 (in/group, out/8), fp16 scales
    (in/group, out), g_idx int32 (in); group size 32."""
    out: dict[str, tuple[str, tuple[int, ...]]] = {}
    for name, (_, shape) in _layer(i).items():
        if len(shape) == 1:
            out[name] = ("F16", shape)
            continue
        rows, cols = shape
        base = name.removesuffix(".weight")
        out |= {
            base + ".qweight": ("I32", (cols // 8, rows)),
            base + ".qzeros": ("I32", (cols // 32, rows // 8)),
            base + ".scales": ("F16", (cols // 32, rows)),
            base + ".g_idx": ("I32", (cols,)),
        }
    return out


def _repos() -> dict[str, Repo]:
    single = safetensors_bytes({**_ends(), **_layer(0), **_layer(1)})
    shard1, shard2 = {**_ends(), **_layer(0)}, _layer(1)
    index = {
        "metadata": {"total_size": 0},
        "weight_map": {
            **{n: "model-00001-of-00002.safetensors" for n in shard1},
            **{n: "model-00002-of-00002.safetensors" for n in shard2},
        },
    }
    # plus a multi-token-prediction layer past num_hidden_layers, as DeepSeek V3 ships (transformers skips it)
    mtp: dict[str, tuple[str, tuple[int, ...]]] = {"model.layers.2.eh_proj.weight": ("BF16", (H, 2 * H))}
    gptq_tensors = {**_ends(), **_gptq_layer(0), **_gptq_layer(1), **mtp}
    gptq_cfg = {**CONFIG, "quantization_config": {"quant_method": "gptq", "bits": 4, "group_size": 32}}
    config = json.dumps(CONFIG).encode()
    return {
        "acme/tiny-llama": Repo({"config.json": config, "model.safetensors": single}),
        "acme/tiny-sharded": Repo(
            {
                "config.json": config,
                "model.safetensors.index.json": json.dumps(index).encode(),
                "model-00001-of-00002.safetensors": safetensors_bytes(shard1),
                "model-00002-of-00002.safetensors": safetensors_bytes(shard2),
            }
        ),
        "acme/tiny-gptq": Repo(
            {"config.json": json.dumps(gptq_cfg).encode(), "model.safetensors": safetensors_bytes(gptq_tensors)}
        ),
        "acme/gated": Repo({"config.json": config}, gated=True),
        "acme/busy": Repo({"config.json": config, "model.safetensors": single}, rate_limited=("model.safetensors",)),
        "acme/no-config": Repo({"README.md": b"hi"}),
        "acme/busier": Repo({"config.json": config}, rate_limited=("config.json",)),
        "acme/bin-only": Repo({"config.json": config, "pytorch_model.bin": b"not read"}),
        "acme/slow": Repo({"config.json": config, "model.safetensors": single}, delay_s=0.5),
    }


def hub_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[HubServer]:
    """A served Hub of _repos(), with the environment the client reads pointing at it and a fresh cache."""
    with serve(HubServer(_repos())) as server:
        monkeypatch.setenv("HF_ENDPOINT", server.url)
        monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
        monkeypatch.delenv("HF_HUB_CACHE", raising=False)
        monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
        monkeypatch.delenv("HF_TOKEN", raising=False)
        yield server
