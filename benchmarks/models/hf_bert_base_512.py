"""hf:bert-base@512 of shared/calibration/measure_gpu.py: hf_bert_base_128.py at 512 tokens."""

import hf_bert_base_128 as base
import torch

NAME = "hf:bert-base@512"
SEQ = 512
build_model, loss_fn = base.build_model, base.loss_fn


def example_inputs(batch_size: int) -> dict[str, torch.Tensor]:
    return base.batch(batch_size, SEQ)
