"""`FILE.gguf`: the decoder its metadata describes, with its weights at the exact bytes of its tensor table.

The metadata keys (llama.cpp src/llama-arch.cpp LLM_KV_NAMES; gguf/constants.py Keys) are mapped onto the
transformers config.json fields the decoder description already reads (advisor/core/llm/families.py), so a
GGUF file and the config.json it was converted from give the same layers; only the weights differ, taking
what every tensor's GGML type and shape say (gguf GGML_QUANT_SIZES: bytes per block of weights).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from advisor.core import zoo
from advisor.core.errors import SpecError
from advisor.core.graph import Graph
from advisor.core.llm.families import decoder_from_config
from advisor.core.llm.graph import decoder_graph
from advisor.core.llm.stored import StoredWeights
from advisor.core.llm.tensors import tensor_groups
from advisor.core.workload import WeightFormat
from advisor.importers.common import fail
from advisor.importers.gguf_header import ArrayInfo, GGUFHeader, read_header
from advisor.importers.state_dict import weights_only_graph

# general.architecture -> transformers model_type (convert_hf_to_gguf.py's ModelBase.register names)
MODEL_TYPES = {
    "llama": "llama",
    "qwen2": "qwen2",
    "qwen3": "qwen3",
    "qwen2moe": "qwen2_moe",
    "qwen3moe": "qwen3_moe",
    "gemma": "gemma",
    "gemma2": "gemma2",
    "gemma3": "gemma3_text",
    "phi3": "phi3",
    "granite": "granite",
    "olmo2": "olmo2",
    "command-r": "cohere",
    "starcoder2": "starcoder2",
    "mistral3": "mistral",
    "olmoe": "olmoe",
    "glm4": "glm4",
    "gpt-oss": "gpt_oss",
    "deepseek2": "deepseek_v2",
}
# {arch}.KEY -> config.json field
FIELDS = {
    "embedding_length": "hidden_size",
    "block_count": "num_hidden_layers",
    "attention.head_count": "num_attention_heads",
    "attention.head_count_kv": "num_key_value_heads",
    "feed_forward_length": "intermediate_size",
    "attention.key_length": "head_dim",
    "context_length": "max_position_embeddings",
    "attention.sliding_window": "sliding_window",
    "expert_count": "num_experts",
    "expert_used_count": "num_experts_per_tok",
    "expert_feed_forward_length": "moe_intermediate_size",
    "expert_shared_feed_forward_length": "shared_expert_intermediate_size",
    # DeepSeek's multi-head latent attention (convert_hf_to_gguf.py DeepseekV2Model.set_gguf_parameters)
    "attention.q_lora_rank": "q_lora_rank",
    "attention.kv_lora_rank": "kv_lora_rank",
    "rope.dimension_count": "qk_rope_head_dim",
    "leading_dense_block_count": "first_k_dense_replace",
    "expert_shared_count": "n_shared_experts",
}
# the expert count's config.json name per family (MixtralConfig, GptOssConfig, DeepseekV2Config)
EXPERT_COUNT = {"mixtral": "num_local_experts", "gpt_oss": "num_local_experts", "deepseek_v2": "n_routed_experts"}
# general.file_type (gguf LlamaFileType) -> the --weights format of that name
FILE_TYPES: dict[int, WeightFormat] = {
    0: WeightFormat.FP32,
    1: WeightFormat.FP16,
    32: WeightFormat.BF16,
    7: WeightFormat.Q8_0,
    15: WeightFormat.Q4_K_M,
    17: WeightFormat.Q5_K_M,
}


def config_of(path: Path, header: GGUFHeader) -> dict[str, Any] | None:
    """The config.json the metadata stands for; None for an architecture the decoder description lacks."""
    meta = header.metadata
    arch = meta.get("general.architecture")
    if not isinstance(arch, str):
        raise fail(path, "GGUF metadata has no general.architecture")
    if arch not in MODEL_TYPES:
        return None
    cfg: dict[str, Any] = {"model_type": MODEL_TYPES[arch]}
    for key, field in FIELDS.items():
        value = meta.get(f"{arch}.{key}")
        if isinstance(value, list):  # per-layer values (head_count_kv of some conversions): all must agree
            if len(set(value)) != 1:
                raise fail(path, f"{arch}.{key} differs between layers, which the decoder description lacks")
            value = value[0]
        if value is not None:
            cfg[field] = value
    names = {t.name for t in header.tensors}
    cfg["vocab_size"] = _vocab(path, header, arch)
    cfg["tie_word_embeddings"] = "output.weight" not in names
    if "num_experts" in cfg and arch == "llama":  # Mixtral converts to the llama architecture with experts
        cfg["model_type"] = "mixtral"
    if "num_experts" in cfg and cfg["model_type"] in EXPERT_COUNT:
        cfg[EXPERT_COUNT[cfg["model_type"]]] = cfg.pop("num_experts")
    if arch == "deepseek2":
        _deepseek(meta, cfg)
    if arch == "gpt-oss" and "intermediate_size" not in cfg:  # GptOssConfig.intermediate_size is the experts'
        cfg["intermediate_size"] = cfg.get("moe_intermediate_size")
    if arch in ("qwen2", "qwen2moe"):
        cfg["qkv_bias"] = "blk.0.attn_q.bias" in names
    if cfg.get("sliding_window") and arch in ("qwen2", "qwen2moe"):
        cfg["use_sliding_window"] = True
    return cfg


def _deepseek(meta: dict[str, Any], cfg: dict[str, Any]) -> None:
    """Newer conversions store MLA as MQA over the latent: key_length = kv_lora_rank + rope, value_length =
    kv_lora_rank, and the per-head widths under *_mla; older ones the per-head widths under the plain keys.
    A sigmoid router (expert_gating_func 2) is V3's."""
    key = meta.get("deepseek2.attention.key_length_mla", meta.get("deepseek2.attention.key_length"))
    value = meta.get("deepseek2.attention.value_length_mla", meta.get("deepseek2.attention.value_length"))
    cfg.pop("head_dim", None)
    cfg.pop("num_key_value_heads", None)  # 1 in the MQA form; transformers keeps one per head
    if type(key) is int and type(cfg.get("qk_rope_head_dim")) is int:
        cfg["qk_nope_head_dim"] = key - cfg["qk_rope_head_dim"]
    if type(value) is int:
        cfg["v_head_dim"] = value
    cfg.setdefault("q_lora_rank", None)  # absent: queries projected directly (V2-Lite)
    if meta.get("deepseek2.expert_gating_func") == 2:
        cfg["model_type"] = "deepseek_v3"


def _vocab(path: Path, header: GGUFHeader, arch: str) -> int:
    tokens = header.metadata.get("tokenizer.ggml.tokens")
    if isinstance(tokens, ArrayInfo | list):
        return tokens.count if isinstance(tokens, ArrayInfo) else len(tokens)
    size = header.metadata.get(f"{arch}.vocab_size")
    if type(size) is int:
        return size
    embed = next((t for t in header.tensors if t.name == "token_embd.weight"), None)
    if embed is None or len(embed.shape) != 2:
        raise fail(path, "GGUF file has neither a token list nor token_embd.weight, so the vocabulary is unknown")
    return embed.shape[1]


def stored_weights(header: GGUFHeader, tied: bool, experts: int, used: int) -> StoredWeights:
    """The file's format and exact bytes; a decode step reads every tensor but the embedding table (one row
    per token, unless the output shares it) and, of the experts, the chosen ones."""
    file_type = header.metadata.get("general.file_type")
    bits = 8 * header.weight_bytes / max(header.numel, 1)
    fmt = FILE_TYPES.get(file_type) if type(file_type) is int else None
    if fmt is None:  # the vocabulary's nearest llama.cpp format; the bytes stay the file's own
        nearest = "q4_k_m" if bits < 5 else "q5_k_m" if bits < 6 else "q8_0" if bits < 12 else "fp16"
        fmt = WeightFormat(nearest)
    active = 0.0
    for t in header.tensors:
        if t.name.startswith("token_embd.") and not tied:
            continue
        active += t.nbytes * used / experts if "_exps." in t.name and experts else t.nbytes
    source = f"GGUF file type {file_type}, {bits:.2f} bits per weight, every tensor's type from the file"
    return StoredWeights(fmt, source, header.weight_bytes, round(active))


def load_graph(path: Path, seq_len: int | None = None) -> Graph:
    header = read_header(path)
    cfg = config_of(path, header)
    arch = header.metadata.get("general.architecture")
    if cfg is None:
        return weights_only_graph(path.name, header.numel, f"GGUF architecture {str(arch)[:40]!r} not built in")
    label = f"{path.name} ({arch} from GGUF metadata)"
    try:
        spec = decoder_from_config(cfg, label)
    except SpecError as error:
        raise fail(path, f"GGUF metadata: {error}") from None
    if spec is None:
        return weights_only_graph(path.name, header.numel, f"GGUF architecture {arch!r} not built in")
    experts = spec.moe.experts if spec.moe else 0
    used = spec.moe.experts_per_token if spec.moe else 0
    stored = stored_weights(header, spec.tied_embeddings, experts, used)
    described = sum(g.numel for g in tensor_groups(spec))
    if described != header.numel:  # the metadata was read differently from how the file was written
        stored = replace(
            stored,
            source=f"{stored.source}; the file holds {header.numel:,} parameters, the "
            f"layers its metadata describes {described:,}",
        )
    spec = replace(spec, stored=stored)
    length = seq_len or zoo.DEFAULT_SEQ_LEN
    return decoder_graph(spec, min(length, spec.max_positions) if spec.max_positions and not seq_len else length)
