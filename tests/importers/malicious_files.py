"""Model files built to attack the importers, shared by tests/importers/test_safety.py and
benchmarks/fuzz_importers.py (which mutates them too)."""

from __future__ import annotations

import io

import torch


class OverwritesOnLoad(torch.nn.Module):
    """Its __setstate__ (run by torch.jit.load) maps `victim` shared and copies "AAAAAAAA" into it."""

    def __init__(self, victim: str) -> None:
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(4, 2))
        self.victim = victim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x @ self.weight

    @torch.jit.export
    def __getstate__(self) -> tuple[torch.Tensor, bool, str]:
        return (self.weight, self.training, self.victim)

    @torch.jit.export
    def __setstate__(self, state: tuple[torch.Tensor, bool, str]) -> None:
        mapped = torch.from_file(state[2], shared=True, size=8, dtype=torch.uint8)
        mapped.copy_(torch.full([8], 65, dtype=torch.uint8))
        self.weight = state[0] + mapped[0].to(torch.float32) * 0  # uses the map, so it is not optimised away
        self.training = state[1]
        self.victim = state[2]


def overwriting_torchscript(victim: str) -> bytes:
    """A TorchScript archive that overwrites the first 8 bytes of `victim` with "A" when loaded."""
    buffer = io.BytesIO()
    torch.jit.save(torch.jit.script(OverwritesOnLoad(victim)), buffer)
    return buffer.getvalue()
