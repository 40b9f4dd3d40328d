"""FLOPs of the simulated step, per (phase, layer), from torch.utils.flop_counter's formulas.

Matmuls, convolutions and attention count 2 x multiply-adds, as FlopCounterMode does. Its formula for
convolution_backward overcounts grouped and depthwise convolutions (see shared/calibration/README.md:
mobilenet_v2 forward+backward 12.28 GFLOP for 0.60 forward), so a convolution's backward counts the
forward convolution's FLOPs once per gradient it produces (input and weight): same multiply-adds.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import torch
from torch.utils.flop_counter import conv_flop_count, flop_registry

aten = torch.ops.aten


def _shape(value: Any) -> Any:
    return tuple(value.shape) if isinstance(value, torch.Tensor) else value


class FlopCounter:
    def __init__(self) -> None:
        self.by_layer: dict[tuple[str, str], int] = defaultdict(int)

    def reset(self) -> None:
        self.by_layer.clear()

    def count(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any], out: Any, phase: str, layer: str) -> None:
        packet = func._overloadpacket
        if packet is aten.convolution_backward:
            self.by_layer[(phase, layer)] += _conv_backward_flops(args)
            return
        formula = flop_registry.get(packet)
        if formula is None:
            return
        self.by_layer[(phase, layer)] += int(formula(*args, **kwargs, out_val=out))

    def total(self, phase: str) -> int:
        return sum(v for (p, _), v in self.by_layer.items() if p == phase)

    def layer(self, phase: str, layer: str) -> int:
        return self.by_layer.get((phase, layer), 0)


def _conv_backward_flops(args: tuple[Any, ...]) -> int:
    grad_out, x, weight = args[0], args[1], args[2]
    transposed, output_mask = bool(args[7]), args[10]
    forward = conv_flop_count(list(x.shape), list(weight.shape), list(grad_out.shape), transposed)
    return int(forward * sum(1 for needed in output_mask[:2] if needed))
