"""CUDA autocast, emulated at the Python function level.

A CPU-only build cannot run torch.autocast("cuda") (it warns and disables itself), and CPU autocast casts a
different set of ops, so the simulator applies CUDA's policy itself. The op lists are those registered for
the AutocastCUDA key in aten/src/ATen/autocast_mode.cpp (PyTorch 2.11):
- lower_precision_fp: matmuls and convolutions run in the autocast dtype (inputs and weights cast);
- fp32: numerically sensitive ops cast their inputs up to float32;
- fp32_set_opt_dtype: softmax-like reductions get dtype=float32 unless the caller gave a dtype (the kernel
  reads the half input and writes a float32 output; no float32 copy of the input is made);
- promote: mixed-dtype inputs are cast to the widest dtype.
Casts of leaf tensors that require grad (the weights) are cached until the autocast region ends, as
autocast_mode.cpp's cached_cast does, so a weight used twice is cast once. Its conditions are followed
exactly: never a view (a slice of a stacked expert weight is cast anew each time), and never under
inference_mode (PyTorch PR 165068, "Fix #158232", in 2.11 and later: an inference pass keeps no weight casts;
torch 2.13's CPU autocast shows the same). The cache holds the source tensor too, as autocast's weak
reference does, so an id is never reused for a different tensor while its entry lives.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

LOWER_PRECISION = frozenset(
    {
        "_convolution",
        "conv1d",
        "conv2d",
        "conv3d",
        "conv_tbc",
        "conv_transpose1d",
        "conv_transpose2d",
        "conv_transpose3d",
        "convolution",
        "prelu",
        "addmm",
        "addmv",
        "addr",
        "matmul",
        "__matmul__",
        "__rmatmul__",
        "einsum",
        "mm",
        "mv",
        "linalg_vecdot",
        "linear",
        "addbmm",
        "baddbmm",
        "bmm",
        "chain_matmul",
        "linalg_multi_dot",
        "lstm_cell",
        "gru_cell",
        "rnn_tanh_cell",
        "rnn_relu_cell",
        "scaled_dot_product_attention",
    }
)
FP32 = frozenset(
    {
        "acos",
        "asin",
        "cosh",
        "erfinv",
        "exp",
        "expm1",
        "log",
        "log10",
        "log2",
        "log1p",
        "reciprocal",
        "rsqrt",
        "sinh",
        "tan",
        "pow",
        "__pow__",
        "__rpow__",
        "softplus",
        "layer_norm",
        "native_layer_norm",
        "group_norm",
        "frobenius_norm",
        "nuclear_norm",
        "cosine_similarity",
        "poisson_nll_loss",
        "cosine_embedding_loss",
        "nll_loss",
        "nll_loss2d",
        "hinge_embedding_loss",
        "kl_div",
        "l1_loss",
        "smooth_l1_loss",
        "huber_loss",
        "mse_loss",
        "margin_ranking_loss",
        "multilabel_margin_loss",
        "soft_margin_loss",
        "triplet_margin_loss",
        "multi_margin_loss",
        "binary_cross_entropy_with_logits",
        "dist",
        "pdist",
        "cdist",
        "renorm",
        "logsumexp",
        "upsample_nearest1d",
        "upsample_nearest2d",
        "upsample_nearest3d",
        "upsample_linear1d",
        "upsample_bilinear2d",
        "upsample_trilinear3d",
        "upsample_bicubic2d",
        "interpolate",
        "rms_norm",
    }
)
FP32_SET_OPT_DTYPE = frozenset(
    {"prod", "softmax", "log_softmax", "cumprod", "cumsum", "linalg_vector_norm", "linalg_matrix_norm", "sum"}
)
PROMOTE = frozenset(
    {
        "addcdiv",
        "addcmul",
        "atan2",
        "bilinear",
        "cross",
        "dot",
        "vdot",
        "grid_sampler",
        "index_put",
        "tensordot",
        "scatter_add",
    }
)


def _is_float(value: Any) -> bool:
    return isinstance(value, torch.Tensor) and value.is_floating_point() and value.dtype != torch.float64


class AutocastPolicy:
    """Casts the arguments of one call as CUDA autocast would; holds the weight-cast cache of one region."""

    def __init__(self, dtype: torch.dtype) -> None:
        self.dtype = dtype
        self.cache: dict[int, tuple[torch.Tensor, torch.Tensor]] = {}  # id -> (source, its cast)

    def clear(self) -> None:
        self.cache.clear()

    def cast(self, value: Any, dtype: torch.dtype) -> Any:
        if not _is_float(value) or value.dtype == dtype:
            return value
        cacheable = (
            dtype == self.dtype
            and value.requires_grad
            and value.is_leaf
            and value.dtype == torch.float32
            and not value._is_view()
            and not torch.is_inference_mode_enabled()
        )
        if cacheable and id(value) in self.cache:
            return self.cache[id(value)][1]
        result = value.to(dtype)
        if cacheable:
            self.cache[id(value)] = (value, result)
        return result

    def _cast_all(
        self, args: tuple[Any, ...], kwargs: dict[str, Any], dtype: torch.dtype
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        def one(v: Any) -> Any:
            if isinstance(v, (list, tuple)):
                return type(v)(self.cast(x, dtype) for x in v)
            return self.cast(v, dtype)

        return tuple(one(a) for a in args), {k: one(v) for k, v in kwargs.items()}

    def apply(
        self, name: str, func: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> tuple[tuple[Any, ...], dict[str, Any]] | None:
        """The (args, kwargs) to call func with under autocast, or None when the policy leaves it alone."""
        tensors = [a for a in (*args, *kwargs.values()) if _is_float(a)]
        if not tensors:
            return None
        if name in LOWER_PRECISION:
            return self._cast_all(args, kwargs, self.dtype)
        if name in FP32:
            return self._cast_all(args, kwargs, torch.float32)
        if name in FP32_SET_OPT_DTYPE:
            if kwargs.get("dtype") is None and tensors[0].dtype != torch.float32:
                return args, {**kwargs, "dtype": torch.float32}
            return None
        if name in PROMOTE:
            widest = torch.float32 if any(t.dtype == torch.float32 for t in tensors) else tensors[0].dtype
            return self._cast_all(args, kwargs, widest)
        return None
