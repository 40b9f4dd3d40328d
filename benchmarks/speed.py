"""Time of one analytic estimate of a 1,000-layer network (target: under 50 ms), and of zoo models.

Run: .venv/bin/python benchmarks/speed.py
"""

from __future__ import annotations

import time

from advisor.core import zoo
from advisor.core.estimate import estimate
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


def main() -> int:
    graph = deep_network()
    workload = Workload("train", 64, "fp32", "adam")
    seconds = best_of(5, lambda: estimate(graph, workload))
    print(f"1,000-layer network, training step estimate: {seconds * 1e3:.1f} ms (target < 50 ms)")
    for name in ("resnet50", "vit_b_16", "gpt2"):
        if name in zoo.zoo_names():
            g = zoo.build(name)
            print(f"{name} ({len(g.nodes)} layers): {best_of(3, lambda g=g: estimate(g, workload)) * 1e3:.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
