"""The optimizers outside torch.optim in the simulated step (importers/simulate/optimizers.py): each keeps the
state its library allocates, so `advisor estimate FILE.py --optimizer X` (simulated by default) and the layer
graph agree. The step used to run torch.optim's AdamW for every one of them."""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

from advisor.core import zoo  # noqa: E402
from advisor.core.analytic import estimate  # noqa: E402
from advisor.core.workload import Workload  # noqa: E402
from advisor.importers.simulate import simulate_estimate  # noqa: E402
from advisor.importers.simulate.optimizers import state_shape  # noqa: E402
from advisor.importers.spec_estimate import simulator  # noqa: E402

SEED_MLP = Path(__file__).resolve().parents[2] / "benchmarks" / "models" / "seed_mlp.py"


def _linear_state(optimizer: str) -> int:
    with torch.device("meta"):
        model = nn.Linear(1024, 1024, bias=False)
    est = simulate_estimate(
        model,
        lambda batch: ((torch.randn(batch, 1024),), {}),
        Workload("train", 8, "fp32", optimizer),
        lambda out, _: out.sum(),
    )
    return est.memory.at_peak.optimizer_state


def test_each_optimizer_keeps_its_librarys_state() -> None:
    n = 1024 * 1024
    # bitsandbytes AdamW8bit: two uint8 states and an fp32 absmax per block of 256: 2 x (n + n/256 x 4)
    assert _linear_state("adamw8bit") == 2 * (n + n // 256 * 4) == 2_129_920
    assert _linear_state("paged_adamw8bit") == 0  # in unified memory, outside PyTorch's allocator
    assert _linear_state("lion") == n * 4  # one fp32 state
    assert _linear_state("adafactor") == (1024 + 1024) * 4  # factored: a row and a column of fp32
    assert _linear_state("adamw") == 2 * n * 4  # torch.optim's, unchanged


def test_adafactor_factors_every_tensor_of_two_or_more_dimensions() -> None:
    # transformers' exp_avg_sq_row of shape[:-1] and exp_avg_sq_col of shape[:-2] + shape[-1:]: a conv
    # weight 64 x 32 x 3 x 3 keeps 64*32*3 = 6,144 and 64*32*3 = 6,144 elements
    assert state_shape("adafactor", torch.Size([64, 32, 3, 3])) == (6_144, 6_144)
    assert state_shape("adafactor", torch.Size([512])) == (512, 1)
    assert state_shape("adamw8bit", torch.Size([64, 32, 3, 3])) == (18_432, 1)


@pytest.mark.parametrize("optimizer", ["adamw8bit", "paged_adamw8bit", "lion", "adafactor"])
def test_simulated_and_analytic_agree_for_every_optimizer(optimizer: str) -> None:
    workload = Workload("train", 64, "fp32", optimizer)  # type: ignore[arg-type]
    simulated = simulator(str(SEED_MLP))(workload)  # what `advisor estimate FILE.py` runs
    analytic = estimate(zoo.build("seed:mlp"), workload)
    # the same bytes, each of the MLP's four state-holding tensors (two weights, two biases) rounded up to the
    # caching allocator's 512-byte blocks in the simulation
    simulated_state, analytic_state = simulated.memory.at_peak.optimizer_state, analytic.memory.at_peak.optimizer_state
    assert 0 <= simulated_state - analytic_state <= 2 * 4 * 512
    assert simulated.memory.peak_bytes == pytest.approx(analytic.memory.peak_bytes, rel=0.02)
