"""CPU offload of model state during training (--offload), as DeepSpeed and FSDP do it on one card.

- optimizer (DeepSpeed ZeRO-Offload, zero_optimization.offload_optimizer.device "cpu"): the fp32 master
  weights, the optimizer state and the fp32 gradients live in system RAM and DeepSpeedCPUAdam steps there;
  the GPU keeps the 16-bit weights the forward and backward use (under bf16/fp16 training; fp32 weights in
  fp32 training) and streams each layer's gradients out through one reduce bucket (reduce_bucket_size,
  default 5e8 elements; deepspeed/runtime/zero/config.py).
- params (ZeRO-3 offload_param / FSDP CPUOffload(offload_params=True)): the weights too live in system RAM;
  each layer's are brought to the GPU for its forward and its backward (two layer-sized buffers in flight,
  as the zero3 plan counts them), and its gradients leave as they are made.
System RAM needed: per trained weight 4 (fp32 master) + 4 (fp32 gradient) + the optimizer state; with
params offloaded the 16-bit copy as well. Pinned staging buffers are not counted.
"""

from __future__ import annotations

from advisor.core.workload import Offload, Workload

REDUCE_BUCKET_ELEMENTS = 500_000_000
F32 = 4


def gpu_weight_dtype_bytes(w: Workload) -> int:
    """Bytes per weight the GPU keeps when the optimizer is offloaded: the compute dtype's."""
    return w.activation_bytes


def bucket_bytes(w: Workload, trainable: int) -> int:
    """The one gradient bucket on the GPU: the gradients of up to 5e8 weights, in the compute dtype."""
    return min(trainable, REDUCE_BUCKET_ELEMENTS) * gpu_weight_dtype_bytes(w)


def host_bytes(w: Workload, params: int, trainable: int, state_bytes_per_weight: float) -> int:
    """System RAM the offloaded state takes: master weights, gradients and optimizer state of the trained
    weights in fp32, and with params offloaded every weight's compute-dtype copy."""
    if w.offload is None or not w.training:
        return 0
    held = trainable * (2 * F32 + state_bytes_per_weight)
    if w.offload == Offload.PARAMS:
        held += params * gpu_weight_dtype_bytes(w)
    return round(held)


def offload_notes(w: Workload, host: int) -> list[str]:
    if w.offload is None or not w.training:
        return []
    where = {
        "optimizer": "optimizer state, fp32 master weights and gradients (DeepSpeed ZeRO-Offload)",
        "params": "weights, gradients and optimizer state (ZeRO-3 offload_param / FSDP CPUOffload)",
    }
    return [
        f"Offload: {where[w.offload]} in system RAM, {host / 2**30:.1f} GiB of it; the GPU keeps the "
        "compute-dtype weights it needs and one 5e8-element gradient bucket."
    ]
