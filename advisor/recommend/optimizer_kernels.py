"""The optimizer step as PyTorch's default foreach implementations run it: a handful of _foreach_* ops,
each streaming whole lists of parameter-sized tensors through multi_tensor_apply kernels.

Ops per optimizer, from torch/optim/sgd.py _multi_tensor_sgd and adam.py _multi_tensor_adam (capturable
off, the defaults), as (tensor lists the kernel walks, parameter-sized streams it reads + writes):
  sgd:          _foreach_add_(params, grads)                                   (2, 3)
  sgd_momentum: _foreach_mul_(bufs); _foreach_add_(bufs, grads); _foreach_add_(params, bufs)
  adam:         _foreach_lerp_(exp_avgs, grads); _foreach_mul_(exp_avg_sqs); _foreach_addcmul_(exp_avg_sqs,
                grads, grads); _foreach_sqrt(exp_avg_sqs); _foreach_div_; _foreach_add_(eps);
                _foreach_addcdiv_(params, exp_avgs, sqrt)
  adamw:        adam, after _foreach_mul_(params, 1 - lr x weight_decay) (weight_decay defaults to 0.01)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

_SGD = ((2, 3),)
_MOMENTUM = ((1, 2), (2, 3), (2, 3))
_ADAM = ((2, 3), (1, 2), (3, 4), (2, 2), (1, 2), (1, 2), (3, 4))
# bitsandbytes' fused per-tensor kernels (core/optimizers.py): 8-bit AdamW reads and writes the parameter,
# reads the gradient and updates two 1-byte states (about one more fp32 stream); Lion one fp32 state.
# Adafactor's Python loop runs about ten elementwise ops per tensor on fp32 temporaries.
_BNB_ADAMW8BIT = ((4, 4),)
FOREACH_OPS: dict[str, tuple[tuple[int, int], ...]] = {
    "sgd": _SGD,
    "sgd_momentum": _MOMENTUM,
    "adam": _ADAM,
    "adamw": ((1, 2), *_ADAM),
    "adamw8bit": _BNB_ADAMW8BIT,
    "paged_adamw8bit": _BNB_ADAMW8BIT,
    "lion": ((3, 5),),
    "adafactor": tuple((2, 3) for _ in range(10)),
}

# multi_tensor_apply (aten/src/ATen/native/cuda/MultiTensorApply.cuh): one launch takes at most
# depth_to_max_tensors[depth - 1] tensors and 320 blocks of 65,536-element chunks.
MAX_TENSORS_PER_LAUNCH = (110, 64, 48, 36, 30)
MAX_BLOCKS_PER_LAUNCH = 320
CHUNK_ELEMENTS = 65_536
# Host time of one _foreach_* call (Python, dispatcher, grouping the lists) and per tensor in it (the
# per-tensor checks and metadata packing of multi_tensor_apply, and Adam's Python bias corrections).
# Estimates from PyTorch profiler traces: ~20 us per call, ~1 us per tensor.
FOREACH_CALL_HOST_SECONDS = 20e-6
FOREACH_TENSOR_HOST_SECONDS = 1e-6


@dataclass(frozen=True)
class OptimizerWork:
    moved_bytes: int
    kernels: int
    host_seconds: float


NO_OPTIMIZER = OptimizerWork(0, 0, 0.0)  # inference, or layers timed without the optimizer step


def _launches(depth: int, tensors: int, params: int) -> int:
    chunks = params / CHUNK_ELEMENTS + tensors / 2  # the last chunk of every tensor is partial
    by_tensors = math.ceil(tensors / MAX_TENSORS_PER_LAUNCH[min(depth, 5) - 1])
    return max(by_tensors, math.ceil(chunks / MAX_BLOCKS_PER_LAUNCH), 1)


def optimizer_work(optimizer: str, params: int, tensors: int, dtype_bytes: int) -> OptimizerWork:
    ops = FOREACH_OPS[optimizer]
    tensors = max(tensors, 1)
    moved = sum(streams for _, streams in ops) * params * dtype_bytes
    kernels = sum(_launches(depth, tensors, params) for depth, _ in ops)
    host = len(ops) * FOREACH_CALL_HOST_SECONDS + len(ops) * tensors * FOREACH_TENSOR_HOST_SECONDS
    return OptimizerWork(moved, kernels, host)
