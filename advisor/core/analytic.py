"""The analytic estimate of any workload: one training or inference step (core/estimate.py), or generation,
prefill and decode (core/llm/generate.py). Both build on the result types of core/estimate.py; this module
chooses between them, so neither imports the other's caller."""

from __future__ import annotations

from advisor.core.estimate import Estimate, estimate_step
from advisor.core.graph import Graph
from advisor.core.llm.generate import estimate_generation
from advisor.core.llm.graph import with_attention
from advisor.core.workload import Workload


def estimate(graph: Graph, workload: Workload) -> Estimate:
    graph = with_attention(graph, workload)
    if workload.generating:
        return estimate_generation(graph, workload)
    return estimate_step(graph, workload)
