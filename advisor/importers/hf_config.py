"""A transformers config.json -> the analytic layer graph, pure Python (no torch, no transformers).

Decoder families go through core's one decoder description (advisor/core/llm/families.py: Llama 1-4,
Mistral, Mixtral, Qwen2/2.5/3 and their MoE, Gemma 1-3, Phi 1-3.5, PhiMoE, Falcon, GPT-NeoX, GPT-J, GPT-2,
BigCode, StarCoder2, OPT, BLOOM, StableLM, OLMo 1/2, OLMoE, Cohere, DeepSeek V2/V3, Granite/GraniteMoE,
GLM4, gpt-oss); BERT has its own builder. A config whose model_type is none of these gives None: the caller
falls back to parameter counts (or to simulating the transformers module). GPT-2 keeps the zoo graph that
the H200 measurements calibrated, with its decoder description attached for generation.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from advisor.core.errors import ShapeError, SpecError
from advisor.core.graph import Graph
from advisor.core.llm.decoder import DecoderSpec
from advisor.core.llm.families import decoder_from_config, not_modelled
from advisor.core.llm.graph import decoder_graph
from advisor.core.zoo import DEFAULT_SEQ_LEN
from advisor.core.zoo.text import BertConfig, GPT2Config, bert, gpt2
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
    c = BertConfig(
        _int(path, cfg, "hidden_size", 768),
        _int(path, cfg, "num_hidden_layers", 12),
        _int(path, cfg, "num_attention_heads", 12),
        _int(path, cfg, "intermediate_size", 3072),
        _int(path, cfg, "vocab_size", 30522),
        _int(path, cfg, "max_position_embeddings", 512),
        _int(path, cfg, "type_vocab_size", 2),
        len(labels) if isinstance(labels, dict) and labels else _int(path, cfg, "num_labels", 2),
        _float(path, cfg, "hidden_dropout_prob", 0.1),
    )
    return bert(c, seq_len, name)


def _gpt2(path: Path, cfg: dict[str, Any], spec: DecoderSpec, seq_len: int) -> Graph:
    c = GPT2Config(
        spec.hidden,
        spec.layers,
        spec.heads,
        spec.vocab,
        spec.max_positions or 1024,
        _float(path, cfg, "resid_pdrop", 0.1),
    )
    return replace(gpt2(c, seq_len, spec.name), decoder=spec)


def decoder_spec(path: Path, name: str) -> DecoderSpec | None:
    """The decoder description of a config.json, or None when it is not a decoder family core describes."""
    cfg = read_config(path)
    try:
        return decoder_from_config(cfg, name)
    except SpecError as error:
        raise fail(path, str(error)) from None


def analytic_decoder_graph(path: Path, seq_len: int | None) -> Graph | None:
    """hf:CONFIG.json by the analytic method: the decoder graph; None for other model types (encoders,
    vision, and state-space or hybrid families the decoder description does not cover: the caller traces the
    transformers module, which needs torch)."""
    if not describes_decoder(path):
        return None
    return graph_from_config(path, f"hf:{path.name}", seq_len or DEFAULT_SEQ_LEN, seq_len is None)


def describes_decoder(path: Path) -> bool:
    """Whether core's decoder description covers this config.json (else its module is traced)."""
    return not not_modelled(read_config(path).get("model_type")) and decoder_spec(path, path.name) is not None


def graph_from_config(path: Path, name: str, seq_len: int, default_len: bool) -> Graph | None:
    """None when model_type is not built in. A default seq_len is capped at the model's learned positions."""
    cfg = read_config(path)
    model_type = cfg.get("model_type")
    label = f"{name} ({model_type} from config.json)"
    try:
        if model_type == "bert":
            limit = cfg.get("max_position_embeddings", 512)
            if default_len and isinstance(limit, int) and limit > 0:
                seq_len = min(seq_len, limit)
            return _bert(path, cfg, label, seq_len)
        spec = decoder_spec(path, label)
        if spec is None:
            return None
        if default_len and spec.max_positions:
            seq_len = min(seq_len, spec.max_positions)
        if model_type == "gpt2":
            return _gpt2(path, cfg, spec, seq_len)
        return decoder_graph(spec, seq_len)
    except (ShapeError, SpecError) as error:
        message = str(error)
        raise fail(path, message.removeprefix(f"{path}: ")) from None
