"""Helpers every importer shares: file checks, one-line errors, optional packages, dtype names."""

from __future__ import annotations

import importlib
import json
import stat
from pathlib import Path
from types import ModuleType
from typing import Any

from advisor import DISTRIBUTION
from advisor.core.errors import SpecError
from advisor.core.graph import DtypeKind

# Larger files are refused before reading: nothing this program needs from a model file is that big
# except the tensors themselves, which no importer reads.
MAX_FILE_BYTES = 1 << 40
MAX_CONFIG_BYTES = 16 << 20
# Published transformer configs have under 200 blocks (GPT-3 96, Llama 3.1 405B 126) and under 400 experts
# (DeepSeek V3 256, Kimi K2 384). A config is built as a module and simulated, which costs time per block:
# 10,000 layers ran over 240 s at 3.7 GB (issue 29), 200 took 38 s on a loaded 2-core machine, so 512 is the
# most that still answers within a couple of minutes there.
MAX_LAYERS = 512
MAX_EXPERTS = 1024
LAYER_KEYS = frozenset(
    {
        "num_hidden_layers",
        "n_layer",
        "n_layers",
        "num_layers",
        "encoder_layers",
        "decoder_layers",
        "num_encoder_layers",
        "num_decoder_layers",
    }
)
EXPERT_KEYS = frozenset({"num_experts", "num_local_experts", "n_routed_experts", "moe_num_experts"})

# How to get each optional package: the extras of pyproject.toml, or the package itself for the model
# libraries advisor does not depend on.
INSTALL = {
    "torch": f"install {DISTRIBUTION}[torch]",
    "onnx": f"install {DISTRIBUTION}[onnx]",
    "safetensors": f"install {DISTRIBUTION}[safetensors]",
    "huggingface_hub": f"install {DISTRIBUTION}[hub]",
    "gguf": f"install {DISTRIBUTION}[gguf]",
    "torchvision": "pip install torchvision",
    "timm": "pip install timm",
    "transformers": "pip install transformers",
}


def fail(path: str | Path, what: str) -> SpecError:
    """The one line the command prints: the file, then what is wrong with it."""
    return SpecError(f"{path}: {one_line(what)}")


def one_line(text: str, limit: int = 300) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 3] + "..."


def existing_file(spec: str) -> Path:
    path = Path(spec)
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise fail(spec, "no such file") from None
    except OSError as error:  # a name over 255 bytes, a path under a file, no permission
        raise fail(spec, error.strerror or str(error)) from None
    if stat.S_ISDIR(mode):  # `hf:FOLDER` as transformers takes it: name the config.json the folder holds
        inside = path / "config.json"
        raise fail(spec, f"a folder, not a file; give {inside}" if inside.is_file() else "a folder, not a file")
    if not stat.S_ISREG(mode):
        raise fail(spec, "not a regular file")
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise fail(spec, "file is larger than 1 TiB")
    if size == 0 and _reads_nothing(path):  # each reader said it its own way: "EOFError:", "the graph has no inputs"
        raise fail(spec, "the file is empty (0 bytes)")
    return path


def _reads_nothing(path: Path) -> bool:
    """A file of size 0 that reads no byte either (a /proc file says 0 and has text, or fails to read: its
    reader then says why)."""
    try:
        with path.open("rb") as stream:
            return stream.read(1) == b""
    except OSError:
        return False


def optional_module(package: str, form: str) -> ModuleType:
    """Imports an optional package, or says which extra installs it (one line, exit 2)."""
    top = package.split(".")[0]
    try:
        return importlib.import_module(package)
    except ImportError:
        raise SpecError(f"{form}: needs the {top} package ({INSTALL.get(top, f'pip install {top}')})") from None


def dtype_kind(name: str) -> DtypeKind:
    """Core dtype kinds from a dtype name of torch, ONNX or safetensors ("float16", "INT64", "bool")."""
    lowered = name.lower().removeprefix("torch.")
    if lowered in ("bool", "b8"):
        return "bool"
    if lowered.startswith(("int", "uint", "long", "short", "i", "u")) and "float" not in lowered:
        return "int64"
    return "float"


def unique_name(name: str, taken: set[str]) -> str:
    """GraphBuilder refuses duplicate layer names; a module called twice gets #2, #3, ..."""
    candidate, n = name or "op", 1
    while candidate in taken:
        n += 1
        candidate = f"{name}#{n}"
    taken.add(candidate)
    return candidate


def read_capped(path: Path, cap: int, what: str, start: int = 0, whole: bool = True) -> bytes:
    """At most `cap` bytes of `path` from `start`; one line for a file that cannot be read (no permission,
    an I/O error: issue 29 saw tracebacks for unreadable model files) and, when `whole`, for one with more."""
    try:
        with path.open("rb") as f:
            f.seek(start)
            data = f.read(cap + int(whole))
    except OSError as error:
        raise fail(path, f"cannot read {what}: {error.strerror or error}") from None
    if len(data) > cap:
        raise fail(path, f"{what} is larger than {cap / (1 << 20):,.0f} MiB")
    return data


def read_config(path: Path) -> dict[str, Any]:
    """A config.json as a dict, with size and format checks (used without transformers too)."""
    raw = read_capped(path, MAX_CONFIG_BYTES, "the config file")
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError) as error:
        raise fail(path, f"not valid JSON: {one_line(str(error), 120)}") from None
    if not isinstance(data, dict):
        raise fail(path, "a model config must be a JSON object")
    check_layer_counts(path, data)
    return data


def check_layer_counts(path: Path, config: dict[str, Any], depth: int = 0) -> None:
    """Refuse a config whose layer count would build a model until memory runs out (2**24 layers did).
    Checked here, where every config.json enters (analytic and transformers paths), and in nested configs
    (text_config, vision_config, encoder/decoder)."""
    for key, value in config.items():
        cap = MAX_LAYERS if key in LAYER_KEYS else MAX_EXPERTS if key in EXPERT_KEYS else None
        if cap is not None and value is not None:
            if type(value) is not int or not 0 <= value <= cap:
                raise fail(path, f"{key} must be a whole number from 0 to {cap:,}, got {str(value)[:40]}")
        elif isinstance(value, dict) and depth < 2:
            check_layer_counts(path, value, depth + 1)
