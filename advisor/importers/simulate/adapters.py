"""LoRA adapters on the simulated module, as PEFT's LoraModel puts them (peft/tuners/lora/layer.py, Linear):
every targeted nn.Linear becomes a layer holding the frozen base and two trainable matrices, lora_A (r x in)
and lora_B (out x r), whose forward is base(x) + lora_B(lora_A(dropout(x))) * scaling; every other
parameter is frozen (PEFT's mark_only_lora_as_trainable). The default lora_dropout of 0.0 is an identity.
QLoRA's 4-bit base needs bitsandbytes' kernels, which the meta device cannot run: the layer graph describes it.
"""

from __future__ import annotations

import torch
from torch import nn

from advisor.core.errors import SpecError
from advisor.core.workload import Finetune, Workload


class LoRALinear(nn.Module):
    def __init__(self, base: nn.Linear, rank: int) -> None:
        super().__init__()
        self.base_layer = base
        kind = {"device": base.weight.device, "dtype": base.weight.dtype}
        self.lora_A = nn.Linear(base.in_features, rank, bias=False, **kind)
        self.lora_B = nn.Linear(rank, base.out_features, bias=False, **kind)
        self.scaling = 1.0  # lora_alpha / r, PEFT's defaults 8 / 8

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out: torch.Tensor = self.base_layer(x) + self.lora_B(self.lora_A(x)) * self.scaling
        return out


def with_adapters(module: nn.Module, workload: Workload) -> nn.Module:
    """The module with its targeted linear layers adapted and everything else frozen (in place)."""
    if workload.finetune == Finetune.QLORA:
        raise SpecError(
            "finetune qlora: the 4-bit base runs bitsandbytes' kernels, which cannot be simulated; "
            "use --method analytic (the default for hf: models)"
        )
    targets = workload.adapters
    for param in module.parameters():
        param.requires_grad_(False)
    adapted = 0
    for _, parent in list(module.named_modules()):
        for child_name, child in list(parent.named_children()):
            if isinstance(child, nn.Linear) and child_name in targets:
                setattr(parent, child_name, LoRALinear(child, workload.lora_rank))
                adapted += 1
    if not adapted:
        raise SpecError(f"lora_targets: the model has no linear layer named {', '.join(targets)}")
    return module
