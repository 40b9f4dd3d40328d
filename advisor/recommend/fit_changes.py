"""The single changes that can make a workload fit a card, each measured as a Variant of the workload.

A change is a key ("checkpointing", "amp_bf16", ...), an English label, and how it alters the Variant;
its effect is whatever the re-estimate says. Notes are str.format templates so that the app can
translate them (the fields are numbers and names).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from advisor.core.errors import AdvisorError
from advisor.core.units import format_count
from advisor.recommend.fit_measure import Measured, Measurer, Variant, largest_fitting_batch

Settings = dict[str, object]  # the app's workload controls (WorkloadChoice fields) a change sets

LABELS: dict[str, str] = {
    "current": "as it is",
    "batch": "smaller batch",
    "accumulate": "gradient accumulation",
    "amp_bf16": "mixed precision (bf16 autocast)",
    "amp_fp16": "mixed precision (fp16 autocast)",
    "bf16": "pure bf16",
    "checkpointing": "gradient checkpointing",
    "inplace": "in-place activations",
    "sgd_momentum": "SGD with momentum instead of Adam",
    "sgd": "plain SGD instead of Adam",
    "adam_8bit": "8-bit optimizer state",
    "freeze_half": "freeze the first half of the blocks",
    "freeze_head": "train only the last layer",
    "seq_len": "shorter sequences",
    "zero1": "ZeRO-1 sharding",
    "zero2": "ZeRO-2 sharding",
    "zero3": "ZeRO-3 / FSDP sharding",
    "lora": "LoRA adapters on a frozen base",
    "qlora": "QLoRA (4-bit frozen base + LoRA adapters)",
    "weights_int8": "8-bit weights",
    "weights_int4": "4-bit weights (GPTQ/AWQ)",
    "weights_q4_k_m": "4-bit weights (GGUF Q4_K_M)",
    "kv_fp8": "fp8 KV cache",
    "context": "shorter context",
    "tensor_parallel": "tensor parallel",
    "layer_split": "layers split over cards",
}

NOTES: dict[str, str] = {
    "current": "the workload as set",
    "batch": "largest batch that fits: {batch} instead of {old}; fewer samples per step changes training "
             "(scale the learning rate, or accumulate gradients)",
    "accumulate": "{steps} steps of batch {batch} per optimizer step (effective batch {effective}); "
                  "the gradients stay allocated between steps",
    "amp_bf16": "torch.autocast(dtype=torch.bfloat16): weights stay fp32, matmuls and convolutions run in bf16",
    "amp_fp16": "torch.autocast(dtype=torch.float16) with a GradScaler: weights stay fp32",
    "bf16": "weights, gradients and optimizer state in bf16: watch the numerics (Kahan summation or "
            "stochastic rounding help)",
    "checkpointing": "recomputes each block in backward: {extra} more FLOPs per step ({share} of a forward)",
    "inplace": "nn.ReLU(inplace=True) and friends write into their input",
    "sgd_momentum": "one momentum buffer instead of Adam's two states; may need a retuned learning rate",
    "sgd": "no optimizer state at all; may converge slower than Adam",
    "adam_8bit": "bitsandbytes-style 8-bit Adam: 1 byte per state element instead of {dtype}; modelled on "
                 "the estimate (optimizer state scaled), not simulated",
    "freeze_half": "fine-tuning: {frozen} parameters frozen (no gradients, optimizer state or saved "
                   "activations for them)",
    "freeze_head": "fine-tuning: {frozen} parameters frozen; only the last layer trains",
    "seq_len": "{tokens} tokens per sample instead of {old}",
    "zero1": "on {count} cards: optimizer state sharded over them ({link})",
    "zero2": "on {count} cards: optimizer state and gradients sharded over them ({link})",
    "zero3": "on {count} cards: parameters, gradients and optimizer state sharded over them ({link})",
    "lora": "fine-tuning: only rank-{rank} adapters train (gradients and optimizer state for them alone); "
            "activations are still saved through the frozen layers",
    "qlora": "the frozen base in 4-bit NF4 with double quantization (bitsandbytes), rank-{rank} adapters train",
    "weights_int8": "weights in 8 bits with per-channel scales: decode reads half the bytes of 16-bit; "
                    "check the quality on your task",
    "weights_int4": "weights in 4 bits with a scale and zero per 128-weight group: some quality loss",
    "weights_q4_k_m": "llama.cpp's 4-bit K-quant mix (about 4.8 bits per weight): some quality loss",
    "kv_fp8": "K and V cached in fp8 (vLLM --kv-cache-dtype fp8): half the cache of 16-bit",
    "context": "{prompt} prompt + {new} generated tokens instead of {old_prompt} + {old_new}",
    "tensor_parallel": "on {count} cards: weights and KV cache split {count} ways, two all-reduces per layer "
                       "({link})",
    "layer_split": "on {count} cards: layers divided between them ({link}); a token passes each in turn, so "
                   "decoding runs at about one card's speed",
}

# Changes after which the same model trains the same way (up to rounding): the others change what is
# learned (another effective batch, optimizer, numerics, frozen layers, shorter context).
SAME_TRAINING = frozenset({"amp_bf16", "amp_fp16", "checkpointing", "inplace", "adam_8bit", "accumulate",
                           "zero1", "zero2", "zero3", "tensor_parallel", "layer_split"})

# Changes that exclude each other: one precision, one optimizer, one way of freezing (adapters freeze the
# base), one weight format.
GROUPS: tuple[tuple[str, ...], ...] = (
    ("amp_bf16", "amp_fp16", "bf16"), ("checkpointing",), ("inplace",), ("sgd_momentum", "sgd", "adam_8bit"),
    ("freeze_half", "freeze_head", "lora", "qlora"), ("seq_len",),
    ("weights_int8", "weights_int4", "weights_q4_k_m"), ("kv_fp8",), ("context",),
)


@dataclass(frozen=True)
class Change:
    key: str
    apply: Callable[[Variant], Variant]
    settings: Settings = field(default_factory=dict)  # what the app's controls can apply ({}: none)
    note_fields: dict[str, object] = field(default_factory=dict)


def _workload(**changes: object) -> Callable[[Variant], Variant]:
    return lambda v: replace(v, workload=replace(v.workload, **changes))  # type: ignore[arg-type]


def workload_change(key: str, note_fields: dict[str, object] | None = None, **changes: object) -> Change:
    """A change that sets workload fields (which are also the app's workload controls)."""
    return Change(key, _workload(**changes), dict(changes), note_fields or {})


def _precisions(v: Variant, bf16_card: bool) -> list[Change]:
    current = v.workload.precision
    keys = ["amp_bf16", "amp_fp16", "bf16"] if bf16_card else ["amp_fp16"]
    if current != "fp32":  # already half somewhere: only a further step down (pure bf16) is left
        keys = ["bf16"] if bf16_card and current.startswith("amp") else []
    return [Change(k, _workload(precision=k), {"precision": k}) for k in keys]


def _optimizers(v: Variant, allow_8bit: bool) -> list[Change]:
    current = v.workload.optimizer
    keys = {"adam": ["sgd_momentum", "sgd"], "adamw": ["sgd_momentum", "sgd"], "sgd_momentum": ["sgd"]}.get(
        current, [])
    changes = [Change(k, _workload(optimizer=k), {"optimizer": k}) for k in keys]
    if allow_8bit and current in ("adam", "adamw") and not v.optimizer_8bit:
        changes.append(Change("adam_8bit", lambda x: replace(x, optimizer_8bit=True),
                              note_fields={"dtype": v.workload.param_dtype_bytes}))
    return changes


def candidate_changes(m: Measurer, v: Variant, bf16_card: bool, allow_8bit: bool) -> list[Change]:
    """Every single change that applies to this workload on this card (batch changes aside)."""
    w = v.workload
    changes = _precisions(v, bf16_card) if w.training or w.precision == "fp32" else []
    if w.generating:  # the cache and the weights decide; advisor.recommend.fit_llm offers those changes
        return changes
    if not w.training:
        return changes + _inplace(m, v)
    if not w.checkpointing:
        changes.append(Change("checkpointing", _workload(checkpointing=True), {"checkpointing": True}))
    changes += _inplace(m, v) + _optimizers(v, allow_8bit)
    if not v.freeze and w.finetune == "full":  # adapters already freeze the base
        changes += [Change(f"freeze_{how}", lambda x, how=how: replace(x, freeze=how),  # type: ignore[misc]
                           note_fields={"frozen": _frozen_params(m, v, how)}) for how in ("half", "head")]
    return changes


def _inplace(m: Measurer, v: Variant) -> list[Change]:
    if v.inplace or m.graph(replace(v, inplace=True)) == m.graph(v):
        return []  # nothing to rewrite (no out-of-place activation)
    return [Change("inplace", lambda x: replace(x, inplace=True), {"inplace": True})]


def _frozen_params(m: Measurer, v: Variant, how: str) -> str:
    frozen = m.graph(v).param_count - m.graph(replace(v, freeze=how)).param_count
    return format_count(frozen)


def shorter_sequence(m: Measurer, v: Variant, usable_bytes: int) -> Change | None:
    """Halves the sequence length until the step fits (down to an eighth); None for non-sequence models."""
    seq = m.subject.seq_len
    if seq is None or m.subject.rebuild is None or seq < 2:
        return None
    tokens = seq // 2
    try:
        while tokens > max(seq // 8, 1) and not m.measure(replace(v, seq_len=tokens)).fits(usable_bytes):
            tokens //= 2
    except AdvisorError:  # a model file whose sequence length is fixed
        return None
    return Change("seq_len", lambda x: replace(x, seq_len=tokens), {"seq_len": tokens},
                  {"tokens": tokens, "old": seq})


def batch_changes(m: Measurer, v: Variant, usable_bytes: int) -> list[Change]:
    """The largest batch that fits, and gradient accumulation of it back to the batch asked for."""
    batch = v.workload.batch
    largest = largest_fitting_batch(m, v, usable_bytes)
    if largest >= batch or largest < 1:
        return []
    changes = [Change("batch", _workload(batch=largest), {"batch": largest}, {"batch": largest, "old": batch})]
    # Accumulation keeps the gradients live, so its micro-batch may need to be smaller still. The peak of an
    # accumulated micro-step depends on the micro-batch, not on how many there are, and grows with it: a
    # bisection finds the largest that fits in O(log batch) measurements (counting steps up one by one took
    # minutes for --batch 10**12).
    low, high = 1, largest
    while low < high:
        middle = (low + high + 1) // 2
        trial = replace(v, workload=replace(v.workload, batch=middle), accumulate=math.ceil(batch / middle))
        low, high = (middle, high) if m.measure(trial).fits(usable_bytes) else (low, middle - 1)
    steps = math.ceil(batch / low)
    micro = math.ceil(batch / steps)  # the same number of steps, shared out evenly
    changes.append(Change("accumulate", lambda x: replace(x, workload=replace(x.workload, batch=micro),
                                                          accumulate=steps),
                          {"batch": micro}, {"steps": steps, "batch": micro, "effective": steps * micro}))
    return changes


def checkpoint_fields(base: Measured, with_it: Measured) -> dict[str, object]:
    extra = with_it.step_flops - base.step_flops
    share = extra / base.estimate.forward_flops if base.estimate.forward_flops else 0.0
    return {"extra": f"{extra / 1e12:,.2f} TFLOP", "share": f"{share:.0%}"}
