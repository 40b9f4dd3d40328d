"""`hf:ORG/NAME[@REVISION]`: a model on the Hugging Face Hub, by its config.json and its safetensors headers.

Files come through huggingface_hub's own cache (hf_hub_download: the HEAD of /{repo}/resolve/{rev}/{file}
gives X-Repo-Commit and the ETag, the blob is kept under HF_HOME/hub and reused offline). The weights are
never downloaded: the tensor table comes from each safetensors file's header, fetched with a byte range
(HfApi.parse_safetensors_file_metadata, huggingface_hub 2.x hf_api.py), and its summary is kept beside the
hub cache by commit, so a second run and an offline run read it from disk. HF_ENDPOINT, HF_TOKEN, HF_HOME,
HF_HUB_CACHE and HF_HUB_OFFLINE are read when the spec is resolved, not when huggingface_hub was imported.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from advisor.core.errors import SpecError
from advisor.importers.common import optional_module, read_config

# owner/name as the Hub spells them (huggingface_hub utils/_validators.py REPO_ID_REGEX), then @revision
HUB_ID = re.compile(r"^[\w.-]{1,96}/[\w.-]{1,96}(@[\w./-]{1,200})?$")
INDEX_FILE, SINGLE_FILE = "model.safetensors.index.json", "model.safetensors"
PROBE_TIMEOUT_S = 10.0  # huggingface_hub's own etag timeout (constants.DEFAULT_ETAG_TIMEOUT)
MAX_SHARDS = 4096  # the largest public checkpoints have a few hundred shards (DeepSeek V3: 163)
_LAYER = re.compile(r"(?:^|\.)layers\.(\d+)\.")
Progress = Callable[[int, int, str], None]  # (done, total, what): the app's progress bar


class Cancelled(SpecError):
    """The user stopped the import (the app's Cancel)."""


@dataclass(frozen=True)
class Tensor:
    name: str
    dtype: str
    numel: int
    nbytes: int


@dataclass(frozen=True)
class HubCheckpoint:
    repo: str
    revision: str | None
    commit: str
    config_path: Path
    tensors: tuple[Tensor, ...] | None  # None: the repo has no safetensors weights, or offline without them
    files: int = 0

    @property
    def spec(self) -> str:
        return f"hf:{self.repo}" + (f"@{self.revision}" if self.revision else "")


def is_hub_spec(spec: str) -> bool:
    """hf:ORG/NAME: a Hub id. A path that exists, or that ends with .json, is a local config (hf:CONFIG.json)."""
    if not spec.startswith("hf:"):
        return False
    target = spec[3:]
    if target.lower().endswith(".json") or Path(target).exists():
        return False
    return HUB_ID.match(target) is not None and not target.startswith((".", "/"))


def split_spec(spec: str) -> tuple[str, str | None]:
    repo, _, revision = spec.removeprefix("hf:").partition("@")
    return repo, revision or None


def _cache_dir() -> str | None:
    """The hub cache huggingface_hub would use with today's environment (constants.py HF_HUB_CACHE)."""
    if os.environ.get("HF_HUB_CACHE"):
        return os.environ["HF_HUB_CACHE"]
    if os.environ.get("HF_HOME"):
        return os.path.join(os.environ["HF_HOME"], "hub")
    return None


def _offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "on", "yes", "true")


def fetch(spec: str, progress: Progress | None = None, cancelled: Callable[[], bool] | None = None) -> HubCheckpoint:
    """The config.json and the tensor table of a Hub model; one line naming what failed otherwise."""
    hub = optional_module("huggingface_hub", spec)
    repo, revision = split_spec(spec)
    report = progress or (lambda done, total, what: None)
    report(0, 1, f"{repo}: config.json")
    config = Path(_download(hub, spec, repo, revision, "config.json"))
    read_config(config)  # size, JSON and layer-count checks before anything else reads it
    commit = config.parent.name
    summary = _summary_path(repo, commit)
    if summary is not None and summary.is_file():
        tensors, files = _load_summary(summary)
    elif _offline():
        tensors, files = None, 0
    else:
        tensors, files = _tensor_table(hub, spec, repo, revision, report, cancelled or (lambda: False))
        if summary is not None and tensors is not None:
            _save_summary(summary, tensors, files)
    return HubCheckpoint(repo, revision, commit, config, tensors, files)


def _download(hub: Any, spec: str, repo: str, revision: str | None, filename: str) -> str:
    endpoint = os.environ.get("HF_ENDPOINT") or None
    try:
        cached = hub.try_to_load_from_cache(repo, filename, cache_dir=_cache_dir(), revision=revision)
        if not _offline() and not isinstance(cached, str):
            # Not cached: one HEAD without retries first. hf_hub_download retries a file it has no copy of
            # five times with backoff (file_download.py, retry_on_errors=True), 24 s before a refusal, an
            # unreachable Hub or a rate limit would be said; the user is told at once instead.
            hub.get_hf_file_metadata(
                hub.hf_hub_url(repo, filename, revision=revision, endpoint=endpoint), timeout=PROBE_TIMEOUT_S
            )
        return str(
            hub.hf_hub_download(
                repo,
                filename,
                revision=revision,
                cache_dir=_cache_dir(),
                endpoint=endpoint,
                local_files_only=_offline(),
            )
        )
    except Exception as error:
        raise hub_error(spec, error, filename) from None


def _tensor_table(
    hub: Any, spec: str, repo: str, revision: str | None, report: Progress, cancelled: Callable[[], bool]
) -> tuple[tuple[Tensor, ...] | None, int]:
    """Every tensor's dtype and size from the safetensors headers: the index's shards, else the one file."""
    errors = hub.errors
    try:
        index_path = hub.hf_hub_download(
            repo, INDEX_FILE, revision=revision, cache_dir=_cache_dir(), endpoint=os.environ.get("HF_ENDPOINT") or None
        )
        shards = _shards(spec, Path(index_path))
    except errors.EntryNotFoundError:
        shards = [SINGLE_FILE]
    except Exception as error:
        raise hub_error(spec, error, INDEX_FILE) from None
    api = hub.HfApi(endpoint=os.environ.get("HF_ENDPOINT") or None)

    def header(filename: str) -> Any:
        if cancelled():
            raise Cancelled(f"{spec}: import cancelled")
        return api.parse_safetensors_file_metadata(repo, filename, revision=revision)

    tensors: list[Tensor] = []
    try:
        with ThreadPoolExecutor(max_workers=8) as pool:
            for done, meta in enumerate(pool.map(header, shards), 1):
                report(done, len(shards), f"{repo}: safetensors headers")
                tensors += [
                    Tensor(name, info.dtype, info.parameter_count, info.data_offsets[1] - info.data_offsets[0])
                    for name, info in meta.tensors.items()
                ]
    except errors.EntryNotFoundError:
        if shards == [SINGLE_FILE]:
            return None, 0  # no safetensors weights (an old .bin-only repo): the config alone decides
        raise SpecError(f"{spec}: a shard named in {INDEX_FILE} is missing from the repo") from None
    except SpecError:
        raise
    except Exception as error:
        raise hub_error(spec, error, "safetensors header") from None
    return tuple(tensors), len(shards)


def _shards(spec: str, index_path: Path) -> list[str]:
    index = read_config(index_path)
    weight_map = index.get("weight_map")
    if not isinstance(weight_map, dict) or not all(isinstance(v, str) for v in weight_map.values()):
        raise SpecError(f"{spec}: {INDEX_FILE} has no weight_map of tensor names to file names")
    shards = sorted(set(weight_map.values()))
    if len(shards) > MAX_SHARDS:
        raise SpecError(f"{spec}: {INDEX_FILE} names {len(shards)} files, more than {MAX_SHARDS}")
    return shards


def hub_error(spec: str, error: BaseException, what: str) -> SpecError:
    """One line for each way the Hub says no, with what to do about it (huggingface_hub errors.py)."""
    name = type(error).__name__
    status = getattr(getattr(error, "response", None), "status_code", None)
    if name == "GatedRepoError":
        line = (
            "gated repo: accept its license on the model's Hub page, then set HF_TOKEN to a token of "
            "that account (or run `hf auth login`)"
        )
    elif name == "RepositoryNotFoundError":
        line = (
            "no such model on the Hub, or it is private: check the name (ORG/NAME), or set HF_TOKEN "
            "to a token that can read it"
        )
    elif name == "RevisionNotFoundError":
        line = "no such revision (branch, tag or commit after @) in this repo"
    elif name == "RemoteEntryNotFoundError":
        line = f"the repo has no {what}, so it is not a transformers model advisor can read"
    elif status == 429:
        line = "rate-limited by the Hub (HTTP 429): wait a few minutes and retry; with HF_TOKEN set the limit is higher"
    elif name in ("LocalEntryNotFoundError", "OfflineModeIsEnabled") or _network_error(error):
        line = (
            f"cannot reach the Hub and {what} is not in the local cache: connect to the internet (or "
            "set HF_ENDPOINT to a mirror), or run once online so it is cached for HF_HUB_OFFLINE=1"
        )
    elif status is not None:
        line = f"the Hub answered HTTP {status} for {what}; retry later"
    else:
        line = f"{what}: {name}: {str(error).splitlines()[0][:200] if str(error) else 'failed'}"
    return SpecError(f"{spec}: {line}")


def _network_error(error: BaseException) -> bool:
    """No answer at all: huggingface_hub 2.x talks through httpx2 (httpx before), whose transport errors
    (ConnectError, timeouts) are not OSErrors."""
    return isinstance(error, OSError | TimeoutError) or type(error).__module__.startswith(("httpx", "httpcore"))


# ---------------------------------------------------------------- the tensor-table cache
def _summary_path(repo: str, commit: str) -> Path | None:
    """Beside the hub cache, by commit (a commit's files never change)."""
    if not re.fullmatch(r"[0-9a-f]{40}", commit):
        return None
    root = _cache_dir()
    if root is None:
        hub = optional_module("huggingface_hub", repo)
        root = hub.constants.HF_HUB_CACHE
    return Path(root).parent / "advisor" / "safetensors" / f"models--{repo.replace('/', '--')}" / f"{commit}.json"


def _save_summary(path: Path, tensors: tuple[Tensor, ...], files: int) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        rows = [[t.name, t.dtype, t.numel, t.nbytes] for t in tensors]
        path.write_text(json.dumps({"files": files, "tensors": rows}))
    except OSError:
        pass  # a read-only cache only costs the headers being fetched again next time


def _load_summary(path: Path) -> tuple[tuple[Tensor, ...] | None, int]:
    try:
        data = json.loads(path.read_text())
        return tuple(Tensor(str(n), str(d), int(c), int(b)) for n, d, c, b in data["tensors"]), int(data["files"])
    except (OSError, ValueError, KeyError, TypeError):
        return None, 0


def layer_of(name: str) -> int | None:
    found = _LAYER.search(name)
    return int(found.group(1)) if found else None
