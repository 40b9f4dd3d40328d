"""Every family of the tiny transformers corpus (hf_corpus.py) estimates through hf:CONFIG.json, in training
and inference, simulated and analytic, and as a FILE.py, each with the exact parameter count: the simulated
count is sum(p.numel() for p in model.parameters()) of the model built on the meta device, and the analytic
graph and the FILE.py must give the same. One sample of 16 tokens keeps each run well under a second."""

from __future__ import annotations

from pathlib import Path

import pytest

from advisor.core.workload import Workload
from advisor.importers.spec_estimate import estimate_spec, simulator
from tests.importers.hf_corpus import FAMILIES, Family, write_config, write_model_file

SEQ_LEN = 16


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.name)
def test_family_estimates_every_way_with_the_exact_parameter_count(family: Family, tmp_path: Path) -> None:
    spec = f"hf:{write_config(family, tmp_path)}"
    run = simulator(spec, SEQ_LEN)  # the model is loaded once for both modes
    train, infer = run(Workload("train", 1)), run(Workload("infer", 1))
    analytic = estimate_spec(spec, Workload("train", 1), seq_len=SEQ_LEN, method="analytic")
    from_file = estimate_spec(str(write_model_file(family, tmp_path, SEQ_LEN)), Workload("train", 1))
    params = train.param_count
    assert (infer.param_count, analytic.param_count, from_file.param_count) == (params, params, params)
    # training holds at least the weights, their gradients and Adam's two moments: 4 x 4 bytes a parameter
    for est in (train, analytic, from_file):
        assert est.memory.peak_bytes >= 16 * params
    assert infer.memory.peak_bytes >= 4 * params
    assert infer.memory.peak_bytes < train.memory.peak_bytes
