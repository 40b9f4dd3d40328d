"""A TorchFunctionMode that makes meta-device execution follow CUDA: autocast's casts and the fused
attention kernels.

Why the function level: autocast and the SDPA backend choice both happen above autograd on CUDA, so their
casts and saved tensors appear in the autograd graph; replacing the call before autograd sees it records
the same graph. handle_torch_function pops the mode while it runs (torch/overrides.py), so Python-level
composites (F.multi_head_attention_forward, F.cross_entropy) are re-entered with the mode pushed again and
the ops they call are seen too. A Python composite re-checks for torch-function handlers on entry, so
its body is run with that first check answered "no" (`_body`); thin wrappers (F.relu, F.layer_norm) are
handled by name and need no re-entry.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode

from advisor.importers.simulate.attention import cuda_sdpa
from advisor.importers.simulate.autocast import AutocastPolicy

# Python composites whose bodies hold ops autocast or the attention backend choice change. Backward is one:
# activation checkpointing reruns forward segments inside it (torch/utils/checkpoint.py recompute_fn).
COMPOSITES = frozenset({F.multi_head_attention_forward, torch.autograd.backward})


def _fused_dropout(
    input: torch.Tensor, p: float = 0.5, training: bool = True, inplace: bool = False, train: bool | None = None
) -> torch.Tensor:
    """aten/src/ATen/native/Dropout.cpp: CUDA tensors take the fused kernel (native_dropout), which keeps a
    one-byte boolean mask for backward; other devices multiply by a float noise tensor and keep that (four
    bytes per element), so meta execution would overcount every dropout."""
    training = training if train is None else train
    if not training or p <= 0 or p >= 1 or input.numel() == 0:
        return input if not training or p <= 0 else input * 0.0
    return torch.native_dropout(input, p, True)[0]


def _grouped_mm(
    mat_a: torch.Tensor, mat_b: torch.Tensor, offs: Any = None, bias: Any = None, out_dtype: Any = None
) -> torch.Tensor | None:
    """Mixture-of-experts grouped GEMM (transformers integrations/moe.py) outside bfloat16: the meta kernel
    accepts only bfloat16 (torch/_meta_registrations.py _meta_grouped_mm_common), while CUDA runs other
    dtypes group by group. Each token row meets one expert's matrix, so one (S, K) x (K, N) product has the
    same output, saved tensors, FLOPs and (through the select's backward) a full expert-weight gradient."""
    if mat_a.dim() != 2 or mat_b.dim() != 3 or mat_a.dtype == torch.bfloat16:
        return None
    out = mat_a @ mat_b[0]
    return out if bias is None else out + bias[0]


GROUPED_MM = ("grouped_mm", "_grouped_mm")


class GroupedMmOnMeta(TorchFunctionMode):
    """Only the grouped-GEMM stand-in, for the analytic trace of mixture-of-experts models on meta."""

    def __torch_function__(
        self, func: Callable[..., Any], types_: Any, args: tuple[Any, ...] = (), kwargs: dict[str, Any] | None = None
    ) -> Any:
        kwargs = kwargs or {}
        grouped = _grouped_mm(*args, **kwargs) if getattr(func, "__name__", "") in GROUPED_MM else None
        return func(*args, **kwargs) if grouped is None else grouped


class CudaSemantics(TorchFunctionMode):
    def __init__(self, autocast_dtype: torch.dtype | None) -> None:
        super().__init__()
        self.policy = AutocastPolicy(autocast_dtype) if autocast_dtype is not None else None

    def end_autocast_region(self) -> None:
        if self.policy is not None:
            self.policy.clear()

    def __torch_function__(
        self, func: Callable[..., Any], types_: Any, args: tuple[Any, ...] = (), kwargs: dict[str, Any] | None = None
    ) -> Any:
        kwargs = kwargs or {}
        name = getattr(func, "__name__", "")
        if func is F.cross_entropy and self.policy is not None:
            return self._cross_entropy(*args, **kwargs)
        if self.policy is not None:
            cast = self.policy.apply(name, func, args, kwargs)
            if cast is not None:
                args, kwargs = cast
        if name == "dropout" and not kwargs.get("inplace", len(args) > 3 and args[3]):
            return _fused_dropout(*args, **kwargs)
        if name in GROUPED_MM:
            with self:
                grouped = _grouped_mm(*args, **kwargs)
            if grouped is not None:
                return grouped
        if name == "scaled_dot_product_attention":
            with self:
                return cuda_sdpa(*args, **kwargs)
        if func in COMPOSITES:
            return self._body(func, args, kwargs)
        return func(*args, **kwargs)

    def _body(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Runs a Python composite's body with this mode active for the ops it calls."""
        module_globals = func.__globals__
        original = module_globals["has_torch_function"]
        first = [True]

        def entry_check(*tensors: Any) -> bool:
            if first[0]:
                first[0] = False
                return False
            return bool(original(*tensors))

        module_globals["has_torch_function"] = entry_check
        try:
            with self:
                return func(*args, **kwargs)
        finally:
            module_globals["has_torch_function"] = original

    def _cross_entropy(
        self,
        logits: torch.Tensor,
        target: torch.Tensor,
        weight: Any = None,
        size_average: Any = None,
        ignore_index: int = -100,
        reduce: Any = None,
        reduction: str = "mean",
        label_smoothing: float = 0.0,
    ) -> Any:
        """aten/src/ATen/native/LossNLL.cpp cross_entropy_loss calls log_softmax with an explicit dtype (the
        logits' own), so autocast keeps it in half precision; nll_loss is on the fp32 list, so its input is
        cast up. Label smoothing and probability targets take the generic path."""
        if label_smoothing or target.is_floating_point() or logits.dtype == torch.float32:
            return F.cross_entropy(
                logits, target, weight, size_average, ignore_index, reduce, reduction, label_smoothing
            )
        with self:
            log_probs = torch.log_softmax(logits, 1 if logits.dim() > 1 else 0, dtype=logits.dtype)
            return F.nll_loss(log_probs, target, weight, None, ignore_index, None, reduction)
