"""The simulator's choice of CUDA attention kernel where values are narrower than queries (DeepSeek MLA)."""

from __future__ import annotations

import torch

from advisor.importers.simulate.attention import choose_backend, cuda_sdpa


def _qkv(v_dim: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    with torch.device("meta"):
        q, k = (torch.empty(2, 16, 512, 192, dtype=torch.bfloat16) for _ in range(2))
        return q, k, torch.empty(2, 16, 512, v_dim, dtype=torch.bfloat16)


def test_flash_needs_one_head_dim_so_mla_takes_the_memory_efficient_kernel() -> None:
    assert choose_backend(*_qkv(192), None, False) == "flash"
    # DeepSeek-V2: q and k of 128 nope + 64 rope dims, v of 128 (check_head_dim_size_flash refuses)
    assert choose_backend(*_qkv(128), None, False) == "efficient"


def test_the_output_has_the_values_head_dim() -> None:
    out = cuda_sdpa(*_qkv(128), is_causal=True)
    assert tuple(out.shape) == (2, 16, 512, 128)  # 16 heads x 128 = 2048, what o_proj reads


def test_a_boolean_mask_becomes_one_half_bias_filled_in_place() -> None:
    from advisor.importers.simulate.tracking import MemoryTracker

    q, k, v = _qkv(192)
    with torch.device("meta"):
        mask = torch.ones(2, 1, 512, 512, dtype=torch.bool)
    tracker = MemoryTracker()
    with tracker:
        before = tracker.current
        out = cuda_sdpa(q, k, v, attn_mask=mask)
    bias, output = 2 * 512 * 512 * 2, 2 * 16 * 512 * 192 * 2  # (2, 1, 512, 512) bf16; (2, 16, 512, 192) bf16
    # the bias and the output at once, but never a second bias (out-of-place masked_fill would add one)
    assert bias + output <= tracker.peak.bytes - before < 2 * bias + output
    assert tuple(out.shape) == (2, 16, 512, 192)
