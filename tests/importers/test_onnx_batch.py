"""A transformer exported to ONNX: the batch and sequence symbols become numbers before shape inference and
the size arithmetic is folded, so every tensor has its real size (issue 14 saw 5,378 GiB for a dynamic-batch
BERT, and a static export 37-137x too high through an expanded [1, 512] buffer)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
import transformers

from advisor.core.workload import Workload
from advisor.importers.spec_estimate import estimate_spec

CONFIG = transformers.BertConfig(
    num_hidden_layers=2,
    hidden_size=64,
    intermediate_size=128,
    num_attention_heads=4,
    vocab_size=1000,
    max_position_embeddings=512,
    architectures=["BertForSequenceClassification"],
)


@pytest.mark.parametrize("dynamic", [True, False], ids=["dynamic_batch", "static"])
def test_bert_export_has_its_real_sizes(tmp_path: Path, dynamic: bool) -> None:
    model = transformers.BertForSequenceClassification(CONFIG).eval()
    path = tmp_path / "bert.onnx"
    axes = {"input_ids": {0: "batch", 1: "seq"}} if dynamic else None
    torch.onnx.export(
        model,
        (torch.randint(0, 1000, (1, 128)),),
        str(path),
        input_names=["input_ids"],
        dynamic_axes=axes,
        dynamo=False,
    )
    config = tmp_path / "config.json"
    config.write_text(json.dumps(CONFIG.to_dict()))
    workload = Workload("infer", 8)
    exported = estimate_spec(str(path), workload, seq_len=128)
    traced = estimate_spec(f"hf:{config}", workload, seq_len=128, method="analytic")  # same weights
    # the exporter folds a few constant rows (1,344 of 168,258 parameters) into non-float constants
    assert abs(exported.param_count - traced.param_count) < 0.01 * traced.param_count
    # The export runs attention as MatMul -> Softmax, so one layer's scores and probabilities live together:
    # 2 x 4 heads x 128 x 128 x 4 bytes = 512 KiB a sample, beside 128 x 64 x 4 = 32 KiB hidden states.
    # A stand-in of 128 or 512 for an unknown batch or head dimension gave gigabytes a sample.
    scores = 4 * 128 * 128 * 4
    assert scores <= exported.memory.per_sample_bytes < 4 * scores


def test_folding_refuses_size_arithmetic_that_would_allocate_much() -> None:
    import numpy as np
    import onnx

    from advisor.importers.onnx_fold import MAX_ELEMENTS, _evaluate

    node = onnx.helper.make_node("Range", ["start", "limit", "delta"], ["r"])
    small = {"start": np.array(0), "limit": np.array(5), "delta": np.array(1)}
    assert list(_evaluate(onnx, np, node, small, {})[0]) == [0, 1, 2, 3, 4]
    huge = {**small, "limit": np.array(10**12)}  # a damaged file: 10^12 elements, far over MAX_ELEMENTS
    assert MAX_ELEMENTS < 10**12 and _evaluate(onnx, np, node, huge, {}) is None
