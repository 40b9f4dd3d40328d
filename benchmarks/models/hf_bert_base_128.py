"""hf:bert-base@128 of shared/calibration/measure_gpu.py: BertForSequenceClassification(BertConfig()),
input_ids and labels as keyword inputs, the model's own loss. Needs transformers (benchmark only)."""

import torch
import transformers as T
from torch import nn

NAME = "hf:bert-base@128"
SEQ = 128


def build_model() -> nn.Module:
    return T.BertForSequenceClassification(T.BertConfig())


def batch(batch_size: int, seq: int) -> dict[str, torch.Tensor]:
    ids = torch.randint(0, T.BertConfig().vocab_size, (batch_size, seq))
    return {"input_ids": ids, "labels": torch.randint(0, 2, (batch_size,))}


def example_inputs(batch_size: int) -> dict[str, torch.Tensor]:
    return batch(batch_size, SEQ)


def loss_fn(output: object, inputs: object) -> torch.Tensor:
    return output.loss  # type: ignore[attr-defined, no-any-return]
