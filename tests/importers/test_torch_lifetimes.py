"""The traced graph keeps a tensor as long as the model's Python code references it (torch_lifetimes.py)."""

from __future__ import annotations

import torch
from torch import nn

from advisor.core.analytic import estimate
from advisor.core.graph import HELD_TO_END
from advisor.core.workload import Workload
from advisor.importers.torch_graph import module_to_graph
from advisor.importers.torch_loader import LoadedModel
from tests.importers.test_torch_graph_dtypes import ClassToken


class KeepsEmbedding(nn.Module):
    """Like BertModel.forward: the embedding output stays in a local while the layers after it run."""

    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Linear(16, 32)
        self.one = nn.Linear(32, 32)
        self.two = nn.Linear(32, 32)
        self.three = nn.Linear(32, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        embedded = self.embed(x)
        hidden = self.two(torch.relu(self.one(embedded)))
        return self.three(hidden)


class ReturnsTwo(nn.Module):
    """Like a seq2seq model returning encoder_last_hidden_state beside the logits."""

    def __init__(self) -> None:
        super().__init__()
        self.encoder = nn.Linear(16, 32)
        self.head = nn.Linear(32, 8)

    def forward(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        encoded = self.encoder(x)
        return {"logits": self.head(torch.relu(encoded)), "encoder_last_hidden_state": encoded}


def _loaded(module: nn.Module) -> LoadedModel:
    return LoadedModel("m", module, lambda b: ((torch.randn(b, 16),), {}), None, "m.py", "classification")


def test_a_local_variable_holds_its_tensor_until_the_forward_returns() -> None:
    graph = module_to_graph(_loaded(KeepsEmbedding()))
    names = [n.name for n in graph.nodes]
    # embed's only reader is `one`, but the local `embedded` lives until `three` has run
    assert (names.index("embed"), names.index("three")) in graph.holds
    # inference at batch 4, fp32, every tensor one 512 B block: weights and biases per layer, rounded to
    # 512 B: embed (16*32+32)*4 = 2,176 -> 2,560; one and two (32*32+32)*4 = 4,224 -> 4,608; three
    # (32*8+8)*4 = 1,056 -> 1,536; 13,312 in all. While `two` runs: the input, embed's output (held),
    # relu's and two's outputs = 4 x 512; without the hold embed's output is freed once `one` has read it
    peak = estimate(graph, Workload("infer", 4, "fp32")).memory.peak_bytes
    assert peak == 2_560 + 2 * 4_608 + 1_536 + 4 * 512
    plain = type(graph)(graph.name, graph.nodes, graph.task)
    assert estimate(plain, Workload("infer", 4, "fp32")).memory.peak_bytes == 13_312 + 3 * 512


def test_a_returned_tensor_is_held_to_the_end_of_the_step() -> None:
    graph = module_to_graph(_loaded(ReturnsTwo()))
    names = [n.name for n in graph.nodes]
    assert (names.index("encoder"), HELD_TO_END) in graph.holds


def test_holds_survive_the_loss_head_and_change_no_graph_comparison() -> None:
    graph = module_to_graph(_loaded(KeepsEmbedding()))
    from advisor.core.loss_head import with_loss_head

    assert with_loss_head(graph).holds == graph.holds
    assert type(graph)(graph.name, graph.nodes, graph.task) == graph  # holds are not part of equality


def test_tracing_keeps_no_module_alive() -> None:
    import gc
    import weakref

    with torch.device("meta"):  # as hf: models are built: the expanded view shares the parameter's storage
        module = ClassToken()  # a view of a parameter among the traced outputs
    alive = weakref.ref(module)
    module_to_graph(LoadedModel("m", module, lambda b: ((torch.randn(b, 4, 16),), {}), None, "m.py", "classification"))
    del module
    gc.collect()
    # the lifetime pass's finalizers hold only small records, so the module (and its weights) can go
    assert alive() is None
