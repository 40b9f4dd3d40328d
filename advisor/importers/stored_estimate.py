"""A checkpoint estimated as it is stored: a workload that names no `--weights` takes the checkpoint's own
format (a GPTQ, AWQ, bitsandbytes or FP8 Hub checkpoint, a GGUF file), and its estimate says so."""

from __future__ import annotations

from dataclasses import replace

from advisor.core.estimate import Estimate
from advisor.core.estimator import Estimator
from advisor.core.llm.stored import StoredWeights
from advisor.core.workload import Finetune, Workload


def as_stored(w: Workload, stored: StoredWeights | None) -> tuple[Workload, str | None]:
    """The workload with the checkpoint's storage format, and the sentence the estimate adds about it."""
    if stored is None or w.weights is not None or w.finetune == Finetune.QLORA:
        return w, None
    if w.training and w.finetune == Finetune.FULL:
        return w, (
            f"The checkpoint stores its weights as {stored.format} ({stored.source}); full training "
            f"loads them in {w.weight_format}, as estimated."
        )
    exact = (
        f"; {stored.weight_bytes:,} bytes of weights as the file's tensor table gives them"
        if stored.weight_bytes is not None
        else ""
    )
    return replace(
        w, weights=stored.format
    ), f"Weights as the checkpoint stores them: {stored.format} ({stored.source}){exact}."


def with_stored(
    estimator: Estimator, stored: StoredWeights | None, notes: tuple[str, ...] = (), model: str | None = None
) -> Estimator:
    """The estimator, running each workload as the checkpoint stores its weights, with the checkpoint's notes
    and name on every estimate."""

    def run(workload: Workload) -> Estimate:
        w, note = as_stored(workload, stored)
        result = estimator.run(w)
        extra = (*notes, note) if note else notes
        return replace(result, model=model or result.model, assumptions=(*result.assumptions, *extra))

    return replace(estimator, run=run)
