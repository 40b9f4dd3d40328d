"""Why a ranked configuration fits or not, as data: reason codes with the numbers and names they quote.

The ranking decides, the views word it: recommend/present.py renders the English templates below for the
command line, the app and the PDF pass each template through tr() first. A byte figure is a field whose
name ends in `_bytes` and is printed with advisor.core.units.format_bytes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import StrEnum

from advisor.core.units import format_bytes

ReasonValue = int | str


class ReasonCode(StrEnum):
    FITS = "fits"
    DOES_NOT_FIT = "does_not_fit"
    NOT_CUDA = "not_cuda"
    DATA_PARALLEL = "data_parallel"
    ZERO = "zero"
    TENSOR_PARALLEL = "tensor_parallel"
    LAYER_SPLIT = "layer_split"
    LAYER_SPLIT_TRAIN = "layer_split_train"
    ONLY_SHARDED = "only_sharded"
    ONLY_TENSOR_SPLIT = "only_tensor_split"
    ONLY_LAYER_SPLIT = "only_layer_split"
    INCOMPLETE = "incomplete"
    BEYOND_DESKTOP = "beyond_desktop"
    # the workload's runtime cannot run the card (recommend/runtime_support.py): not a fitting configuration
    RUNTIME_CAPABILITY = "runtime_capability"
    RUNTIME_BF16 = "runtime_bf16"
    RUNTIME_UNLISTED = "runtime_unlisted"
    RUNTIME_NO_BACKEND = "runtime_no_backend"
    WOULD_FIT = "would_fit"  # the memory a refused configuration needs, where it would otherwise fit


@dataclass(frozen=True)
class Reason:
    code: ReasonCode
    values: tuple[tuple[str, ReasonValue], ...] = ()  # the template's fields, in order


def reason(code: ReasonCode, **values: ReasonValue) -> Reason:
    return Reason(code, tuple(values.items()))


_NEEDS = (
    "needs {required_bytes} per card at batch {batch}; {memory_bytes} card has {usable_bytes} usable after {context}"
)
TEMPLATES: dict[ReasonCode, str] = {
    ReasonCode.FITS: "fits: " + _NEEDS,
    ReasonCode.DOES_NOT_FIT: "does not fit: " + _NEEDS,
    ReasonCode.NOT_CUDA: "memory modelled on CUDA's allocator (PyTorch runs this card through {software})",
    ReasonCode.DATA_PARALLEL: "data parallel: each card holds the whole model, memory does not pool",
    ReasonCode.ZERO: "{stage} shards model state over {count} cards ({link})",
    ReasonCode.TENSOR_PARALLEL: "tensor parallel over {count} cards ({link}): each holds 1/{count} of the weights "
    "and KV cache, two all-reduces per layer",
    ReasonCode.LAYER_SPLIT: "layers split over {count} cards ({link}): memory adds up, but every token passes each "
    "card in turn, so decoding runs at about one card's speed",
    ReasonCode.LAYER_SPLIT_TRAIN: "layers split over {count} cards ({link}): each holds its layers' weights, "
    "gradients and optimizer state, and one card computes at a time, so a step takes about one card's time",
    ReasonCode.ONLY_SHARDED: "fits only because model state is sharded",
    ReasonCode.ONLY_TENSOR_SPLIT: "fits only because weights and KV cache are split over {count} cards",
    ReasonCode.ONLY_LAYER_SPLIT: "fits only because layers are split over {count} cards",
    ReasonCode.RUNTIME_CAPABILITY: "does not run: {runtime} needs compute capability {needed} or newer; "
    "{architecture} is {capability}",
    ReasonCode.RUNTIME_BF16: "does not run: {runtime} runs bf16 only from compute capability 8.0 (Ampere); "
    "{architecture} is {capability}: choose precision fp16",
    ReasonCode.RUNTIME_UNLISTED: "does not run: {runtime} lists {listed} among the AMD GPUs it supports, "
    "not {architecture}",
    ReasonCode.RUNTIME_NO_BACKEND: "does not run: {runtime} has no backend for {architecture} ({software})",
    ReasonCode.WOULD_FIT: "memory would fit: " + _NEEDS,
    ReasonCode.INCOMPLETE: "incomplete: {missing} not given; set them in the catalog",
    ReasonCode.BEYOND_DESKTOP: "{count} cards are more than one desktop holds: a board with that many slots, "
    "a server or a rack, and its power supply, cost extra",
}


def _shown(value: ReasonValue, name: str) -> str:
    return format_bytes(value) if name.endswith("_bytes") and isinstance(value, int) else str(value)


def reason_text(item: Reason, text: Callable[[str], str] = str) -> str:
    """One reason in words; `text` translates the template (the app's and the PDF's tr) and the link's name
    (the catalog's "NVLink 3 bridge" read as English in a Chinese sentence) and the runtime context's
    (software.context_name)."""
    values = {name: _shown(value, name) for name, value in item.values}
    for name in ("link", "context"):
        if name in values:
            values[name] = text(values[name])
    return text(TEMPLATES[item.code]).format(**values)


def reasons_text(items: Iterable[Reason], text: Callable[[str], str] = str) -> str:
    return "; ".join(reason_text(item, text) for item in items)
