"""Hub ids and GGUF files at real size, with tensor tables that advisor did not make.

1. hf:ORG/NAME: for bundled configs, transformers builds the model on the meta device and its parameters
   (tied ones once, as save_pretrained writes them) become a BF16 safetensors header, served header-only by
   the local Hub of tests/hub_server.py (the real huggingface_hub client fetches it by byte range). Printed:
   the parameters the headers give, those of advisor's analytic layers from config.json, the difference, the
   bytes fetched and the time.
2. FILE.gguf: the same tensors (llama.cpp names, Q4_K where a row is a multiple of 256, else Q8_0; F32
   vectors; the real vocabulary as a token list), written by gguf's GGUFWriter as tensor descriptions only
   and the file extended sparsely to its data size. Printed: the weight bytes advisor's header parser gives
   against gguf's own GGUFReader (which maps the whole file), the parameters against the analytic layers,
   and the parse times.

Run: .venv/bin/python benchmarks/hub_checkpoints.py   (needs torch, transformers, huggingface_hub, gguf)
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]

from advisor.core.zoo.llm import preset_config_path  # noqa: E402
from advisor.importers.gguf_header import read_header  # noqa: E402
from advisor.importers.hf_hub import fetch  # noqa: E402
from advisor.importers.spec_graph import load_graph  # noqa: E402
from tests.hub_server import HubServer, Repo, safetensors_bytes, serve  # noqa: E402

MODELS = (
    "llama-3.2-1b",
    "llama-3.1-8b",
    "qwen2.5-7b",
    "mistral-7b",
    "gemma-2-2b",
    "phi-3-mini",
    "mixtral-8x7b",
    "deepseek-v2-lite",
)
GGUF_MODELS = (
    "llama-3.2-1b",
    "llama-3.1-8b",
    "qwen2.5-7b",
    "mistral-7b",
    "gemma-2-2b",
    "phi-3-mini",
    "mixtral-8x7b",
    "deepseek-v2-lite",
    "gpt-oss-20b",
)
# model_type -> general.architecture (llama.cpp convert_hf_to_gguf.py: Mistral and Mixtral convert as llama)
ARCH = {
    "llama": "llama",
    "mistral": "llama",
    "mixtral": "llama",
    "qwen2": "qwen2",
    "gemma2": "gemma2",
    "phi3": "phi3",
    "deepseek_v2": "deepseek2",
    "gpt_oss": "gpt-oss",
}
_GGUF_NAMES = {
    "self_attn.q_proj": "attn_q",
    "self_attn.k_proj": "attn_k",
    "self_attn.v_proj": "attn_v",
    "self_attn.o_proj": "attn_output",
    "mlp.gate_proj": "ffn_gate",
    "mlp.up_proj": "ffn_up",
    "mlp.down_proj": "ffn_down",
    "input_layernorm": "attn_norm",
    "post_attention_layernorm": "ffn_norm",
}


def meta_parameters(config: dict[str, Any]) -> dict[str, tuple[int, ...]]:
    import torch
    import transformers

    cfg = transformers.AutoConfig.for_model(**config)
    with torch.device("meta"):
        model = transformers.AutoModelForCausalLM.from_config(cfg, dtype=torch.bfloat16)
    return {name: tuple(p.shape) for name, p in model.named_parameters()}  # tied parameters once


def hub_row(name: str, hub: HubServer) -> None:
    config = json.loads(preset_config_path(name).read_text())
    shapes = meta_parameters(config)
    header = safetensors_bytes({n: ("BF16", s) for n, s in shapes.items()}, data=False)
    total = sum(2 * _numel(s) for s in shapes.values())
    repo = f"bench/{name}"
    hub.repos[repo] = Repo(
        {"config.json": json.dumps(config).encode(), "model.safetensors": header},
        sizes={"model.safetensors": len(header) + total},
    )
    started, asked = time.perf_counter(), len(hub.requests)
    ckpt = fetch(f"hf:{repo}")
    graph = load_graph(f"hf:{repo}")
    seconds = time.perf_counter() - started
    served = sum(t.numel for t in ckpt.tensors or ())
    print(
        f"{name:<18}{served:>16,}{graph.param_count:>16,}{graph.param_count - served:>+12,}"
        f"{len(header) / 1e6:>10.2f} MB{len(hub.requests) - asked:>5} req{seconds:>7.2f} s"
    )


def gguf_row(name: str, folder: Path) -> None:
    import gguf

    config = json.loads(preset_config_path(name).read_text())
    shapes = meta_parameters(config)
    path = folder / f"{name}.gguf"
    writer = gguf.GGUFWriter(str(path), ARCH[config["model_type"]])
    _metadata(writer, config)
    data_bytes = 0
    for hf_name, shape in shapes.items():
        qtype = _qtype(gguf, shape)
        block, size = gguf.GGML_QUANT_SIZES[qtype]
        nbytes = _numel(shape) // block * size
        stored = shape if qtype.name == "F32" else (*shape[:-1], shape[-1] // block * size)  # uint8: bytes per row
        writer.add_tensor_info(_gguf_name(hf_name), stored, _dtype(qtype), nbytes, raw_dtype=qtype)
        data_bytes += -(-nbytes // 32) * 32  # each tensor padded to the 32-byte alignment
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_ti_data_to_file()
    writer.close()
    with path.open("r+b") as f:  # extended sparsely to the data section's size: it takes no disk space
        f.truncate(-(-path.stat().st_size // 32) * 32 + data_bytes)
    started = time.perf_counter()
    header = read_header(path)
    ours = time.perf_counter() - started
    started = time.perf_counter()
    theirs = sum(int(t.n_bytes) for t in gguf.GGUFReader(str(path)).tensors)
    reader = time.perf_counter() - started
    graph = load_graph(str(path))
    print(
        f"{name:<18}{header.weight_bytes:>16,}{theirs:>16,}{header.weight_bytes - theirs:>+6}"
        f"{header.numel:>16,}{graph.param_count - header.numel:>+8,}{ours:>8.2f} s{reader:>8.2f} s"
    )


def _metadata(writer: Any, config: dict[str, Any]) -> None:
    writer.add_block_count(config["num_hidden_layers"])
    writer.add_context_length(config.get("max_position_embeddings", 4096))
    writer.add_embedding_length(config["hidden_size"])
    writer.add_feed_forward_length(config["intermediate_size"])
    if config.get("moe_intermediate_size"):
        writer.add_expert_feed_forward_length(config["moe_intermediate_size"])
    if config["model_type"] == "deepseek_v2":  # convert_hf_to_gguf.py DeepseekV2Model, the MQA form of MLA
        rank, rope = config["kv_lora_rank"], config["qk_rope_head_dim"]
        writer.add_kv_lora_rank(rank)
        if config.get("q_lora_rank"):
            writer.add_q_lora_rank(config["q_lora_rank"])
        writer.add_key_length(rank + rope)
        writer.add_value_length(rank)
        writer.add_key_length_mla(config["qk_nope_head_dim"] + rope)
        writer.add_value_length_mla(config["v_head_dim"])
        writer.add_rope_dimension_count(rope)
        writer.add_leading_dense_block_count(config["first_k_dense_replace"])
        writer.add_expert_count(config["n_routed_experts"])
        writer.add_expert_shared_count(config["n_shared_experts"])
        writer.add_expert_used_count(config["num_experts_per_tok"])
    writer.add_head_count(config["num_attention_heads"])
    writer.add_head_count_kv(config.get("num_key_value_heads", config["num_attention_heads"]))
    writer.add_file_type(15)
    if config.get("head_dim"):
        writer.add_key_length(config["head_dim"])
    if config.get("num_local_experts"):
        writer.add_expert_count(config["num_local_experts"])
        writer.add_expert_used_count(config["num_experts_per_tok"])
    if config.get("sliding_window"):
        writer.add_sliding_window(config["sliding_window"])
    writer.add_token_list([f"<token {i}>" for i in range(config["vocab_size"])])


def _gguf_name(hf_name: str) -> str:
    fixed = {
        "model.embed_tokens.weight": "token_embd.weight",
        "model.norm.weight": "output_norm.weight",
        "lm_head.weight": "output.weight",
    }
    if hf_name in fixed:
        return fixed[hf_name]
    parts = hf_name.removeprefix("model.layers.").split(".", 1)
    module, _, kind = parts[1].rpartition(".")
    return f"blk.{parts[0]}.{_GGUF_NAMES.get(module, module)}.{kind}"


def _qtype(gguf: Any, shape: tuple[int, ...]) -> Any:
    q = gguf.GGMLQuantizationType
    if len(shape) == 1:
        return q.F32
    return q.Q4_K if shape[-1] % 256 == 0 else q.Q8_0


def _dtype(qtype: Any) -> Any:
    import numpy as np

    return np.float32 if qtype.name == "F32" else np.uint8


def _numel(shape: tuple[int, ...]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        os.environ["HF_HOME"] = str(Path(folder) / "hf")
        os.environ.pop("HF_HUB_OFFLINE", None)
        with serve(HubServer()) as hub:
            os.environ["HF_ENDPOINT"] = hub.url
            print(f"{'hf:bench/MODEL':<18}{'header params':>16}{'analytic':>16}{'diff':>12}{'fetched':>13}")
            for name in MODELS:
                hub_row(name, hub)
        print(
            f"\n{'FILE.gguf':<18}{'advisor bytes':>16}{'GGUFReader':>16}{'diff':>6}{'file params':>16}"
            f"{'diff':>8}{'ours':>10}{'reader':>10}"
        )
        for name in GGUF_MODELS:
            gguf_row(name, Path(folder))


if __name__ == "__main__":
    main()
