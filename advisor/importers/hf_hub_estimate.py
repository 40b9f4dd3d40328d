"""A Hub checkpoint (hf_hub.fetch) -> its layer graph and estimator: the architecture from config.json as for
`hf:CONFIG.json`, the stored format from its quantization_config, the exact parameter count and bytes from
its safetensors headers."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from advisor.core import zoo
from advisor.core.estimator import Estimator, analytic_estimator
from advisor.core.graph import Graph
from advisor.core.llm.stored import StoredWeights, quantization_format
from advisor.core.workload import Workload
from advisor.importers.common import read_config
from advisor.importers.hf_config import graph_from_config
from advisor.importers.hf_hub import HubCheckpoint, Progress, fetch, layer_of
from advisor.importers.stored_estimate import as_stored, with_stored

# safetensors dtypes that hold weights one element per parameter (packed integers and scales do not)
_FLOAT = ("F64", "F32", "BF16", "F16", "F8_E4M3", "F8_E5M2")


def decoder_bytes(ckpt: HubCheckpoint, cfg: dict[str, Any]) -> int | None:
    """Bytes of the tensors transformers loads for the text decoder: not the multi-token-prediction layers
    past num_hidden_layers (DeepSeek V3 ships one), and None for multimodal checkpoints (their towers)."""
    layers = cfg.get("num_hidden_layers")
    if ckpt.tensors is None or "text_config" in cfg or "vision_config" in cfg or type(layers) is not int:
        return None
    return sum(t.nbytes for t in ckpt.tensors if (layer_of(t.name) or 0) < layers)


def stored_weights(ckpt: HubCheckpoint, cfg: dict[str, Any]) -> StoredWeights | None:
    """The checkpoint's quantized storage, with the file's bytes; None for a plain 16/32-bit checkpoint."""
    found = quantization_format(cfg.get("quantization_config"))
    if found is None:
        return None
    fmt, source = found
    return StoredWeights(fmt, source, decoder_bytes(ckpt, cfg))


def checkpoint_notes(ckpt: HubCheckpoint, cfg: dict[str, Any], graph: Graph | None) -> tuple[str, ...]:
    where = f"{ckpt.spec} at commit {ckpt.commit[:12]}"
    qc = cfg.get("quantization_config")
    notes = []
    if qc is not None and quantization_format(qc) is None:
        method = qc.get("quant_method", "?") if isinstance(qc, dict) else "?"
        notes.append(
            f"{where}: quantization method {str(method)[:40]!r} has no layout here; the weights "
            "are estimated in the workload's dtype (give --weights to choose one)."
        )
    if ckpt.tensors is None:
        return (
            *notes,
            f"{where}: no safetensors headers (a .bin-only repo, or offline before they were "
            "cached): the parameter count comes from config.json alone.",
        )
    by_dtype: Counter[str] = Counter()
    for t in ckpt.tensors:
        by_dtype[t.dtype] += t.numel
    stored = sum(t.nbytes for t in ckpt.tensors)
    dtypes = ", ".join(f"{n:,} {d}" for d, n in by_dtype.most_common())
    floats = sum(n for d, n in by_dtype.items() if d in _FLOAT)
    described = f"; the described layers hold {graph.param_count:,}" if graph is not None else ""
    count = f"{floats:,} parameters" if floats == sum(by_dtype.values()) else "packed quantized tensors"
    notes.append(f"{where}: {count} in {ckpt.files} safetensors file(s), {stored:,} bytes ({dtypes}){described}.")
    return tuple(notes)


def hub_graph(ckpt: HubCheckpoint, seq_len: int | None) -> Graph | None:
    """The analytic graph of a decoder (or BERT) config, carrying the checkpoint's storage; None otherwise."""
    cfg = read_config(ckpt.config_path)
    graph = graph_from_config(ckpt.config_path, ckpt.spec, seq_len or zoo.DEFAULT_SEQ_LEN, seq_len is None)
    if graph is None or graph.decoder is None:
        return graph
    return replace(graph, decoder=replace(graph.decoder, stored=stored_weights(ckpt, cfg)))


def load_graph(
    spec: str, seq_len: int | None, progress: Progress | None = None, cancelled: Callable[[], bool] | None = None
) -> Graph:
    """spec_graph's hf:ORG/NAME: the analytic graph, else transformers' module traced (needs torch);
    `progress` and `cancelled` are the app's progress bar and Cancel button."""
    ckpt = fetch(spec, progress, cancelled)
    graph = hub_graph(ckpt, seq_len)
    if graph is not None:
        return graph
    from advisor.importers.spec_graph import load_graph as load_spec

    return replace(load_spec(f"hf:{ckpt.config_path}", seq_len), name=ckpt.spec)


def hub_estimator(spec: str, workload: Workload | None, *, seq_len: int | None, method: str) -> Estimator:
    from advisor.importers.spec_estimate import choose_method, spec_estimator

    ckpt = fetch(spec)
    cfg = read_config(ckpt.config_path)
    graph = hub_graph(ckpt, seq_len)
    stored = graph.decoder.stored if graph is not None and graph.decoder is not None else None
    stored_workload = as_stored(workload, stored)[0] if workload is not None else None
    local = f"hf:{ckpt.config_path}"
    if graph is not None and choose_method(local, method, stored_workload) == "analytic":
        estimator = analytic_estimator(graph)
    else:
        estimator = spec_estimator(local, workload, seq_len=seq_len, method=method)
    return with_stored(estimator, stored, checkpoint_notes(ckpt, cfg, graph), graph.name if graph else ckpt.spec)
