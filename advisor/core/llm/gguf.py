"""GGUF files as llama.cpp's quantizer writes them: the bytes of each block format and the type it picks for
each tensor under each file type (llama-quantize's Q4_K_M, IQ3_XS, ...).

Block layouts (ggml/src/ggml-common.h, the block_* structs and their static_asserts), bytes per block of
32 weights (legacy) or of a 256-weight super-block (K- and I-quants):
  Q4_0 18 (fp16 d + 16 nibbles: 4.5 bits per weight), Q4_1 20 (d, m: 5.0), Q5_0 22 (d, qh[4], qs[16]: 5.5),
  Q5_1 24 (6.0), Q8_0 34 (8.5), IQ4_NL 18 (4.5); Q2_K 84 (scales[16], qs[64], d, dmin: 2.625), Q3_K 110
  (hmask[32], qs[64], scales[12], d: 3.4375), Q4_K 144 (4.5), Q5_K 176 (5.5), Q6_K 210 (6.5625), IQ1_S 50
  (1.5625), IQ1_M 56 (1.75), IQ2_XXS 66 (2.0625), IQ2_XS 74 (2.3125), IQ2_S 82 (2.5625), IQ3_XXS 98
  (3.0625), IQ3_S 110 (3.4375), IQ4_XS 136 (d, scales_h, scales_l[4], qs[128]: 4.25).
Per-tensor choices (src/llama-quant.cpp llama_tensor_get_type, for a model with an imatrix, as the
published I-quants are made): the output tensor in Q6_K (Q5_K under the 1- and 2-bit I-quants, Q8_0
where its rows are not whole super-blocks, kept as Q8_0 in Q8_0 files); token_embd in the file's base
type except Q2_K under IQ2_XXS/IQ2_XS/IQ1_*, IQ3_S under IQ2_S/IQ2_M/IQ3_XXS; attn_v, attn_output and
ffn_down bumped per file type (the rules in _bumped); an 8-expert model's attn_v in Q8_0 and attn_k in
Q8_0; LLM_TYPE_70B (80 Llama layers) gives attn_v Q5_K where it would be Q3_K or Q4_K. A row length that
is not a multiple of 256 falls back (Q4_K -> Q5_0, Q5_K -> Q5_1, Q6_K -> Q8_0, the 2-3-bit types and IQ4_XS
-> IQ4_NL). Norms and biases stay F32.
"""

from __future__ import annotations

from advisor.core.llm.decoder import DecoderSpec
from advisor.core.llm.tensors import TensorGroup

# type -> (bytes per block, weights per block)
GGUF_BLOCKS: dict[str, tuple[int, int]] = {
    "q4_0": (18, 32),
    "q4_1": (20, 32),
    "q5_0": (22, 32),
    "q5_1": (24, 32),
    "q8_0": (34, 32),
    "iq4_nl": (18, 32),
    "q2_k": (84, 256),
    "q3_k": (110, 256),
    "q4_k": (144, 256),
    "q5_k": (176, 256),
    "q6_k": (210, 256),
    "iq1_s": (50, 256),
    "iq1_m": (56, 256),
    "iq2_xxs": (66, 256),
    "iq2_xs": (74, 256),
    "iq2_s": (82, 256),
    "iq3_xxs": (98, 256),
    "iq3_s": (110, 256),
    "iq4_xs": (136, 256),
    "f16": (2, 1),
    "bf16": (2, 1),
    "f32": (4, 1),
}
# file type (llama-quantize's name) -> its default tensor type (llama-quant.cpp llama_model_quantize_impl)
FILE_TYPES: dict[str, str] = {
    "q2_k": "q2_k",
    "q3_k_s": "q3_k",
    "q3_k_m": "q3_k",
    "q3_k_l": "q3_k",
    "q4_0": "q4_0",
    "q4_1": "q4_1",
    "q4_k_s": "q4_k",
    "q4_k_m": "q4_k",
    "q5_0": "q5_0",
    "q5_1": "q5_1",
    "q5_k_s": "q5_k",
    "q5_k_m": "q5_k",
    "q6_k": "q6_k",
    "q8_0": "q8_0",
    "iq1_s": "iq1_s",
    "iq1_m": "iq1_m",
    "iq2_xxs": "iq2_xxs",
    "iq2_xs": "iq2_xs",
    "iq2_s": "iq2_xs",
    "iq2_m": "iq2_s",
    "iq3_xxs": "iq3_xxs",
    "iq3_xs": "iq3_s",
    "iq3_s": "iq3_s",
    "iq3_m": "iq3_s",
    "iq4_nl": "iq4_nl",
    "iq4_xs": "iq4_xs",
}
_FALLBACK = {
    "q4_k": "q5_0",
    "q5_k": "q5_1",
    "q6_k": "q8_0",
    **dict.fromkeys(
        ("q2_k", "q3_k", "iq1_s", "iq1_m", "iq2_xxs", "iq2_xs", "iq2_s", "iq3_xxs", "iq3_s", "iq4_xs"), "iq4_nl"
    ),
}
LOW_IQ = frozenset({"iq1_s", "iq1_m", "iq2_xxs", "iq2_xs", "iq2_s", "iq2_m"})


def gguf_bytes(gtype: str, rows: int, cols: int) -> float:
    """rows x cols weights of a GGUF type, blocked along the rows of `cols` (the fallback type where a row
    is not a whole number of super-blocks)."""
    block_bytes, per_block = GGUF_BLOCKS[gtype]
    if per_block == 256 and cols % 256:
        return gguf_bytes(_FALLBACK[gtype], rows, cols)
    return rows * -(-cols // per_block) * block_bytes


def use_more_bits(layer: int, layers: int) -> bool:
    """llama-quant.cpp use_more_bits: the first and last eighth and every third layer between."""
    return layer < layers // 8 or layer >= 7 * layers // 8 or (layer - layers // 8) % 3 == 2


def _output_type(ftype: str) -> str:
    if ftype == "q8_0":
        return "q8_0"
    return "q5_k" if ftype in LOW_IQ or ftype == "iq3_xxs" else "q6_k"


def _embedding_type(ftype: str) -> str:
    if ftype in ("iq2_xxs", "iq2_xs", "iq1_s", "iq1_m"):
        return "q2_k"
    if ftype in ("iq2_s", "iq2_m", "iq3_xxs"):
        return "iq3_s"
    return FILE_TYPES[ftype]


def _attn_v(ftype: str, layer: int, spec: DecoderSpec) -> str:
    gqa, base = spec.heads // spec.kv_heads, FILE_TYPES[ftype]
    experts = spec.moe.experts if spec.moe else 0
    if ftype in LOW_IQ:
        return "q4_k" if gqa >= 4 or experts >= 4 else "iq3_s" if ftype in ("iq2_s", "iq2_m") else "q2_k"
    rules = {
        "q2_k": "q4_k" if gqa >= 4 else "q3_k",
        "iq3_xxs": "q4_k" if gqa >= 4 else "iq3_xxs",
        "iq3_xs": "q4_k" if gqa >= 4 else base,
        "iq3_s": "q4_k" if gqa >= 4 else base,
        "iq3_m": "q4_k",
        "q3_k_m": "q5_k" if layer < 2 else "q4_k",
        "q3_k_l": "q5_k",
        "iq4_nl": "q5_k" if gqa >= 4 else base,
        "iq4_xs": "q5_k" if gqa >= 4 else base,
        "q4_k_s": "q5_k" if layer < 4 else base,
    }
    chosen = rules.get(ftype, base)
    if ftype in ("q4_k_m", "q5_k_m") and use_more_bits(layer, spec.layers):
        chosen = "q6_k"
    return chosen


def _ffn_down(ftype: str, layer: int, spec: DecoderSpec) -> str:
    n, base = spec.layers, FILE_TYPES[ftype]
    if ftype in LOW_IQ:
        return ("iq3_s" if ftype in ("iq2_s", "iq2_m") else "q2_k") if layer < n // 8 else base
    more = use_more_bits(layer, n)
    experts = spec.moe.experts if spec.moe else 0
    rules = {
        "q2_k": "q3_k",
        "q3_k_m": "q5_k" if layer < n // 16 else "q4_k",
        "q3_k_l": "q5_k",
        "iq3_m": "q4_k" if layer < n // 8 or (experts == 8 and more) else base,
        "q4_k_m": "q6_k" if more else base,
        "q5_k_m": "q6_k" if more else base,
        "q4_k_s": "q5_k" if layer < n // 8 else base,
        # with an imatrix the legacy types give the first eighth their one-step-larger sibling
        "q4_0": "q4_1" if layer < n // 8 else base,
        "q5_0": "q5_1" if layer < n // 8 else base,
    }
    return rules.get(ftype, base)


def _attn_output(ftype: str, spec: DecoderSpec) -> str:
    base = FILE_TYPES[ftype]
    if spec.moe is not None and spec.moe.experts == 8:
        bumped = ("q2_k", "iq3_xxs", "q3_k_s", "q3_k_m", "iq4_nl", "q4_k_s", "q4_k_m", "iq3_s", "iq3_m", "iq4_xs")
        return "q5_k" if ftype in bumped or ftype in LOW_IQ else base
    rules = {
        "q2_k": "q3_k",
        "iq3_xxs": "iq3_s",
        "q3_k_m": "q4_k",
        "q3_k_l": "q5_k",
        "iq3_m": "q4_k",
        "iq1_s": "iq2_xxs",
        "iq1_m": "iq2_xxs",
        "iq2_s": "iq3_s",
        "iq2_m": "iq3_s",
    }
    return rules.get(ftype, base)


def _q_or_k(ftype: str, role: str, spec: DecoderSpec) -> str:
    if role == "k_proj" and spec.moe is not None and spec.moe.experts == 8:
        return "q8_0"
    if ftype == "iq3_xs":
        return "iq3_xxs"
    return "iq2_s" if ftype == "iq2_m" else FILE_TYPES[ftype]


def _bumped(ftype: str, group: TensorGroup, spec: DecoderSpec) -> str:
    role = group.role
    if role in ("router", "shared_gate"):  # ffn_gate_inp (and _shexp) are never quantized
        return "f32"
    if role == "v_proj":
        chosen = _attn_v(ftype, group.layer, spec)
        if spec.model_type == "llama" and spec.layers == 80 and chosen in ("q3_k", "q4_k") and ftype not in LOW_IQ:
            chosen = "q5_k"  # llama.cpp detects LLM_TYPE_70B and spends more on its small attn_v
        return "q8_0" if spec.moe is not None and spec.moe.experts == 8 else chosen
    if role in ("down_proj", "expert_down_proj", "shared_down_proj"):
        return _ffn_down(ftype, group.layer, spec)
    if role == "o_proj":
        return _attn_output(ftype, spec)
    if role in ("q_proj", "k_proj"):
        return _q_or_k(ftype, role, spec)
    if role in ("gate_proj", "up_proj", "expert_gate_proj", "expert_up_proj") and ftype == "iq3_xs":
        return "iq3_xxs" if spec.layers // 8 <= group.layer < 7 * spec.layers // 8 else FILE_TYPES[ftype]
    return FILE_TYPES[ftype]


def gguf_type(ftype: str, group: TensorGroup, spec: DecoderSpec) -> str:
    """The GGUF type llama_tensor_get_type picks for one tensor group of a file of type `ftype`."""
    output = group.role == "lm_head" or (group.role == "embed" and spec.tied_embeddings)
    if output:
        return "q8_0" if group.cols % 256 else _output_type(ftype)
    if group.role == "embed":
        return _embedding_type(ftype)
    return _bumped(ftype, group, spec)
