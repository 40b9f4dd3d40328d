"""The single changes that can make a workload fit a card, each measured as a Variant of the workload.

A change is a key (advisor.recommend.fit.keys: its label and note live there) and how it alters the
Variant, with the numbers its note quotes; its effect is whatever the re-estimate says.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from advisor.core.errors import AdvisorError
from advisor.core.units import format_count
from advisor.core.workload import Finetune, Precision
from advisor.recommend.fit.keys import ChangeKey
from advisor.recommend.fit.measure import Measured, Measurer, Variant, largest_fitting_batch

Settings = dict[str, object]  # the app's workload controls (WorkloadChoice fields) a change sets


@dataclass(frozen=True)
class Change:
    key: ChangeKey
    apply: Callable[[Variant], Variant]
    settings: Settings = field(default_factory=dict)  # what the app's controls can apply ({}: none)
    note_fields: dict[str, object] = field(default_factory=dict)


def _workload(**changes: object) -> Callable[[Variant], Variant]:
    return lambda v: replace(v, workload=replace(v.workload, **changes))  # type: ignore[arg-type]


def workload_change(key: ChangeKey, note_fields: dict[str, object] | None = None, **changes: object) -> Change:
    """A change that sets workload fields (which are also the app's workload controls)."""
    return Change(key, _workload(**changes), dict(changes), note_fields or {})


def _precisions(v: Variant, bf16_card: bool) -> list[Change]:
    current = v.workload.precision
    keys = [ChangeKey.AMP_BF16, ChangeKey.AMP_FP16, ChangeKey.BF16] if bf16_card else [ChangeKey.AMP_FP16]
    if current is not Precision.FP32:  # already half somewhere: only a further step down (pure bf16) is left
        keys = [ChangeKey.BF16] if bf16_card and current.amp else []
    # these keys are the precision names themselves (str values of the enum)
    return [Change(k, _workload(precision=str(k)), {"precision": str(k)}) for k in keys]


def _optimizers(v: Variant, allow_8bit: bool) -> list[Change]:
    current = v.workload.optimizer
    lighter = [ChangeKey.SGD_MOMENTUM, ChangeKey.SGD]
    keys = {"adam": lighter, "adamw": lighter, "sgd_momentum": [ChangeKey.SGD]}.get(current, [])
    # these keys are the optimizer names themselves (str values of the enum)
    changes = [Change(k, _workload(optimizer=str(k)), {"optimizer": str(k)}) for k in keys]
    if allow_8bit and current in ("adam", "adamw"):  # bitsandbytes' AdamW8bit, estimated as any optimizer is
        changes.append(
            workload_change(ChangeKey.ADAM_8BIT, {"dtype": v.workload.param_dtype_bytes}, optimizer="adamw8bit")
        )
    return changes


def candidate_changes(m: Measurer, v: Variant, bf16_card: bool, allow_8bit: bool) -> list[Change]:
    """Every single change that applies to this workload on this card (batch changes aside)."""
    w = v.workload
    changes = _precisions(v, bf16_card) if w.training or w.precision is Precision.FP32 else []
    if w.generating:  # the cache and the weights decide; advisor.recommend.fit.llm offers those changes
        return changes
    if not w.training:
        return changes + _inplace(m, v)
    if not w.checkpointing:
        changes.append(Change(ChangeKey.CHECKPOINTING, _workload(checkpointing=True), {"checkpointing": True}))
    changes += _inplace(m, v) + _optimizers(v, allow_8bit)
    if not v.freeze and w.finetune == Finetune.FULL:  # adapters already freeze the base
        changes += [
            Change(
                ChangeKey(f"freeze_{how}"),
                lambda x, how=how: replace(x, freeze=how),  # type: ignore[misc]
                note_fields={"frozen": _frozen_params(m, v, how)},
            )
            for how in ("half", "head")
        ]
    return changes


def _inplace(m: Measurer, v: Variant) -> list[Change]:
    if v.inplace or m.graph(replace(v, inplace=True)) == m.graph(v):
        return []  # nothing to rewrite (no out-of-place activation)
    return [Change(ChangeKey.INPLACE, lambda x: replace(x, inplace=True), {"inplace": True})]


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
    return Change(
        ChangeKey.SEQ_LEN, lambda x: replace(x, seq_len=tokens), {"seq_len": tokens}, {"tokens": tokens, "old": seq}
    )


def accumulation(batch: int, largest_micro: int) -> tuple[int, int]:
    """(steps, micro-batch) for `batch` in micro-batches of at most `largest_micro`: the fewest steps that
    divide the batch exactly, up to twice the fewest steps at all; else those, shared out evenly (256 in steps
    of 86 gave an effective batch of 258; 4 steps of 64 are 256)."""
    fewest = math.ceil(batch / largest_micro)
    for steps in range(fewest, 2 * fewest + 1):
        if batch % steps == 0:
            return steps, batch // steps
    return fewest, math.ceil(batch / fewest)


def batch_changes(m: Measurer, v: Variant, usable_bytes: int) -> list[Change]:
    """The largest batch that fits, and gradient accumulation of it back to the batch asked for."""
    batch = v.workload.batch
    largest = largest_fitting_batch(m, v, usable_bytes)
    if largest >= batch or largest < 1:
        return []
    changes = [Change(ChangeKey.BATCH, _workload(batch=largest), {"batch": largest}, {"batch": largest, "old": batch})]
    # Accumulation keeps the gradients live, so its micro-batch may need to be smaller still. The peak of an
    # accumulated micro-step depends on the micro-batch, not on how many there are, and grows with it: a
    # bisection finds the largest that fits in O(log batch) measurements (counting steps up one by one took
    # minutes for --batch 10**12).
    low, high = 1, largest
    while low < high:
        middle = (low + high + 1) // 2
        trial = replace(v, workload=replace(v.workload, batch=middle), accumulate=math.ceil(batch / middle))
        low, high = (middle, high) if m.measure(trial).fits(usable_bytes) else (low, middle - 1)
    steps, micro = accumulation(batch, low)
    changes.append(
        Change(
            ChangeKey.ACCUMULATE,
            lambda x: replace(x, workload=replace(x.workload, batch=micro), accumulate=steps),
            {"batch": micro},
            {"steps": steps, "batch": micro, "effective": steps * micro},
        )
    )
    return changes


def checkpoint_fields(base: Measured, with_it: Measured) -> dict[str, object]:
    extra = with_it.step_flops - base.step_flops
    share = extra / base.estimate.forward_flops if base.estimate.forward_flops else 0.0
    return {"extra": f"{extra / 1e12:,.2f} TFLOP", "share": f"{share:.0%}"}
