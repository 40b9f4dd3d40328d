"""Every family of the tiny transformers corpus (hf_corpus.py) estimates through hf:CONFIG.json, in training
and inference, simulated and analytic, each with the exact parameter count: the simulated count is
sum(p.numel() for p in model.parameters()) of the model built on the meta device, and the analytic graph
must give the same. One sample of 16 tokens keeps each run well under a second.

The same model as a FILE.py (build_model() and example_inputs()) is estimated for one family per way
hf_corpus writes its inputs, not for every family: past the inputs, a FILE.py's model is the class the
config names, built from the same config and simulated by the same step as the hf: run above, so the other
families repeated that simulation (about 40% of this module's time) without reaching other code."""

from __future__ import annotations

from pathlib import Path

import pytest

from advisor.core.workload import Workload
from advisor.importers.spec_estimate import estimate_spec, simulator
from tests.importers.hf_corpus import FAMILIES, Family, write_config, write_model_file

SEQ_LEN = 16
# one family per branch of hf_corpus._inputs_source (and per kind): a decoder's and a masked-LM encoder's
# input_ids with labels, a sequence classifier's class labels, a seq2seq model's decoder_input_ids,
# Whisper's input_features, a vision model's pixel_values; and one mixture of experts
AS_FILE = ("llama", "mixtral", "bert", "roberta", "t5", "whisper", "vit")


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.name)
def test_family_estimates_every_way_with_the_exact_parameter_count(family: Family, tmp_path: Path) -> None:
    spec = f"hf:{write_config(family, tmp_path)}"
    run = simulator(spec, SEQ_LEN)  # the model is loaded once for both modes
    train, infer = run(Workload("train", 1)), run(Workload("infer", 1))
    analytic = estimate_spec(spec, Workload("train", 1), seq_len=SEQ_LEN, method="analytic")
    params = train.param_count
    assert (infer.param_count, analytic.param_count) == (params, params)
    # training holds at least the weights, their gradients and Adam's two moments: 4 x 4 bytes a parameter
    for est in (train, analytic):
        assert est.memory.peak_bytes >= 16 * params
    assert infer.memory.peak_bytes >= 4 * params
    assert infer.memory.peak_bytes < train.memory.peak_bytes


def test_every_file_family_is_in_the_corpus() -> None:
    assert set(AS_FILE) <= {f.name for f in FAMILIES}


@pytest.mark.parametrize("family", [f for f in FAMILIES if f.name in AS_FILE], ids=lambda f: f.name)
def test_family_as_a_file_py_has_the_same_parameter_count(family: Family, tmp_path: Path) -> None:
    # the analytic count equals the simulated one (the test above), and costs a twentieth of a simulation
    spec = f"hf:{write_config(family, tmp_path)}"
    params = estimate_spec(spec, Workload("train", 1), seq_len=SEQ_LEN, method="analytic").param_count
    from_file = estimate_spec(str(write_model_file(family, tmp_path, SEQ_LEN)), Workload("train", 1))
    assert from_file.method == "simulated"
    assert from_file.param_count == params
    assert from_file.memory.peak_bytes >= 16 * params
