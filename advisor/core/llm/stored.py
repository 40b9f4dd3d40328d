"""How a checkpoint stores its weights, as read from the checkpoint itself: the `--weights` format its
quantization_config (or GGUF file type) names, and where the file's tensor table is known, the exact bytes.

A workload that does not name `--weights` runs a quantized checkpoint as it is stored (transformers loads a
GPTQ, AWQ, bitsandbytes or FP8 checkpoint in its quantized layout; llama.cpp maps a GGUF file as it is).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from advisor.core.workload import WeightFormat

# transformers' quantizers (quantizers/auto.py AUTO_QUANTIZER_MAPPING keys) -> the storage format whose
# layout advisor/core/llm/quant.py describes; bits are read where the method has several.
_BNB = "bitsandbytes"
_INT_BITS: dict[int, WeightFormat] = {
    8: WeightFormat.INT8,
    4: WeightFormat.INT4,
    3: WeightFormat.INT4,
    2: WeightFormat.INT4,
}


@dataclass(frozen=True)
class StoredWeights:
    format: WeightFormat
    source: str  # what the format was read from, for the estimate's assumptions
    weight_bytes: int | None = None  # exact bytes of the decoder's weight tensors in the file, when known
    active_weight_bytes: int | None = None  # of those, what one decode step reads (GGUF: per tensor)

    def exact_for(self, fmt: str) -> bool:
        return self.weight_bytes is not None and fmt == self.format


def quantization_format(qc: Any) -> tuple[WeightFormat, str] | None:
    """The storage format of a config.json quantization_config, and its description; None for a method the
    format vocabulary has no layout for (the caller says so and estimates the config's dtype)."""
    if not isinstance(qc, dict):
        return None
    method = str(qc.get("quant_method", "")).lower()
    bits = qc.get("bits", qc.get("w_bit", 4))
    bits = bits if type(bits) is int else 4
    if method in ("gptq", "awq", "hqq", "quanto", "aqlm", "eetq", "higgs"):
        fmt = _INT_BITS.get(bits) or (WeightFormat.INT8 if bits > 4 else WeightFormat.INT4)
        group = qc.get("group_size", qc.get("q_group_size", 128))
        return fmt, f"{method.upper()} {bits}-bit, group size {group} (config.json quantization_config)"
    if method == _BNB:
        if qc.get("load_in_8bit"):
            return WeightFormat.INT8, "bitsandbytes LLM.int8 (config.json quantization_config)"
        kind = qc.get("bnb_4bit_quant_type", "nf4")
        return WeightFormat.NF4, f"bitsandbytes 4-bit {kind} (config.json quantization_config)"
    if method in ("fp8", "fbgemm_fp8", "finegrained_fp8"):
        return WeightFormat.FP8, f"{method} 8-bit float (config.json quantization_config)"
    if method == "mxfp4":  # gpt-oss: MXFP4 experts, 4 bits + one 8-bit scale per 32 (4.25 bits per weight)
        return WeightFormat.MXFP4, "MXFP4 experts, the rest bf16 (config.json quantization_config)"
    if method == "compressed-tensors":
        return _compressed_tensors(qc)
    return None


def _compressed_tensors(qc: dict[str, Any]) -> tuple[WeightFormat, str] | None:
    """compressed-tensors config_groups: {"group_0": {"weights": {"num_bits": 8, "type": "float"}}}."""
    fmt: WeightFormat
    groups = qc.get("config_groups")
    first = next(iter(groups.values()), None) if isinstance(groups, dict) and groups else None
    weights = first.get("weights") if isinstance(first, dict) else None
    if not isinstance(weights, dict):
        return None
    bits, kind = weights.get("num_bits"), weights.get("type", "int")
    if bits == 8:
        fmt = WeightFormat.FP8 if kind == "float" else WeightFormat.INT8
    elif bits == 4:
        fmt = WeightFormat.INT4
    else:
        return None
    return fmt, f"compressed-tensors {bits}-bit {kind} (config.json quantization_config)"
