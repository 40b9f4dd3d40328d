"""Host cost of dispatching one eager PyTorch module call on this machine's CPU: under torch.inference_mode (how
measure_gpu.py runs inference), under torch.no_grad, and with autograd recording (a training forward), and
the backward per autograd node. The Python and dispatcher side of an op is the same code in CPU and CUDA
builds; the tensors here are tiny so the CPU kernels cost next to nothing, but the CUDA side (cudaLaunchKernel,
the caching allocator, cuDNN/cuBLAS handles) is absent, so these are lower bounds of the per-op host time on
a GPU host, and the difference between the modes is what carries over.

It answers one question the time model needs: how much cheaper is an inference op than a training op?
Run: .venv/bin/python benchmarks/host_dispatch.py [--csv benchmarks/data/host_dispatch_cpu.csv]
"""

from __future__ import annotations

import csv
import platform
import sys
import time
from collections.abc import Callable

import torch
from torch import nn

CHAIN = 200  # modules per chain: the per-call cost is the chain's time over its length
REPEATS = 30  # best of: the machine is shared, the minimum is the undisturbed cost

MODULES: dict[str, tuple[Callable[[], nn.Module], tuple[int, ...]]] = {
    "relu": (nn.ReLU, (4,)),
    "linear": (lambda: nn.Linear(4, 4), (1, 4)),
    "layernorm": (lambda: nn.LayerNorm(4), (1, 4)),
    "conv2d": (lambda: nn.Conv2d(4, 4, 1), (1, 4, 1, 1)),
    "batchnorm2d": (lambda: nn.BatchNorm2d(4), (2, 4, 1, 1)),
}


def _best_us_per_call(run: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(REPEATS):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best / CHAIN * 1e6


def measure(kind: str) -> dict[str, float]:
    make, shape = MODULES[kind]
    chain = nn.Sequential(*[make() for _ in range(CHAIN)])
    x = torch.randn(*shape)
    chain.eval()
    with torch.inference_mode():
        inference = _best_us_per_call(lambda: chain(x))
    with torch.no_grad():
        no_grad = _best_us_per_call(lambda: chain(x))
    chain.train()
    xg = x.clone().requires_grad_()
    forward = _best_us_per_call(lambda: chain(xg))
    both = _best_us_per_call(lambda: chain(xg).sum().backward())
    return {
        "inference_mode_us": inference,
        "no_grad_us": no_grad,
        "autograd_forward_us": forward,
        "backward_us": both - forward,
    }


def main() -> int:
    torch.set_num_threads(1)
    rows = []
    print(f"torch {torch.__version__}, {platform.processor() or platform.machine()}, 1 thread; us per call")
    print(f"{'module':12} {'inference':>10} {'no_grad':>8} {'autograd':>9} {'backward':>9} {'infer/train':>12}")
    for kind in MODULES:
        m = measure(kind)
        share = m["inference_mode_us"] / m["autograd_forward_us"]
        print(
            f"{kind:12} {m['inference_mode_us']:10.2f} {m['no_grad_us']:8.2f} {m['autograd_forward_us']:9.2f} "
            f"{m['backward_us']:9.2f} {share:12.2f}"
        )
        rows.append({"module": kind, **{k: round(v, 2) for k, v in m.items()}, "torch": torch.__version__})
    if "--csv" in sys.argv:
        with open(sys.argv[sys.argv.index("--csv") + 1], "w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
