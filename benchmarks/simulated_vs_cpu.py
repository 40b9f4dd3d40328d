"""The simulated step against the same step run for real on the CPU with plain PyTorch (no dispatch mode).

Only where CPU kernels allocate as CUDA's do: fp32 and no attention (the CPU picks other scaled-dot-product
kernels, CPU autocast follows other op lists and its bf16 matmuls take workspaces). The real step's
allocations come from the profiler's memory events (profile_memory=True), each rounded up to the CUDA
caching allocator's 512-byte block; their peak over the second iteration stands for
torch.cuda.max_memory_allocated(). Plain PyTorch adds a gradient's repeated arrivals in place, so these
models check simulate/accumulation.py: a tensor read a slice at a time (the toy scan), a weight used twice,
a residual stream, and the tiny transformers Mamba (tests/importers/hf_corpus.py), whose selective scan
reads two tensors a slice at a time. Options: --only NAME, --batch N (else each model's own).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import torch
from torch import nn
from torch.profiler import ProfilerActivity, profile, record_function

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from advisor.core.tracker import rounded
from advisor.core.workload import Workload
from advisor.importers.simulate import simulate_estimate
from advisor.importers.simulate.step import Inputs, default_loss, make_optimizer
from tests.importers.test_torch_graph_slices import Scan

Model = tuple[Callable[[], nn.Module], Callable[[int], Inputs], int]  # build, inputs, default batch


class Twice(nn.Module):
    """One weight used twice: its gradient arrives at AccumulateGrad from both products."""

    def __init__(self) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.randn(512, 512) / 32)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(x @ self.weight) @ self.weight


class Residual(nn.Module):
    """x + f(x) four times: each block input's gradient arrives through the skip and through f."""

    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.ModuleList(
            nn.Sequential(nn.Linear(512, 1024), nn.GELU(), nn.Linear(1024, 512)) for _ in range(4)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for block in self.blocks:
            x = x + block(x)
        return x


def _mamba() -> Model:
    from advisor.importers.torch_loader import load_module
    from tests.importers.hf_corpus import FAMILIES, write_config

    family = next(f for f in FAMILIES if f.name == "mamba")
    loaded = load_module(f"hf:{write_config(family, Path(tempfile.mkdtemp()))}", seq_len=128)

    def build() -> nn.Module:  # the loader builds on the meta device; to_empty unties the LM head
        module = loaded.module.to_empty(device="cpu")
        module.tie_weights()
        with torch.no_grad():
            for param in module.parameters():
                param.normal_(0, 0.02)
        return module

    return build, loaded.train_inputs or loaded.example_inputs, 4


MODELS: dict[str, Callable[[], Model]] = {
    "scan": lambda: (Scan, lambda b: ((torch.randn(b, 8, 256),), {}), 64),
    "twice": lambda: (Twice, lambda b: ((torch.randn(b, 512),), {}), 64),
    "residual": lambda: (Residual, lambda b: ((torch.randn(b, 512),), {}), 64),
    "mamba": _mamba,
}


def cpu_peak_bytes(build: Callable[[], nn.Module], make_inputs: Callable[[int], Inputs], batch: int) -> int:
    """Peak allocated bytes over the second of two real SGD steps, every allocation rounded to 512 B."""
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        module = build().train()  # built inside: its weights are allocations the peak includes
        optimizer = make_optimizer(list(module.parameters()), "sgd")
        args, kwargs = make_inputs(batch)
        for iteration in range(2):
            with record_function(f"iteration{iteration}"):
                optimizer.zero_grad(set_to_none=True)
                out = module(*args, **kwargs)
                loss = default_loss(out, (args, kwargs))
                loss.backward()
                optimizer.step()
                del out, loss
    events = sorted(prof.profiler.kineto_results.events(), key=lambda e: e.start_ns())
    measured_from = next(e.start_ns() for e in events if e.name() == "iteration1")
    current = peak = 0
    for event in events:
        if event.name() == "[memory]" and event.device_type() == torch.autograd.DeviceType.CPU:
            size = event.nbytes()
            current += rounded(size) if size > 0 else -rounded(-size)
            if event.start_ns() >= measured_from:
                peak = max(peak, current)
    return peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="")
    parser.add_argument("--batch", type=int, default=0, help="default: each model's own")
    args = parser.parse_args()
    print(f"{'model':<10} {'batch':>5} {'CPU step MiB':>13} {'simulated MiB':>14} {'diff %':>8}")
    for name, model in MODELS.items():
        if args.only not in name:
            continue
        build, make_inputs, batch = model()
        batch = args.batch or batch
        torch.manual_seed(0)
        real = cpu_peak_bytes(build, make_inputs, batch)
        simulated = simulate_estimate(
            build(), make_inputs, Workload("train", batch, "fp32", "sgd"), None, name
        ).memory.peak_bytes
        diff = 100 * (simulated / real - 1)
        print(f"{name:<10} {batch:>5} {real / 2**20:>13.2f} {simulated / 2**20:>14.2f} {diff:>+8.1f}")


if __name__ == "__main__":
    main()
