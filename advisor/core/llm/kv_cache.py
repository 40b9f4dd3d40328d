"""KV-cache bytes: per layer and token, keys and values of every KV head (grouped- and multi-query attention
through kv_heads), at most the window in sliding-window layers, the compressed latent plus the rotary key in
multi-head latent attention (DeepSeek V2/V3 as vLLM and SGLang cache it)."""

from __future__ import annotations

from advisor.core.llm.decoder import DecoderSpec

# bytes per cached element
ELEMENT_BYTES = {"fp32": 4, "bf16": 2, "fp16": 2, "fp8": 1, "int8": 1}
# int8: per token and head an fp16 scale and an fp16 zero point for keys and for values (LMDeploy's
# asymmetric online int8 KV quantization); fp8 uses one scale per tensor (vLLM's k_scale/v_scale), negligible.
INT8_SCALE_BYTES_PER_HEAD = 4
# llama.cpp's 8-bit cache (--cache-type-k/v q8_0): blocks of 32 values along each cached row, 32 int8 and one
# fp16 scale d = 34 bytes (ggml/src/ggml-common.h block_q8_0 at ggml-org/llama.cpp 5bc7a74; ggml_row_size)
Q8_0_BLOCK_VALUES = 32
Q8_0_BLOCK_BYTES = 32 + 2


def kv_bytes_per_layer_token(spec: DecoderSpec, dtype: str) -> int:
    """Bytes one token adds to one layer's cache, for one sequence."""
    if dtype == "q8_0":  # llama.cpp: the K row and the V row of n_embd_k_gqa values each (MLA: the latent)
        rows = [spec.mla.kv_lora_rank + spec.mla.qk_rope_head_dim] if spec.mla else [spec.kv_heads * spec.head_dim] * 2
        return sum(-(-row // Q8_0_BLOCK_VALUES) * Q8_0_BLOCK_BYTES for row in rows)
    element = ELEMENT_BYTES[dtype]
    if spec.mla is not None:
        latent = spec.mla.kv_lora_rank + spec.mla.qk_rope_head_dim
        return latent * element + (INT8_SCALE_BYTES_PER_HEAD if dtype == "int8" else 0)
    per_head = spec.head_dim * element + (INT8_SCALE_BYTES_PER_HEAD if dtype == "int8" else 0)
    return 2 * spec.kv_heads * per_head


def cached_tokens(spec: DecoderSpec, layer: int, tokens: int) -> int:
    """Tokens a layer keeps: all of them, or the last sliding_window in a sliding-window layer."""
    return min(tokens, spec.sliding_window) if spec.is_sliding(layer) else tokens


def kv_cache_bytes(spec: DecoderSpec, dtype: str, tokens: int, batch: int) -> int:
    """The whole cache for batch sequences of `tokens` tokens each (prompt + generated)."""
    per_token = kv_bytes_per_layer_token(spec, dtype)
    return batch * per_token * sum(cached_tokens(spec, i, tokens) for i in range(spec.layers))
