"""Make it fit: what to change so that a workload runs on a card it does not fit (or fits too tightly).

Every option is measured: the workload is re-estimated with the change (memory from the estimator, time
from the fitted roofline of advisor.recommend.timing), never scaled by a rule of thumb. The options are
- single changes: smaller batch (the largest that fits, from the memory curve), gradient accumulation
  back to the asked-for batch, mixed or pure half precision, checkpointing, in-place activations, a
  lighter optimizer, 8-bit optimizer state (when allowed), freezing layers, shorter sequences;
- combinations of the non-batch changes: subsets searched smallest first, so the first size at which some
  set fits is the fewest changes that fit; those sets are ranked by the speed they cost;
- sharding over 2, 4 or 8 cards (ZeRO-1/2/3, advisor.recommend.plans), which costs cards, not changes.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from advisor.core.budget import required_for_peak
from advisor.recommend.fit.changes import (
    Change,
    Settings,
    batch_changes,
    candidate_changes,
    checkpoint_fields,
    shorter_sequence,
)
from advisor.recommend.fit.keys import CHANGES, GROUPS, SAME_TRAINING, ChangeKey
from advisor.recommend.fit.llm import llm_changes
from advisor.recommend.fit.measure import Measured, MeasuredMethod, Measurer, Subject, Target, Variant
from advisor.recommend.plans import SPLIT_PLANS, Plan, plan_cost
from advisor.recommend.reasons import Reason
from advisor.recommend.runtime_support import workload_refusal
from advisor.recommend.serving import (
    generation_cost,
    generation_memory,
    generation_peak,
    generation_run,
    split_speed,
)

# Below this share of the card's usable memory left over, a fit is too tight to leave alone: the estimate's
# own error (benchmarks/accuracy.py) and a data loader's pinned buffers can take that much.
HEADROOM = 0.10
SHARDING_COUNTS = (2, 4, 8)
MAX_COMBINATIONS = 5  # fitting sets of the smallest size shown, fastest first


@dataclass(frozen=True, kw_only=True)
class FitOption:
    changes: tuple[ChangeKey, ...]  # () is the workload as it is
    measured: Measured
    usable_bytes: int
    slowdown: float  # throughput lost against the workload as set: 0.25 = 25% slower, negative = faster
    notes: tuple[tuple[ChangeKey, dict[str, object]], ...] = ()  # (change, its note's fields) per change
    settings: Settings = field(default_factory=dict)  # what the app's workload controls can apply
    cards: int = 1
    method: MeasuredMethod | Literal[""] = ""

    @property
    def fits(self) -> bool:
        return self.measured.required_bytes <= self.usable_bytes

    @property
    def training(self) -> bool:
        """A training workload: the changes' training words; inference and generation have their own."""
        return self.measured.estimate.workload.training

    @property
    def label(self) -> str:
        return " + ".join(CHANGES[c].words(self.training)[0] for c in self.changes or (ChangeKey.CURRENT,))

    @property
    def note(self) -> str:
        return "; ".join(CHANGES[key].words(self.training)[1].format(**values) for key, values in self.notes)

    @property
    def same_training(self) -> bool:
        """The same model trains the same way (up to rounding); see fit.keys.ChangeKind.same_training."""
        return all(c in SAME_TRAINING for c in self.changes)

    @property
    def applicable(self) -> bool:
        """Every part of it is a workload control of the app (freezing and sharding are not)."""
        return bool(self.settings) and all(CHANGES[c].app_control for c in self.changes)


@dataclass(frozen=True)
class FitReport:
    model: str
    card: str
    usable_bytes: int
    current: FitOption
    singles: tuple[FitOption, ...]  # each change alone, fitting ones first, fastest first
    combinations: tuple[FitOption, ...]  # the fewest non-batch changes that fit together, fastest first
    # True: the combinations keep the training the same (searched first); False: none of those fit
    sharding: tuple[FitOption, ...]  # each ZeRO stage on the fewest cards that fit it
    combinations_same_training: bool = True
    allow_8bit: bool = False
    # why the workload's runtime cannot run this card at all (recommend/runtime_support.py): no change here
    # makes it run, whatever memory it frees
    refusal: Reason | None = None

    @property
    def needs_help(self) -> bool:
        return self.current.measured.required_bytes > self.usable_bytes * (1 - HEADROOM)

    @property
    def cheapest(self) -> FitOption | None:
        """The fewest changes that fit while keeping the batch, and of those the one costing the least speed."""
        return self.combinations[0] if self.combinations else None

    @property
    def recommended(self) -> FitOption | None:
        """The fastest option that fits and keeps the training the same, gradient accumulation included;
        failing that, the cheapest set of changes."""
        same = [o for o in (*self.singles, *self.combinations) if o.fits and o.same_training]
        if not self.needs_help:  # it fits already: only a change that buys speed is worth recommending
            faster = [o for o in same if o.slowdown < 0]
            return min(faster, key=lambda o: o.slowdown) if faster else None
        return min(same, key=lambda o: o.slowdown) if same else self.cheapest


class _Search:
    def __init__(self, subject: Subject, card: Target, allow_8bit: bool) -> None:
        self.m = Measurer(subject, card)
        self.card, self.allow_8bit = card, allow_8bit
        self.base = Variant(subject.workload, seq_len=subject.seq_len)
        self.baseline = self.m.measure(self.base)

    def option(
        self,
        changes: Sequence[Change],
        variant: Variant,
        usable: int | None = None,
        cards: int = 1,
        measured: Measured | None = None,
    ) -> FitOption:
        measured = measured or self.m.measure(variant)
        notes, settings = [], {}
        for change in changes:
            fields = change.note_fields
            if change.key is ChangeKey.CHECKPOINTING:
                fields = checkpoint_fields(
                    self.m.measure(replace(variant, workload=replace(variant.workload, checkpointing=False))), measured
                )
            notes.append((change.key, fields))
            settings.update(change.settings)
        slowdown = self.baseline.throughput / measured.throughput - 1 if measured.throughput else float("inf")
        return FitOption(
            changes=tuple(c.key for c in changes),
            measured=measured,
            usable_bytes=self.card.usable_bytes if usable is None else usable,
            slowdown=slowdown,
            notes=tuple(notes),
            settings=settings,
            cards=cards,
            method=measured.method,
        )

    def singles(self, changes: list[Change]) -> list[FitOption]:
        options = [self.option([c], c.apply(self.base)) for c in changes]
        return sorted(options, key=lambda o: (not o.fits, not o.same_training, o.slowdown))

    def combinations(self, changes: list[Change]) -> list[FitOption]:
        """Sets of changes from different groups, smallest first; stops at the first size where one fits
        (so no smaller set fits)."""
        by_key = {c.key: c for c in changes}
        groups = [[by_key[k] for k in group if k in by_key] for group in GROUPS]
        groups = [g for g in groups if g]
        for size in range(1, len(groups) + 1):
            fitting = [o for o in (self._combined(c) for c in _sets(groups, size)) if o.fits]
            if fitting:
                return sorted(fitting, key=lambda o: o.slowdown)[:MAX_COMBINATIONS]
        return []

    def _combined(self, changes: tuple[Change, ...]) -> FitOption:
        variant = self.base
        for change in changes:
            variant = change.apply(variant)
        return self.option(changes, variant)

    def sharding(self) -> list[FitOption]:
        """Each ZeRO stage on the fewest cards (2, 4, 8) on which it fits; the model state it moves off each
        card is plans.plan_cost's, communication time is added at the card's link bandwidth."""
        if self.base.workload.generating:
            return self.split_plans()
        if not self.base.workload.training:
            return []
        result = self.baseline.estimate
        dev = self.card.device(self.base.workload)
        options = []
        for plan in (Plan.ZERO1, Plan.ZERO2, Plan.ZERO3):
            for count in SHARDING_COUNTS:
                cost = plan_cost(result, plan, count)
                peak = self.baseline.peak_bytes - cost.saved_bytes
                seconds = self.baseline.step_time_s + dev.comm_seconds(cost.comm_bytes, count)
                required = required_for_peak(peak, self.baseline.peak_bytes, self.baseline.required_bytes)
                per_card = replace(
                    self.baseline,
                    peak_bytes=peak,
                    required_bytes=required,
                    step_time_s=seconds,
                    throughput=self.baseline.throughput * self.baseline.step_time_s / seconds,
                )
                if per_card.fits(self.card.usable_bytes) or count == SHARDING_COUNTS[-1]:
                    notes = {"count": count, "link": dev.ring_name(count)}
                    change = Change(ChangeKey(plan), lambda v: v, note_fields=notes)
                    options.append(self.option([change], self.base, cards=count, measured=per_card))
                    break
        return options

    def split_plans(self) -> list[FitOption]:
        """Generation: tensor parallel and layer split, each on the fewest cards (2, 4, 8) it fits on; memory
        per card and speed as `advisor recommend` computes them (advisor.recommend.serving)."""
        result, run = self.baseline.estimate, generation_run(self.baseline.estimate)
        dev = self.card.device(self.base.workload)
        options = []
        for plan in SPLIT_PLANS:
            costs = [c for n in SHARDING_COUNTS for c in generation_cost(result, n) if c.plan == plan]
            for cost in costs:
                required = generation_memory(result, cost, self.card.usable_bytes)[0]
                if run is None or (required > self.card.usable_bytes and cost is not costs[-1]):
                    continue
                speed = split_speed(run, self.card.card, dev, cost)
                per_card = replace(
                    self.baseline,
                    peak_bytes=generation_peak(result, cost),
                    required_bytes=required,
                    step_time_s=speed.decode_step_s,
                    throughput=speed.decode_tokens_per_s,
                )
                notes = {"count": cost.count, "link": dev.ring_name(cost.count)}
                change = Change(ChangeKey(plan), lambda v: v, note_fields=notes)
                options.append(self.option([change], self.base, cards=cost.count, measured=per_card))
                break
        return options


def _sets(groups: list[list[Change]], size: int) -> Iterator[tuple[Change, ...]]:
    for chosen in itertools.combinations(groups, size):
        yield from itertools.product(*chosen)


def make_it_fit(subject: Subject, card: Target, allow_8bit: bool = False) -> FitReport:
    """Every change (and the fewest changes together) that makes the workload fit the card, measured."""
    search = _Search(subject, card, allow_8bit)
    base, usable = search.base, card.usable_bytes
    changes = candidate_changes(search.m, base, card.bf16, allow_8bit)
    shorter = shorter_sequence(search.m, base, usable) if not base.workload.generating else None
    if shorter is not None:
        changes.append(shorter)
    changes += llm_changes(search.m, base, usable)
    singles = search.singles(batch_changes(search.m, base, usable) + changes)
    # a change that does not lower the peak alone (in-place GELU makes autograd keep a copy) is left out,
    # here and from the combinations, unless it buys speed (a smaller weight format decodes faster)
    singles = [o for o in singles if o.measured.peak_bytes < search.baseline.peak_bytes or o.slowdown < 0]
    helpful = {o.changes[0] for o in singles}
    changes = [c for c in changes if c.key in helpful]
    # changes that keep the training the same first; only if none of their sets fits, every change
    combos = search.combinations([c for c in changes if c.key in SAME_TRAINING])
    same = bool(combos)
    if not combos:
        combos = search.combinations(changes)
    return FitReport(
        search.baseline.estimate.model,
        card.name,
        usable,
        search.option([], base),
        tuple(singles),
        tuple(combos),
        tuple(search.sharding()),
        same,
        allow_8bit,
        workload_refusal(base.workload, card.card),
    )
