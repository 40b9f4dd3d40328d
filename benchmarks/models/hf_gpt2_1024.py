"""hf:gpt2@1024 of shared/calibration/measure_gpu.py: GPT2LMHeadModel(GPT2Config()), input_ids = labels,
1024 tokens, the model's own loss. Needs transformers (benchmark only)."""

import torch
import transformers as T
from torch import nn

NAME = "hf:gpt2@1024"
SEQ = 1024


def build_model() -> nn.Module:
    return T.GPT2LMHeadModel(T.GPT2Config())


def example_inputs(batch_size: int) -> dict[str, torch.Tensor]:
    ids = torch.randint(0, T.GPT2Config().vocab_size, (batch_size, SEQ))
    return {"input_ids": ids, "labels": ids}


def loss_fn(output: object, inputs: object) -> torch.Tensor:
    return output.loss  # type: ignore[attr-defined, no-any-return]
