"""A transformers config.json -> the built-in zoo graph of that architecture (BERT, GPT-2, Llama), pure Python.

Field names follow transformers' configuration classes (BertConfig, GPT2Config, LlamaConfig). A config whose
model_type is not one of these gives None: the caller falls back to parameter counts.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from advisor.core.errors import ShapeError, SpecError
from advisor.core.graph import Graph
from advisor.core.zoo.text import BertConfig, GPT2Config, bert, gpt2, llama
from advisor.importers.common import fail, read_config

MAX_DIMENSION = 1 << 24  # no real model has a hidden size, vocabulary or layer count this large


def _int(path: Path, cfg: dict[str, Any], key: str, default: int | None = None) -> int:
    value = cfg.get(key, default)
    if type(value) is not int or not 0 < value <= MAX_DIMENSION:
        raise fail(path, f"{key} must be a whole number from 1 to {MAX_DIMENSION}, got {str(value)[:40]}")
    return value


def _float(path: Path, cfg: dict[str, Any], key: str, default: float) -> float:
    value = cfg.get(key, default)
    if value is None:
        return default
    if type(value) not in (int, float) or not 0.0 <= value < 1.0:
        raise fail(path, f"{key} must be a probability in [0, 1), got {str(value)[:40]}")
    return float(value)


def _bert(path: Path, cfg: dict[str, Any], name: str, seq_len: int) -> Graph:
    labels = cfg.get("id2label")
    c = BertConfig(_int(path, cfg, "hidden_size", 768), _int(path, cfg, "num_hidden_layers", 12),
                   _int(path, cfg, "num_attention_heads", 12), _int(path, cfg, "intermediate_size", 3072),
                   _int(path, cfg, "vocab_size", 30522), _int(path, cfg, "max_position_embeddings", 512),
                   _int(path, cfg, "type_vocab_size", 2),
                   len(labels) if isinstance(labels, dict) and labels else _int(path, cfg, "num_labels", 2),
                   _float(path, cfg, "hidden_dropout_prob", 0.1))
    return bert(c, seq_len, name)


def _gpt2(path: Path, cfg: dict[str, Any], name: str, seq_len: int) -> Graph:
    c = GPT2Config(_int(path, cfg, "n_embd", 768), _int(path, cfg, "n_layer", 12), _int(path, cfg, "n_head", 12),
                   _int(path, cfg, "vocab_size", 50257), _int(path, cfg, "n_positions", 1024),
                   _float(path, cfg, "resid_pdrop", 0.1))
    return gpt2(c, seq_len, name)


def _llama(path: Path, cfg: dict[str, Any], name: str, seq_len: int) -> Graph:
    heads = _int(path, cfg, "num_attention_heads", 32)
    return llama(_int(path, cfg, "hidden_size", 4096), _int(path, cfg, "num_hidden_layers", 32), heads,
                 _int(path, cfg, "num_key_value_heads", heads), _int(path, cfg, "intermediate_size", 11008),
                 _int(path, cfg, "vocab_size", 32000), seq_len, name)


BUILDERS: dict[str, Callable[[Path, dict[str, Any], str, int], Graph]] = {
    "bert": _bert, "gpt2": _gpt2, "llama": _llama}
POSITIONS_KEY = {"bert": "max_position_embeddings", "gpt2": "n_positions"}


def graph_from_config(path: Path, name: str, seq_len: int, default_len: bool) -> Graph | None:
    """None when model_type is not built in. A default seq_len is capped at the model's learned positions."""
    cfg = read_config(path)
    model_type = cfg.get("model_type")
    if not isinstance(model_type, str):
        raise fail(path, "config has no model_type (a transformers config.json names one)")
    builder = BUILDERS.get(model_type)
    if builder is None:
        return None
    key = POSITIONS_KEY.get(model_type)
    if default_len and key and isinstance(cfg.get(key), int) and cfg[key] > 0:
        seq_len = min(seq_len, cfg[key])
    try:
        return builder(path, cfg, f"{name} ({model_type} from config.json)", seq_len)
    except (ShapeError, SpecError) as error:
        raise fail(path, str(error)) from None
