"""SPEC -> estimate by the right method: PyTorch modules are simulated, the rest analytic."""

import json
from pathlib import Path

import pytest

pytest.importorskip("torch")

from advisor.cli import main
from advisor.core.errors import SpecError
from advisor.core.workload import Workload
from advisor.core.zoo.seed import mlp
from advisor.importers.spec_estimate import estimate_spec
from advisor.recommend.prepare import prepare_spec

MODEL = """
import torch
from torch import nn

def build_model():
    return nn.Sequential(nn.Flatten(), nn.Linear(784, 4096), nn.ReLU(), nn.Linear(4096, 4096), nn.ReLU(),
                         nn.Linear(4096, 10))

def example_inputs(batch_size):
    return (torch.randn(batch_size, 1, 28, 28),)
"""


@pytest.fixture
def model_file(tmp_path: Path) -> Path:
    path = tmp_path / "mlp.py"
    path.write_text(MODEL)
    return path


def test_a_module_file_is_simulated_and_agrees_with_the_zoo_twin(model_file: Path) -> None:
    workload = Workload("train", 256, "fp32", "adam")
    simulated = estimate_spec(str(model_file), workload)
    analytic = estimate_spec(str(model_file), workload, method="analytic")
    assert (simulated.method, analytic.method) == ("simulated", "analytic")
    assert simulated.param_count == analytic.param_count == mlp().param_count == 20037642
    # seed:mlp measured 401,570,816 B on the H200; both paths land within 1% of each other
    assert abs(simulated.memory.peak_bytes / analytic.memory.peak_bytes - 1) < 0.01


def test_simulated_memory_curve_sees_where_activations_take_over(model_file: Path) -> None:
    job = prepare_spec(str(model_file), Workload("train", 256, "fp32", "adam"))
    small, large = job.curve.peak_bytes(256), job.curve.peak_bytes(100_000)
    assert large > 10 * small  # the optimizer step sets the peak at 256, activations at 100,000
    budget = 8 * 2**30
    best = job.curve.max_batch(budget)
    assert job.curve.peak_bytes(best) <= budget < job.curve.peak_bytes(best + 1)


def test_only_modules_can_be_simulated() -> None:
    with pytest.raises(SpecError, match="only PyTorch modules"):
        estimate_spec("zoo:resnet18", Workload(), method="simulated")


def test_cli_reports_the_method(model_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # in this process: a subprocess spent 3-10 s importing torch again to print the same JSON
    assert main(["estimate", str(model_file), "--batch", "64", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["method"] == "simulated"


TOKEN_MODEL = """
import torch
from torch import nn


def build_model():
    return nn.Sequential(nn.Embedding(100, 8), nn.Flatten(), nn.Linear(16 * 8, 4))


def example_inputs(batch_size):
    return (torch.randint(0, 100, (batch_size, 16)),)
"""


def test_a_simulated_sequence_model_counts_tokens_as_the_analytic_path_does(tmp_path: Path) -> None:
    """Token ids of shape (batch, 16) in: 16 tokens per sample, so throughput is in tokens/s."""
    path = tmp_path / "tokens.py"
    path.write_text(TOKEN_MODEL)
    job = prepare_spec(str(path), Workload("train", 4, "fp32", "sgd"))
    assert job.estimate.method == "simulated"
    assert job.work.tokens_per_sample == 16


META_REFUSING_MODEL = """
import torch
from torch import nn


class NeedsValues(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        y = self.fc(x)
        if y.device.type == "meta":
            raise RuntimeError("needs values")
        return y


def build_model():
    return NeedsValues()


def example_inputs(batch_size):
    return (torch.randn(batch_size, 8),)
"""


def test_a_step_the_meta_device_cannot_follow_falls_back_to_the_graph_for_the_estimate_and_the_ranking(
    tmp_path: Path,
) -> None:
    path = tmp_path / "needs_values.py"
    path.write_text(META_REFUSING_MODEL)
    workload = Workload("train", 4, "fp32", "sgd")
    estimate, job = estimate_spec(str(path), workload), prepare_spec(str(path), workload)
    assert estimate.method == job.estimate.method == "analytic"
    assert "estimated analytically instead" in estimate.assumptions[-1]
    assert estimate.param_count == 8 * 4 + 4  # the linear layer's weight and bias
    assert job.estimate.memory == estimate.memory  # one answer for `estimate` and `recommend`
    with pytest.raises(SpecError, match="needs values"):  # a method the user forced is not replaced
        estimate_spec(str(path), workload, method="simulated")
