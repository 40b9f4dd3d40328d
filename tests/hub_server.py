"""A local stand-in for the Hugging Face Hub's file routes, for the real huggingface_hub client.

It answers what huggingface_hub 2.x asks (file_download.py get_hf_file_metadata, hf_api.py
parse_safetensors_file_metadata): HEAD and GET of /{org}/{name}/resolve/{revision}/{file}, with the
X-Repo-Commit and ETag headers the client stores the blob under, Range requests for safetensors headers,
and the X-Error-Code header its hf_raise_for_status reads (RepoNotFound, GatedRepo, RevisionNotFound,
EntryNotFound) plus HTTP 429. Every request is recorded so a test can see what the client fetched.
"""

from __future__ import annotations

import hashlib
import json
import re
import struct
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

DTYPE_BYTES = {"F32": 4, "F16": 2, "BF16": 2, "I32": 4, "U8": 1}


def safetensors_bytes(tensors: dict[str, tuple[str, tuple[int, ...]]]) -> bytes:
    """A real safetensors file (README "Format"): 8-byte header length, the JSON header, zeroed data."""
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
    return struct.pack("<Q", len(raw)) + raw + bytes(offset)


@dataclass
class Repo:
    files: dict[str, bytes]
    commit: str = "0123456789abcdef0123456789abcdef01234567"
    gated: bool = False
    rate_limited: tuple[str, ...] = ()  # files answered with 429


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
            if repo.gated:
                return self._error(403, "GatedRepo", body)
            if revision not in ("main", repo.commit):
                return self._error(404, "RevisionNotFound", body)
            if filename in repo.rate_limited:
                return self._error(429, None, body)
            if filename not in repo.files:
                return self._error(404, "EntryNotFound", body)
            self._send_file(repo, repo.files[filename], body)

        def _send_file(self, repo: Repo, data: bytes, body: bool) -> None:
            wanted = self.headers.get("Range")
            status, part = 200, data
            if wanted and body:
                begin, _, end = wanted.removeprefix("bytes=").partition("-")
                part = data[int(begin): int(end) + 1 if end else None]
                status = 206
            self.send_response(status)
            self.send_header("X-Repo-Commit", repo.commit)
            self.send_header("ETag", f'"{hashlib.sha256(data).hexdigest()}"')
            self.send_header("Content-Length", str(len(part)))
            if status == 206:
                self.send_header("Content-Range", f"bytes {begin}-{int(begin) + len(part) - 1}/{len(data)}")
            self.end_headers()
            if body:
                self.wfile.write(part)

    return Handler


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
