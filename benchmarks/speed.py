"""Time of one analytic estimate of a 1,000-layer network (target: under 50 ms), and of zoo models.

Run: .venv/bin/python benchmarks/speed.py
"""

from __future__ import annotations

import time

from advisor.core import zoo
from advisor.core.analytic import estimate
from advisor.core.graph import Graph, GraphBuilder
from advisor.core.ops import BatchNorm, Conv, Input, ReLU
from advisor.core.workload import Workload


def deep_network(layers: int = 1000) -> Graph:
    """conv-bn-relu triples until `layers` nodes: a plain very deep CNN."""
    b = GraphBuilder(f"deep{layers}")
    x = b.add(Input((16, 32, 32)), [], "input")
    ops = (lambda: Conv(16, 3, padding=1, bias=False), BatchNorm, lambda: ReLU(inplace_=True))
    for i in range(layers - 1):
        x = b.add(ops[i % 3](), [x])
    return b.build()


def best_of(runs: int, fn: object) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()  # type: ignore[operator]
        times.append(time.perf_counter() - start)
    return min(times)


def simulated_speed() -> None:
    """Simulated training steps (two, as the estimate runs them) with model construction, against one real
    step on the CPU. Needs torchvision and transformers; pin to 2 cores with `taskset -c 0,1`."""
    import sys
    from pathlib import Path

    import torch

    from advisor.importers.spec_estimate import simulator

    models = Path(__file__).resolve().parent / "models"
    for file, batch, real_batch, target in (("tv_resnet50.py", 32, 32, 2.0), ("hf_gpt2_1024.py", 8, 1, 8.0)):
        workload = Workload("train", batch, "fp32", "adam" if "resnet" in file else "adamw")
        start = time.perf_counter()
        simulator(str(models / file))(workload)  # the loader and simulation `advisor estimate FILE.py` runs
        simulated = time.perf_counter() - start
        real = _real_cpu_step(models / file, real_batch, workload.optimizer)
        print(
            f"{file}: simulated batch {batch} in {simulated:.2f} s (target < {target:.0f} s); one real CPU step at "
            f"batch {real_batch}: {real:.2f} s; ratio {real * batch / real_batch / simulated:.1f}x "
            f"(real step scaled to batch {batch}){'' if real_batch == batch else ', scaled linearly'}",
            file=sys.stdout,
        )
    del torch


def _real_cpu_step(path: object, batch: int, optimizer: str) -> float:
    import torch

    from advisor.importers.simulate.step import default_loss, make_optimizer
    from advisor.importers.torch_loader import load_module

    loaded = load_module(str(path))  # built on the CPU, weights initialised
    args, kwargs = loaded.example_inputs(batch)
    opt = make_optimizer(list(loaded.module.parameters()), optimizer)
    start = time.perf_counter()
    out = loaded.module(*args, **kwargs)
    loss = loaded.loss_fn(out, args or kwargs) if loaded.loss_fn else default_loss(out, (args, kwargs))
    loss.backward()
    opt.step()
    del torch
    return time.perf_counter() - start


def main() -> int:
    graph = deep_network()
    workload = Workload("train", 64, "fp32", "adam")
    seconds = best_of(5, lambda: estimate(graph, workload))
    print(f"1,000-layer network, training step estimate: {seconds * 1e3:.1f} ms (target < 50 ms)")
    for name in ("resnet50", "vit_b_16", "gpt2"):
        if name in zoo.zoo_names():
            g = zoo.build(name)
            print(f"{name} ({len(g.nodes)} layers): {best_of(3, lambda g=g: estimate(g, workload)) * 1e3:.1f} ms")
    try:
        import torchvision  # noqa: F401
        import transformers  # noqa: F401
    except ImportError:
        print("simulated estimates: skipped (needs torch, torchvision and transformers)")
        return 0
    simulated_speed()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
