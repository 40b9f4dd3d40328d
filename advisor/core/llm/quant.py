"""Bytes of a decoder's weights in each storage format, tensor by tensor, from the formats' real layouts.

- fp32/bf16/fp16: 4/2/2 bytes per weight.
- fp8: 1 byte per weight plus one fp32 scale per output channel (FBGEMM/compressed-tensors per-channel FP8;
  a per-tensor scale is smaller still).
- int8: bitsandbytes LLM.int8 (Linear8bitLt): int8 weights plus one fp32 absmax per row (SCB).
- int4: GPTQ/AWQ with group size 128: 4-bit weights, per group of 128 input weights one fp16 scale and one
  4-bit zero point packed into int32 (qzeros); 4 + (16 + 4) / 128 = 4.156 bits per weight.
- nf4: bitsandbytes 4-bit with double quantization (blocksize 64): 4 bits per weight, one 8-bit quantized
  absmax per block of 64, one fp32 absmax per 256 blocks, plus each tensor's 256-entry fp32 code table;
  4 + 8/64 + 32/(64 x 256) = 4.127 bits per weight.
- mxfp4: OCP Microscaling FP4 as gpt-oss ships it: 4-bit E2M1 values, one 8-bit E8M0 power-of-two scale per
  block of 32 along the input dimension (the checkpoint's `*_blocks` uint8 (..., cols / 32, 16) and `*_scales`
  uint8 (..., cols / 32)): 4 + 8 / 32 = 4.25 bits per weight. Only the MoE experts: transformers'
  Mxfp4HfQuantizer replaces GptOssExperts alone and vLLM's Mxfp4Config quantizes FusedMoE alone (its linear
  layers fall back to UnquantizedLinearMethod), and the checkpoint's modules_to_not_convert keeps attention,
  the router, the embedding and lm_head in bf16; the experts' biases stay bf16.
- GGUF: every llama-quantize file type, its block layouts and per-tensor choices in core/llm/gguf.py.
The transformers quantizers (GPTQ, AWQ, bitsandbytes, fp8) replace the nn.Linear layers of the blocks only:
embeddings, norms, biases and lm_head stay 16-bit. GGUF quantizes the embedding and the output too and
keeps 1-D tensors (norms, biases) in F32.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from advisor.core.errors import SpecError
from advisor.core.graph import TensorSpec
from advisor.core.llm.decoder import DecoderSpec
from advisor.core.llm.gguf import FILE_TYPES, gguf_bytes, gguf_type
from advisor.core.llm.tensors import TensorGroup, tensor_groups
from advisor.core.ops.base import Op
from advisor.core.ops.linear import Linear
from advisor.core.ops.moe import MoEExperts

GGUF_FORMATS = tuple(FILE_TYPES)
PLAIN_BYTES = {"fp32": 4, "bf16": 2, "fp16": 2}
_KEPT_LINEARS = ("lm_head", "gate", "shared_expert_gate")  # 16-bit under every transformers quantizer
QUANTIZED = ("fp8", "int8", "int4", "nf4", "mxfp4", *GGUF_FORMATS)
INT4_GROUP, NF4_BLOCK, NF4_BLOCKS_PER_ABSMAX = 128, 64, 256
MXFP4_BLOCK = 32  # values sharing one E8M0 scale (OCP Microscaling Formats spec v1.0, MXFP4)
EXPERTS_ONLY = ("mxfp4",)  # formats whose quantizer stores the MoE experts and nothing else


def matrix_bytes(fmt: str, rows: int, cols: int) -> float:
    """One rows x cols weight matrix (nn.Linear layout: rows = output features) in a transformers format."""
    n = rows * cols
    if fmt == "fp8":
        return n + 4 * rows
    if fmt == "int8":
        return n + 4 * rows
    if fmt == "int4":
        groups = rows * -(-cols // INT4_GROUP)
        return n / 2 + groups * (2 + 0.5)
    if fmt == "nf4":
        blocks = -(-n // NF4_BLOCK)
        return n / 2 + blocks + 4 * -(-blocks // NF4_BLOCKS_PER_ABSMAX) + 256 * 4
    if fmt == "mxfp4":
        return n / 2 + rows * -(-cols // MXFP4_BLOCK)
    return n * PLAIN_BYTES[fmt]


def linear_bytes(fmt: str, rows: int, cols: int) -> float:
    """A Linear's weight in a quantized format; GGUF counted at its file type's base type (the bumps of
    particular tensors are in group_bytes, which knows the tensor's role)."""
    if fmt in GGUF_FORMATS:
        return gguf_bytes(FILE_TYPES[fmt], rows, cols)
    return matrix_bytes(fmt, rows, cols)


def quantized_matrices(op: Op, inputs: Sequence[TensorSpec], name: str) -> list[tuple[int, int, int]]:
    """(count, rows, cols) of the weight matrices of a graph node that a quantizer stores in its format: the
    Linears of the blocks (not the LM head, not a router or gate of one output per expert) and the experts."""
    leaf = name.rsplit(".", 1)[-1]
    if isinstance(op, MoEExperts):
        hidden = inputs[0].shape[-1]
        projections = 3 if op.gated else 2
        return [(op.experts * (projections - 1), op.intermediate, hidden), (op.experts, hidden, op.intermediate)]
    if isinstance(op, Linear) and not op.tied_to and leaf not in _KEPT_LINEARS:
        return [(1, op.out_features, inputs[0].shape[-1])]
    return []


def stored_bytes(
    op: Op, inputs: Sequence[TensorSpec], name: str, fmt: str, adapter_bytes: int, plain_bytes: int
) -> int:
    """Weights and buffers of one frozen or inference layer as stored in format `fmt`: the quantized Linears
    of the blocks in their layout, the rest at `plain_bytes` (plain_dtype_bytes), LoRA adapters at
    `adapter_bytes`."""
    params, buffers, adapters = op.param_count(inputs), op.buffer_count(inputs), op.adapter_count(inputs)
    quantizes = fmt in QUANTIZED and (fmt not in EXPERTS_ONLY or isinstance(op, MoEExperts))
    matrices = quantized_matrices(op, inputs, name) if quantizes else []
    stored = sum(round(count * linear_bytes(fmt, rows, cols)) for count, rows, cols in matrices)
    plain = params - adapters + buffers - sum(count * rows * cols for count, rows, cols in matrices)
    return stored + plain * plain_bytes + adapters * adapter_bytes


def require_experts(fmt: str, ops: Sequence[Op], model: str) -> None:
    """An experts-only format on a model without experts would store nothing in it: refused, in one line."""
    if fmt in EXPERTS_ONLY and not any(isinstance(op, MoEExperts) for op in ops):
        raise SpecError(
            f"weights: {fmt} stores a mixture-of-experts model's experts and leaves every other layer in bf16 "
            f"(transformers' and vLLM's MXFP4 quantizers, as gpt-oss ships); {model} has no experts"
        )


def plain_dtype_bytes(fmt: str, kbit_prepared: bool) -> int:
    """Bytes of the weights a format does not quantize (embeddings, norms, biases, the LM head): the format's
    16 bits, or fp32 once PEFT's prepare_model_for_kbit_training has run (peft/utils/other.py: "cast all
    non INT8 parameters to fp32", every fp16/bf16 parameter that is not a bnb Params4bit)."""
    return 4 if kbit_prepared else PLAIN_BYTES.get(fmt, 2)


def group_bytes(fmt: str, group: TensorGroup, spec: DecoderSpec) -> float:
    if not group.is_matrix:  # norms, biases, sinks: F32 in GGUF, the model dtype otherwise
        return group.numel * (4 if fmt in GGUF_FORMATS or fmt == "fp32" else 2)
    if fmt in GGUF_FORMATS:
        return group.count * gguf_bytes(gguf_type(fmt, group, spec), group.rows, group.cols)
    if fmt in PLAIN_BYTES:
        return group.numel * PLAIN_BYTES[fmt]
    kept = fmt in EXPERTS_ONLY and not group.role.startswith("expert_")
    if kept or group.role in ("embed", "positions", "lm_head", "router", "shared_gate"):
        return group.numel * 2  # transformers quantizers skip embeddings, the LM head and tiny routers
    return group.count * matrix_bytes(fmt, group.rows, group.cols)


def weight_bytes(spec: DecoderSpec, fmt: str) -> int:
    """All stored weights (every expert) in the format, scales and zero points included; the file's own
    bytes where the checkpoint in this format was read tensor by tensor (GGUF, Hub safetensors headers)."""
    if spec.stored is not None and spec.stored.exact_for(fmt) and spec.stored.weight_bytes is not None:
        return spec.stored.weight_bytes
    return round(sum(group_bytes(fmt, g, spec) for g in tensor_groups(spec)))


def active_weight_bytes(spec: DecoderSpec, fmt: str) -> int:
    """Weight bytes a decode step reads: chosen experts only, and not the embedding table (one row per token)
    unless the LM head shares it."""
    stored = spec.stored if spec.stored is not None and spec.stored.exact_for(fmt) else None
    if stored is not None and stored.active_weight_bytes is not None:
        return stored.active_weight_bytes
    total = 0.0
    for g in tensor_groups(spec):
        if g.role == "positions" or (g.role == "embed" and not spec.tied_embeddings):
            continue
        total += group_bytes(fmt, g, spec) * g.active / g.count
    # the file's bytes without a per-tensor split (Hub safetensors): the read share of the described bytes
    return round(total * exact_scale(spec, fmt, weight_bytes(replace(spec, stored=None), fmt)))


def exact_scale(spec: DecoderSpec | None, fmt: str, described_bytes: int) -> float:
    """Factor from the layer graph's bytes of the weights in `fmt` to the checkpoint's own (1.0 unless the
    checkpoint's tensor table was read in this very format)."""
    if spec is None or spec.stored is None or not spec.stored.exact_for(fmt) or described_bytes <= 0:
        return 1.0
    return (spec.stored.weight_bytes or described_bytes) / described_bytes


def dequantized_per_matmul(op: Op, name: str, fmt: str) -> bool:
    """bitsandbytes' MatMul4Bit dequantizes an nf4 weight to 16 bit in forward and again in backward; the LM
    head stays 16-bit. A MoE router (kept 16-bit by quantized_matrices) is still counted as dequantized, as
    the replay has always counted it: a few kB per layer, left so to keep the figures of issue 31's
    restructuring byte-identical."""
    return fmt == "nf4" and isinstance(op, Linear) and name != "lm_head"
