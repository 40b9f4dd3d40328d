"""LoRA adapters on the simulated module, as PEFT's LoraModel puts them (peft/tuners/lora/layer.py, Linear):
every targeted nn.Linear becomes a layer holding the frozen base and two trainable matrices, lora_A (r x in)
and lora_B (out x r), fp32 on a half-precision base, whose forward is base(x) + lora_B(lora_A(dropout(x))) *
scaling; every other
parameter is frozen (PEFT's mark_only_lora_as_trainable). The default lora_dropout of 0.0 is an identity.
QLoRA's 4-bit base needs bitsandbytes' kernels, which the meta device cannot run: the layer graph describes it.
"""

from __future__ import annotations

import torch
from torch import nn

from advisor.core.errors import SpecError
from advisor.core.workload import AdapterDtype, Finetune, Workload


class LoRALinear(nn.Module):
    def __init__(self, base: nn.Linear, rank: int, upcast: bool) -> None:
        super().__init__()
        self.base_layer = base
        # get_peft_model(autocast_adapter_dtype=True), PEFT's default since 0.12, upcasts bf16 and fp16
        # adapters to fp32 (peft/tuners/tuners_utils.py cast_adapter_dtype), as the analytic path counts them
        # (core/llm/lora.py LoRALinear.fp32_adapters); AdapterDtype.BASE keeps the base's dtype
        half = upcast and base.weight.dtype in (torch.float16, torch.bfloat16)
        kind = {"device": base.weight.device, "dtype": torch.float32 if half else base.weight.dtype}
        self.lora_A = nn.Linear(base.in_features, rank, bias=False, **kind)
        self.lora_B = nn.Linear(rank, base.out_features, bias=False, **kind)
        self.scaling = 1.0  # lora_alpha / r, PEFT's defaults 8 / 8

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # peft/tuners/lora/layer.py Linear.forward: the input cast to the adapters' dtype
        # (_cast_input_dtype), the sum in the promoted dtype, then back to the base's output dtype
        result = self.base_layer(x)
        result_dtype = result.dtype
        x = x.to(self.lora_A.weight.dtype)
        result = result + self.lora_B(self.lora_A(x)) * self.scaling
        out: torch.Tensor = result.to(result_dtype)
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
                upcast = workload.adapter_dtype == AdapterDtype.FP32
                setattr(parent, child_name, LoRALinear(child, workload.lora_rank, upcast))
                adapted += 1
    if not adapted:
        raise SpecError(f"lora_targets: the model has no linear layer named {', '.join(targets)}")
    return module
