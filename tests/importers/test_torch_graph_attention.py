"""Traced scaled-dot-product attention is the fused CUDA kernel: its output layout and what it keeps."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from advisor.core.graph import Graph
from advisor.core.replay import replay_step
from advisor.core.workload import Workload
from advisor.importers.torch_graph import module_to_graph
from advisor.importers.torch_loader import LoadedModel

SEQ, HEADS, HEAD_DIM = 64, 4, 16
HIDDEN = HEADS * HEAD_DIM


class SelfAttention(nn.Module):
    """transformers' sdpa_attention_forward: (B, L, H, D) views transposed in, transpose(1, 2).contiguous()
    out (integrations/sdpa_attention.py)."""

    def __init__(self) -> None:
        super().__init__()
        self.q, self.k, self.v = (nn.Linear(HIDDEN, HIDDEN) for _ in range(3))
        self.out = nn.Linear(HIDDEN, HIDDEN)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b = x.shape[0]
        q, k, v = (f(x).view(b, SEQ, HEADS, HEAD_DIM).transpose(1, 2) for f in (self.q, self.k, self.v))
        attended = F.scaled_dot_product_attention(q, k, v)
        return self.out(attended.transpose(1, 2).contiguous().reshape(b, SEQ, HIDDEN))


def _graph() -> tuple[list[str], Graph]:
    loaded = LoadedModel(
        "m", SelfAttention(), lambda b: ((torch.randn(b, SEQ, HIDDEN),), {}), None, "m.py", "classification"
    )
    graph = module_to_graph(loaded)
    return [n.op.kind for n in graph.nodes], graph


def test_the_fused_kernel_output_needs_no_copy_to_be_read_back() -> None:
    kinds, graph = _graph()
    # CUDA's flash and memory-efficient kernels write (B, L, H, D), so .contiguous() after the transpose
    # returns its input: no opaque copy between the attention and the output projection
    assert "sdpa" in kinds and "opaque" not in kinds
    sdpa = next(n for n in graph.nodes if n.op.kind == "sdpa")
    assert sdpa.output.shape == (HEADS, SEQ, HEAD_DIM)
    # per sample: QK^T and PV, 4 heads x 64 x 64 x (16 + 16) = 524,288 multiply-adds
    assert sdpa.op.forward_macs(graph.input_specs(sdpa), sdpa.output) == 4 * 64 * 64 * 32


def test_the_kernel_keeps_its_output_and_a_float32_log_sum_exp() -> None:
    _, graph = _graph()
    kept = replay_step(graph, Workload("train", 2, "amp_bf16", "sgd")).kept_bytes
    index = next(i for i, n in enumerate(graph.nodes) if n.op.kind == "sdpa")
    # its bf16 output 2 x 4 x 64 x 16 x 2 = 16,384 B and log-sum-exp 2 x 4 x 64 x 4 = 2,048 B (q, k, v are
    # the projections' outputs, counted where they are made)
    assert kept[index] == 16_384 + 2_048
