"""Small model files written in tests: each importer gets a valid seed (for the checks and the fuzzer)."""

from __future__ import annotations

import json
import struct
from pathlib import Path

TINY_CNN = """
import torch
from torch import nn


class TinyCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.relu = nn.ReLU(inplace=True)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.token = nn.Parameter(torch.zeros(8))
        self.fc = nn.Linear(8, 10)

    def forward(self, x):
        y = self.relu(self.bn(self.conv(x)))
        y = torch.flatten(self.pool(y), 1) + self.token
        return self.fc(y)


def build_model():
    return TinyCNN()


def example_inputs(batch_size):
    return (torch.randn(batch_size, 3, 16, 16),)
"""
# conv 8*3*3*3 + 8 = 224; bn 2*8 = 16; token 8; fc 8*10 + 10 = 90 -> 338
TINY_CNN_PARAMS = 224 + 16 + 8 + 90


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def safetensors_bytes(tensors: dict[str, tuple[str, list[int]]], sizes: dict[str, int] | None = None) -> bytes:
    """A safetensors file with zero-filled data: name -> (dtype, shape)."""
    dtype_bytes = {"F32": 4, "F16": 2, "BF16": 2, "I64": 8}
    header, offset = {}, 0
    for name, (dtype, shape) in tensors.items():
        n = dtype_bytes[dtype]
        for d in shape:
            n *= d
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + n]}
        offset += n
    raw = json.dumps(header).encode()
    return struct.pack("<Q", len(raw)) + raw + bytes(offset)


GPT2_TINY_CONFIG = {"model_type": "gpt2", "n_embd": 16, "n_layer": 2, "n_head": 2, "vocab_size": 100, "n_positions": 32}


def gpt2_tiny_tensors() -> dict[str, tuple[str, list[int]]]:
    """HF GPT2Model names and shapes for GPT2_TINY_CONFIG (Conv1D weights are (in, out))."""
    h, v, p = 16, 100, 32
    t: dict[str, tuple[str, list[int]]] = {"wte.weight": ("F32", [v, h]), "wpe.weight": ("F32", [p, h])}
    for i in range(2):
        b = f"h.{i}."
        t |= {
            b + "ln_1.weight": ("F32", [h]),
            b + "ln_1.bias": ("F32", [h]),
            b + "attn.c_attn.weight": ("F32", [h, 3 * h]),
            b + "attn.c_attn.bias": ("F32", [3 * h]),
            b + "attn.c_proj.weight": ("F32", [h, h]),
            b + "attn.c_proj.bias": ("F32", [h]),
            b + "ln_2.weight": ("F32", [h]),
            b + "ln_2.bias": ("F32", [h]),
            b + "mlp.c_fc.weight": ("F32", [h, 4 * h]),
            b + "mlp.c_fc.bias": ("F32", [4 * h]),
            b + "mlp.c_proj.weight": ("F32", [4 * h, h]),
            b + "mlp.c_proj.bias": ("F32", [h]),
        }
    return t | {"ln_f.weight": ("F32", [h]), "ln_f.bias": ("F32", [h])}


def write_gpt2_safetensors(directory: Path) -> Path:
    (directory / "config.json").write_text(json.dumps(GPT2_TINY_CONFIG))
    path = directory / "model.safetensors"
    path.write_bytes(safetensors_bytes(gpt2_tiny_tensors()))
    return path


def onnx_mlp_bytes() -> bytes:
    """Gemm(4 -> 8) + Relu + Gemm(8 -> 3) with a symbolic batch, built with onnx.helper (no torch)."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    inits = [
        numpy_helper.from_array(np.zeros(s, np.float32), n)
        for n, s in (("w1", (8, 4)), ("b1", (8,)), ("w2", (3, 8)), ("b2", (3,)))
    ]
    nodes = [
        helper.make_node("Gemm", ["x", "w1", "b1"], ["h"], name="fc1", transB=1),
        helper.make_node("Relu", ["h"], ["r"], name="relu"),
        helper.make_node("Gemm", ["r", "w2", "b2"], ["y"], name="fc2", transB=1),
    ]
    graph = helper.make_graph(
        nodes,
        "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 3])],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    return bytes(model.SerializeToString())


ONNX_MLP_PARAMS = 8 * 4 + 8 + 3 * 8 + 3  # 67
