"""Text and JSON renderings of an Estimate (calculation and aggregation live elsewhere)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from advisor.core.estimate import Estimate
from advisor.core.units import format_bytes, format_count, format_shape
from advisor.core.workload import Finetune

_COLUMNS = ("Layer", "Kind", "Output shape", "Params", "MACs", "Kept for backward")


def workload_line(e: Estimate) -> str:
    w = e.workload
    parts = [w.mode, f"batch {w.batch}", w.precision]
    if w.training:
        parts.append(w.optimizer)
    if w.checkpointing:
        parts.append("gradient checkpointing")
    parts += _llm_parts(e)
    return f"{e.model}  |  {', '.join(parts)}  |  {e.method}"


def _llm_parts(e: Estimate) -> list[str]:
    w, parts = e.workload, []
    if w.generating:
        parts.append(f"prompt {w.prompt_len} + {w.new_tokens} new tokens, KV cache {w.kv_cache_dtype}")
    if w.weights is not None or w.finetune == Finetune.QLORA:
        parts.append(f"weights {w.weight_format}")
    if w.finetune != Finetune.FULL:
        parts.append(f"{w.finetune} r={w.lora_rank} on {','.join(w.adapters)}")
    return parts


def generation_json(e: Estimate) -> dict[str, Any] | None:
    return None if e.generation is None else asdict(e.generation)


def layer_table(e: Estimate) -> list[str]:
    cells = [_COLUMNS] + [
        (
            r.name,
            r.kind,
            format_shape(r.output_shape),
            format_count(r.param_count),
            format_count(r.forward_macs),
            format_bytes(r.kept_bytes) if r.kept_bytes else "-",
        )
        for r in e.layers
    ]
    widths = [max(len(row[c]) for row in cells) for c in range(len(_COLUMNS))]
    lines = [
        "  ".join(
            cell.ljust(width) if c < 3 else cell.rjust(width)
            for c, (cell, width) in enumerate(zip(row, widths, strict=True))
        ).rstrip()
        for row in cells
    ]
    lines.insert(1, "-" * len(lines[0]))
    return lines


def summary(e: Estimate) -> list[str]:
    m = e.memory
    lines = [
        f"Parameters: {e.param_count:,} ({format_count(e.param_count)})",
        f"Forward: {format_count(e.forward_macs)} MACs = {format_count(e.forward_flops)} FLOPs "
        f"(FLOPs = 2 x MACs + elementwise)",
        f"Step: {format_count(e.step_flops)} FLOPs" + (" (forward + backward)" if e.workload.training else ""),
        # a generation peak at a runtime's setup (llama.cpp's context) has no layer: no "(context created, )"
        f"Memory at the peak ({', '.join(part for part in (m.peak_phase, m.peak_layer) if part)}):",
    ]
    lines += [
        f"  {name:<16}{format_bytes(value):>12}"
        for name, value in m.at_peak.as_dict().items()
        if name != "kv_cache" or e.workload.generating or value
    ]
    lines += [
        f"  {'peak':<16}{format_bytes(m.peak_bytes):>12}   = {format_bytes(m.fixed_bytes)} fixed + "
        f"{e.workload.batch} x {format_bytes(m.per_sample_bytes)} per sample",
        f"  {'reserved':<16}{format_bytes(m.reserved_bytes):>12}   (caching allocator, plenty of memory)",
        f"  {'required':<16}{format_bytes(m.required_bytes):>12}   (smallest allocator budget that runs it)",
        f"  {'device total':<16}{format_bytes(m.device_total_bytes):>12}   (as nvidia-smi would show it)",
    ]
    return lines


def generation_lines(e: Estimate) -> list[str]:
    g = e.generation
    if g is None:
        return []
    return [
        "Generation (card-independent):",
        f"  weights {format_bytes(g.weight_bytes)}, read per decode step {format_bytes(g.active_weight_bytes)}",
        f"  KV cache {format_bytes(g.kv_bytes_per_token)} per token per sequence ({g.layers} layers, "
        f"{g.kv_heads} KV heads of {g.attention_heads})",
        f"  prefill {format_count(round(g.prefill_flops))} FLOPs, "
        f"decode {format_count(round(g.decode_flops_per_token))} FLOPs per token",
    ]


def render_text(e: Estimate) -> str:
    return "\n".join([workload_line(e), "", *layer_table(e), "", *summary(e), *generation_lines(e)]) + "\n"


def to_json(e: Estimate) -> dict[str, Any]:
    """The stable JSON of DESIGN.md's command-line contract."""
    w, m = e.workload, e.memory
    return {
        "model": e.model,
        "config": {
            "mode": w.mode,
            "batch": w.batch,
            "precision": w.precision,
            "optimizer": w.optimizer if w.training else None,
            "checkpointing": w.checkpointing,
            "prompt_len": w.prompt_len if w.generating else None,
            "new_tokens": w.new_tokens if w.generating else None,
            "weights": w.weight_format,
            "kv_cache": w.kv_cache_dtype if w.generating else None,
            "finetune": w.finetune,
            "lora_rank": w.lora_rank if w.adapters else None,
            "lora_targets": list(w.adapters),
        },
        "method": e.method,
        "params": e.param_count,
        "compute": {"macs_forward": e.forward_macs, "flops_forward": e.forward_flops, "flops_step": e.step_flops},
        "memory": {
            **m.at_peak.as_dict(),
            "kv_cache_bytes": m.at_peak.kv_cache,
            "peak_bytes": m.peak_bytes,
            "reserved_bytes": m.reserved_bytes,
            "required_bytes": m.required_bytes,
            "device_total_bytes": m.device_total_bytes,
            "fixed_bytes": m.fixed_bytes,
            "per_sample_bytes": round(m.per_sample_bytes),
            "peak_phase": m.peak_phase,
            "peak_layer": m.peak_layer,
        },
        "layers": [
            {
                "name": r.name,
                "kind": r.kind,
                "output_shape": list(r.output_shape),
                "params": r.param_count,
                "macs_forward": r.forward_macs,
                "flops_forward": r.forward_flops,
                "flops_backward": r.backward_flops,
                "output_bytes": r.output_bytes,
                "kept_bytes": r.kept_bytes,
            }
            for r in e.layers
        ],
        "assumptions": list(e.assumptions),
        "generation": generation_json(e),
    }
