"""Optimizer state and step temporaries per parameter tensor, as each implementation allocates them.

- sgd, sgd_momentum, adam, adamw: torch.optim's foreach implementations (core/workload.py
  OPTIMIZER_STATE_SLOTS / OPTIMIZER_STEP_TEMPORARIES): 0, 1, 2, 2 parameter-sized states; Adam's step
  allocates one parameter-sized temporary per tensor, all at once (_foreach_sqrt).
- adamw8bit (bitsandbytes.optim.AdamW8bit, transformers optim="adamw_bnb_8bit"): blockwise 8-bit state
  (bitsandbytes/optim/optimizer.py Optimizer2State.init_state: state1 and state2 uint8, one fp32 absmax per
  block of 256, the dynamic quantization maps qmap1/qmap2 of 256 fp32 each); a tensor with fewer than
  min_8bit_size = 4096 elements keeps two fp32 states instead. The update is one fused kernel per tensor
  (optimizer_update_8bit_blockwise): no temporaries.
- paged_adamw8bit (bitsandbytes.optim.PagedAdamW8bit): the same state in CUDA unified memory
  (bitsandbytes GlobalPageManager, cudaMallocManaged): outside PyTorch's allocator, so not in the peak;
  pages move to system RAM under memory pressure, which the host must have.
- lion (bitsandbytes.optim.Lion, transformers optim="lion_32bit"): one fp32 state (Optimizer1State exp_avg),
  one fused kernel per tensor.
- adafactor (transformers.optimization.Adafactor, its defaults: beta1 None, so no first moment): a matrix
  keeps the factored second moment, exp_avg_sq_row (rows) and exp_avg_sq_col (columns); a vector the full
  exp_avg_sq. The step loops over tensors: `update = grad**2 + eps` and `_approx_sq_grad(...)` are two
  fp32 tensors of the parameter's size, live one tensor at a time.
"""

from __future__ import annotations

from collections.abc import Sequence

from advisor.core.workload import OPTIMIZER_STATE_SLOTS, OptimizerName

BNB_BLOCK = 256
BNB_MIN_8BIT_SIZE = 4096
BNB_PAGED_MIN_SIZE = 100_000  # get_state_buffer: smaller tensors stay in device memory even when paged
F32 = 4
PER_TENSOR_STEP = frozenset({"adafactor"})  # a Python loop over parameters, not foreach
Tensor = tuple[int, int]  # (rows, cols) of a trained tensor; cols 1 for a vector


def tensor_state_bytes(optimizer: str, rows: int, cols: int, dtype_bytes: int) -> tuple[int, ...]:
    """Bytes of each state tensor the optimizer keeps for one trained tensor of rows x cols (paged or not)."""
    numel = rows * cols
    if optimizer in (OptimizerName.ADAMW8BIT, OptimizerName.PAGED_ADAMW8BIT):
        if numel < BNB_MIN_8BIT_SIZE:
            return (numel * F32, numel * F32)
        each = numel + -(-numel // BNB_BLOCK) * F32  # uint8 state + an fp32 absmax per block
        return (each, each)
    if optimizer == OptimizerName.LION:
        return (numel * F32,)
    if optimizer == OptimizerName.ADAFACTOR:
        return ((rows + cols) * F32 if cols > 1 else numel * F32,)
    return tuple(numel * dtype_bytes for _ in range(OPTIMIZER_STATE_SLOTS[optimizer]))


def paged_out(optimizer: str, rows: int, cols: int) -> bool:
    """The tensor's state lives in unified memory, outside PyTorch's allocator (PagedAdamW8bit)."""
    return optimizer == OptimizerName.PAGED_ADAMW8BIT and rows * cols >= BNB_PAGED_MIN_SIZE


def state_blocks(optimizer: str, tensors: Sequence[Tensor], dtype_bytes: int) -> tuple[int, ...]:
    """Bytes of each optimizer-state tensor a layer allocates in device memory, summed over its trained
    tensors per state slot; dtype_bytes: the weights' dtype (torch.optim keeps its state in it)."""
    slots: list[int] = []
    for rows, cols in tensors:
        if paged_out(optimizer, rows, cols):
            continue
        for k, size in enumerate(tensor_state_bytes(optimizer, rows, cols, dtype_bytes)):
            slots += [0] * (k + 1 - len(slots))
            slots[k] += size
    return tuple(slots)


def paged_bytes(optimizer: str, tensors: Sequence[Tensor]) -> int:
    """State a paged optimizer keeps in unified memory, which may move to system RAM."""
    return sum(sum(tensor_state_bytes(optimizer, r, c, 0)) for r, c in tensors if paged_out(optimizer, r, c))


def per_tensor_step_bytes(optimizer: str, tensors: Sequence[Tensor]) -> int:
    """Adafactor's step temporaries at its largest tensor: `update` and the approximated second moment, fp32."""
    if optimizer not in PER_TENSOR_STEP:
        return 0
    return max((2 * rows * cols * F32 for rows, cols in tensors), default=0)


_NOTES = {
    "adamw8bit": "bitsandbytes AdamW8bit: two uint8 states with an fp32 absmax per block of 256 (tensors under "
    "4,096 elements keep fp32 states); one fused kernel per tensor, no step temporaries.",
    "paged_adamw8bit": "bitsandbytes PagedAdamW8bit: 8-bit states of tensors of 100,000 elements or more live in "
    "CUDA unified memory, outside PyTorch's allocator and the peak; under memory pressure the "
    "driver pages them to system RAM, which must hold them.",
    "lion": "bitsandbytes Lion (32-bit): one fp32 state per weight, one fused kernel per tensor.",
    "adafactor": "transformers Adafactor (beta1 None): factored second moments (rows + columns) for matrices, "
    "a full one for vectors; its Python loop holds two fp32 tensors of the largest parameter.",
}


def optimizer_notes(optimizer: str, training: bool) -> list[str]:
    return [_NOTES[optimizer]] if training and optimizer in _NOTES else []
