"""Dtypes of traced ops under autocast that the shown inputs alone do not decide."""

from __future__ import annotations

import torch
from torch import nn

from advisor.core.estimate import estimate
from advisor.core.workload import Workload
from advisor.importers.torch_graph import module_to_graph
from advisor.importers.torch_loader import LoadedModel


class LogitsBias(nn.Module):
    """BartForConditionalGeneration: lm_logits = lm_head(h) + final_logits_bias (a float32 buffer)."""

    def __init__(self) -> None:
        super().__init__()
        self.lm_head = nn.Linear(16, 250, bias=False)
        self.register_buffer("final_logits_bias", torch.zeros(1, 250))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.lm_head(x) + self.final_logits_bias


def test_a_float32_buffer_operand_makes_the_result_float32_under_autocast() -> None:
    loaded = LoadedModel("m", LogitsBias(), lambda b: ((torch.randn(b, 16),), {}), None, "m.py", "classification")
    graph = module_to_graph(loaded)
    add = graph.nodes[-1]
    assert add.op.kind == "opaque" and getattr(add.op, "fp32_operand", False)
    # inference at batch 4 under bf16 autocast: lm_head's bf16 logits (4 x 250 x 2 = 2,000 -> 2,048 B) and
    # the float32 sum (4 x 250 x 4 = 4,000 -> 4,096 B) are live together when the add runs
    result = estimate(graph, Workload("infer", 4, "amp_bf16"))
    rows = {r.name: r for r in result.layers}
    assert rows["lm_head"].output_bytes == 4 * 250 * 2  # the row reports the precision's dtype
    # lm_head's weight 16*250*4 = 16,000 -> 16,384 B, the loose buffer 250*4 = 1,000 -> 1,024 B (counted by the
    # add that reads it) and the input 4*16*4 = 256 -> 512 B stay; autocast keeps no cached weight cast under
    # inference_mode (PyTorch >= 2.11), so the bf16 weight copy (8,192 B) and the input's (512 B) live only while
    # lm_head runs: the peak, with its bf16 logits
    assert add.op.buffer_count([]) == 250
    assert result.memory.peak_bytes == 16_384 + 8_192 + 1_024 + 512 + 512 + 2_048
    after_add = next(p.total_bytes for p in result.timeline if p.layer == add.name)
    assert after_add == 16_384 + 1_024 + 512 + 4_096  # the float32 sum replaced the bf16 logits
