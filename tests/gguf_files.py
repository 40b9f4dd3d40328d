"""GGUF files for the tests, written by the gguf package's own GGUFWriter: a tiny Llama in Q4_K_M's mix of
Q4_K and Q6_K tensors, with the exact bytes and parameters its tensor table must give."""

from __future__ import annotations

from pathlib import Path

import pytest

gguf = pytest.importorskip("gguf")
np = pytest.importorskip("numpy")
Q = gguf.GGMLQuantizationType

H, LAYERS, HEADS, KV, FF, VOCAB = 256, 2, 4, 2, 512, 300
HEAD_DIM = H // HEADS  # 64
# Q4_K: 144 bytes per 256 weights, Q6_K: 210 per 256 (gguf GGML_QUANT_SIZES); F32 norms
LAYER_BYTES = (
    256 * 144
    + 128 * 144
    + 128 * 210
    + 256 * 144  # q, k (128 rows), v (Q6_K), o
    + 2 * 512 * 144
    + 256 * 2 * 210
    + 2 * 256 * 4
)  # gate, up; down (Q6_K, 512 wide); 2 norms
WEIGHT_BYTES = VOCAB * 144 + VOCAB * 210 + 256 * 4 + LAYERS * LAYER_BYTES  # embed Q4_K, output Q6_K, norm
LAYER_PARAMS = 256 * 256 + 2 * 128 * 256 + 256 * 256 + 3 * 512 * 256 + 2 * 256  # = 590_336
PARAMS = 2 * VOCAB * H + H + LAYERS * LAYER_PARAMS  # = 1_334_528 (what `advisor estimate` prints)


def _quantized(writer: object, name: str, rows: int, cols: int, qtype: object) -> None:
    block, size = gguf.GGML_QUANT_SIZES[qtype]
    writer.add_tensor(name, np.zeros((rows, cols // block * size), np.uint8), raw_dtype=qtype)  # type: ignore[attr-defined]


def write_gguf(path: Path, file_type: int = 15) -> Path:
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_block_count(LAYERS)
    w.add_context_length(4096)
    w.add_embedding_length(H)
    w.add_feed_forward_length(FF)
    w.add_head_count(HEADS)
    w.add_head_count_kv(KV)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_file_type(file_type)
    w.add_token_list([f"t{i}" for i in range(VOCAB)])
    _quantized(w, "token_embd.weight", VOCAB, H, Q.Q4_K)
    _quantized(w, "output.weight", VOCAB, H, Q.Q6_K)
    w.add_tensor("output_norm.weight", np.zeros(H, np.float32))
    for i in range(LAYERS):
        b = f"blk.{i}."
        w.add_tensor(b + "attn_norm.weight", np.zeros(H, np.float32))
        w.add_tensor(b + "ffn_norm.weight", np.zeros(H, np.float32))
        _quantized(w, b + "attn_q.weight", H, H, Q.Q4_K)
        _quantized(w, b + "attn_k.weight", KV * HEAD_DIM, H, Q.Q4_K)
        _quantized(w, b + "attn_v.weight", KV * HEAD_DIM, H, Q.Q6_K)
        _quantized(w, b + "attn_output.weight", H, H, Q.Q4_K)
        _quantized(w, b + "ffn_gate.weight", FF, H, Q.Q4_K)
        _quantized(w, b + "ffn_up.weight", FF, H, Q.Q4_K)
        _quantized(w, b + "ffn_down.weight", H, FF, Q.Q6_K)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path
