"""The optimizers outside torch.optim (bitsandbytes' 8-bit AdamW, paged or not, and Lion; transformers'
Adafactor), as they allocate on the device: the simulated step ran torch.optim's AdamW for all of them, so a
FILE.py with --optimizer adamw8bit kept two fp32 states per weight where the analytic estimate kept two of
one byte (168 MB against 85 MB for a 2-layer MLP).

Their kernels need CUDA, and their numbers do not matter on the meta device: what these stand-ins keep is
what the real ones allocate, each state tensor sized as core/optimizers.py describes it (the one account of
those bytes, with its sources), created on the first step as the real ones create it (bitsandbytes
Optimizer2State.init_state and Adafactor's `if len(state) == 0`), and each step's temporaries.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

import torch

from advisor.core.optimizers import PER_TENSOR_STEP, paged_out, per_tensor_step_bytes, tensor_state_bytes

__all__ = ["StateLayoutOptimizer"]


def state_shape(optimizer: str, shape: torch.Size) -> tuple[int, int]:
    """The (rows, cols) core/optimizers.py sizes a parameter's state by. Adafactor factors every tensor of
    two or more dimensions (transformers/optimization.py Adafactor._get_options: `factored = len(shape) >=
    2`) into exp_avg_sq_row of shape[:-1] and exp_avg_sq_col of shape[:-2] + shape[-1:], whose element counts
    are these rows and cols; the others' state depends on the element count alone."""
    if optimizer in PER_TENSOR_STEP and len(shape) >= 2:
        return math.prod(shape[:-1]), math.prod(shape[:-2]) * shape[-1]
    return math.prod(shape), 1


class StateLayoutOptimizer(torch.optim.Optimizer):
    """`optimizer`'s state and step temporaries for `params`, without its arithmetic."""

    def __init__(self, params: Iterable[torch.nn.Parameter], optimizer: str) -> None:
        super().__init__(params, defaults={})
        self.name = optimizer

    @torch.no_grad()
    def step(self, closure: Callable[[], float] | None = None) -> None:  # type: ignore[override]
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    self._step_tensor(p)

    def _step_tensor(self, p: torch.Tensor) -> None:
        rows, cols = state_shape(self.name, p.shape)
        state = self.state[p]
        if not state and not paged_out(self.name, rows, cols):  # paged: in unified memory, off the allocator
            for slot, size in enumerate(tensor_state_bytes(self.name, rows, cols, p.element_size())):
                state[f"state{slot + 1}"] = torch.empty(size, dtype=torch.uint8, device=p.device)
        scratch = per_tensor_step_bytes(self.name, [(p.numel(), 1)])  # Adafactor's, freed before the next tensor
        if scratch:
            del_after = torch.empty(scratch, dtype=torch.uint8, device=p.device)
            del del_after
