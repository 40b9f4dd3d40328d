"""What the user runs: training or inference, batch, precision, optimizer, checkpointing."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

from advisor.core.errors import SpecError

Mode = Literal["train", "infer"]
Precision = Literal["fp32", "amp_bf16", "amp_fp16", "bf16", "fp16"]
OptimizerName = Literal["sgd", "sgd_momentum", "adam", "adamw"]

# Per-parameter state tensors (torch.optim): momentum keeps momentum_buffer; Adam/AdamW exp_avg and exp_avg_sq.
OPTIMIZER_STATE_SLOTS: dict[str, int] = {"sgd": 0, "sgd_momentum": 1, "adam": 2, "adamw": 2}
# Parameter-sized temporaries of the foreach step (torch/optim/adam.py _multi_tensor_adam:
# exp_avg_sq_sqrt = torch._foreach_sqrt(exp_avg_sq)); SGD updates in place.
OPTIMIZER_STEP_TEMPORARIES: dict[str, int] = {"sgd": 0, "sgd_momentum": 0, "adam": 1, "adamw": 1}


@dataclass(frozen=True)
class Workload:
    mode: Mode = "train"
    batch: int = 32
    precision: Precision = "fp32"
    optimizer: OptimizerName = "adam"
    checkpointing: bool = False

    def __post_init__(self) -> None:
        if self.mode not in get_args(Mode):
            raise SpecError(f"mode: must be one of {', '.join(get_args(Mode))}, got {self.mode!r}")
        if self.precision not in get_args(Precision):
            raise SpecError(f"precision: must be one of {', '.join(get_args(Precision))}, got {self.precision!r}")
        if self.optimizer not in get_args(OptimizerName):
            raise SpecError(f"optimizer: must be one of {', '.join(get_args(OptimizerName))}, "
                            f"got {self.optimizer!r}")
        if self.batch < 1:
            raise SpecError(f"batch: must be at least 1, got {self.batch}")

    @property
    def training(self) -> bool:
        return self.mode == "train"

    @property
    def amp(self) -> bool:
        return self.precision.startswith("amp_")

    @property
    def param_dtype_bytes(self) -> int:
        """Weights (and so gradients and optimizer state) are fp32 except in pure bf16/fp16."""
        return 2 if self.precision in ("bf16", "fp16") else 4

    @property
    def half_dtype_bytes(self) -> int:
        return 2

    @property
    def compute_dtype(self) -> str:
        return {"fp32": "float32", "amp_bf16": "bfloat16", "amp_fp16": "float16",
                "bf16": "bfloat16", "fp16": "float16"}[self.precision]
