"""The answer in one line above every tab: what the workload needs per card, how many cards fit, the best
value and the fastest choice, or what to change when nothing fits. It reads the same ranking the
Recommendations tab shows (no second computation), so the two never disagree."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QWidget

from advisor.appstate import RankingResult, ShownEstimate
from advisor.core.units import format_bytes
from advisor.core.vocabulary import Offload
from advisor.core.workload import Finetune, Runtime, Workload
from advisor.recommend.objectives import Objective, ordered
from advisor.recommend.plans import Plan
from advisor.recommend.present import best_per_card, rate_text
from advisor.recommend.reasons import reason_text
from advisor.recommend.recommendation import Recommendation
from advisor.recommend.runtime_support import REFUSALS, refused
from advisor.ui.i18n import language, tr
from advisor.ui.recommend_model import per_thousand_usd, plan_name


def _choice(r: Recommendation) -> str:
    if r.count == 1:  # "1 x Arc A580, one card" said one card twice
        return r.card
    return tr("{count} × {card}, {plan}").format(count=r.count, card=r.card, plan=plan_name(r.plan))


def _nothing_fits(cards: list[Recommendation]) -> str:
    ranked = [c for c in cards if c.plan is not Plan.INCOMPLETE]
    if not ranked:
        return tr("No card in the catalog can be ranked.")
    runnable = [c for c in ranked if not refused(c.reasons)]  # a card its runtime cannot run is never "short"
    if not runnable:
        why = next(r for r in ranked[0].reasons if r.code in REFUSALS)
        return tr("<b>No card runs this workload.</b> {reason}").format(reason=reason_text(why, tr))
    roomiest = max(runnable, key=lambda r: r.usable_bytes)
    return tr(
        "<b>No card fits.</b> The roomiest, {card}, is {short} short: lower the batch, turn on gradient "
        "checkpointing or mixed precision, or shard over more cards (Recommendations, Make it fit)."
    ).format(card=roomiest.card, short=format_bytes(roomiest.required_bytes - roomiest.usable_bytes))


def _training_setup(result: ShownEstimate) -> str:
    """The mode, and for training what changes the answer most: LoRA/QLoRA and checkpointing (the verdict said
    neither, so a QLoRA need read as full fine-tuning's)."""
    w = result.estimate.workload
    if not w.training:
        return tr(w.mode)
    parts = [tr(w.mode)]
    if w.finetune != Finetune.FULL:
        parts.append(
            tr("{kind} rank {rank}").format(kind="QLoRA" if w.finetune == Finetune.QLORA else "LoRA", rank=w.lora_rank)
        )
    parts.append(tr("gradient checkpointing") if w.checkpointing else tr("no checkpointing"))
    if w.offload is not None:  # what leaves the card is what a buyer must know is in system RAM instead
        parts.append(
            tr("optimizer state in system RAM")
            if w.offload == Offload.OPTIMIZER
            else tr("weights and optimizer state in system RAM")
        )
    return ("，" if language() != "en" else ", ").join(parts)


def _runtime_setup(w: Workload) -> str:
    """The runtime, with the setting that decides its need: vLLM's share of the card, llama.cpp's layers left
    in system RAM (both set under More options, out of sight once folded)."""
    if w.runtime_used == Runtime.VLLM:
        return tr("vllm at {share} of the card").format(share=f"{w.gpu_memory_utilization:.2f}")
    if w.runtime_used == Runtime.LLAMA_CPP and w.gpu_layers is not None:
        return tr("llama.cpp with {layers} layers on the GPU").format(layers=w.gpu_layers)
    return w.runtime_used.value


def verdict_text(result: ShownEstimate | None, ranking: RankingResult | None) -> str:
    if result is None:
        return tr("No estimate yet: pick or build a model.")
    if result.stale:  # never an earlier network's answer under the new one's name (issue 27)
        return tr(
            "<b>Out of date:</b> the figures below are {model}'s, the last network that could be "
            "estimated; the error above says what to fix."
        ).format(model=result.estimate.model)
    # "on a single card": the need of the step as it stands; a split plan needs less per card ("Needs 131.72 GiB per
    # card" stood beside a best value of 8 x Arc Pro B60, 24 GB cards holding 16.59 GiB each)
    w, need = result.estimate.workload, format_bytes(result.estimate.memory.required_bytes)
    needs = tr("Needs <b>{need}</b> on a single card ({mode}, batch {batch}, {method})").format(
        need=need, mode=_training_setup(result), batch=w.batch, method=tr(result.method)
    )
    if w.generating:  # the KV cache is what grows with the context: say how much of the need it is, and what
        # runs it in which dtype (fp32 from 4-bit weights needs about twice bf16's, and the line said neither)
        needs = tr(
            "Needs <b>{need}</b> on a single card ({mode} in {runtime}, {precision}, batch {batch}, {prompt} + "
            "{new} tokens, KV cache {kv}, {method})"
        ).format(
            need=need,
            mode=tr(w.mode),
            runtime=_runtime_setup(w),
            precision=w.precision,
            batch=w.batch,
            prompt=w.prompt_len,
            new=w.new_tokens,
            kv=format_bytes(result.estimate.memory.at_peak.kv_cache),
            method=tr(result.method),
        )
    if ranking is None:
        return needs + " · " + tr("ranking the cards…")
    if ranking.cancelled:
        return needs + " · " + tr("ranking cancelled: change a filter to rank again")
    cards = best_per_card(list(ranking.entries))
    fitting = [c for c in cards if c.fits]
    if not fitting:
        return needs + " · " + _nothing_fits(cards)
    parts = [needs, tr("<b>{fits}</b> of {total} cards fit").format(fits=len(fitting), total=len(cards))]
    priced = [c for c in fitting if c.perf_per_dollar]
    if priced:
        best = max(priced, key=lambda r: r.perf_per_dollar or 0.0)
        value = per_thousand_usd(best)
        if best.price_old:  # the answer rests on a price over a year old: say so where it is given
            value = tr("{value}; price over a year old").format(value=value)  # "；" in Chinese
        parts.append(tr("best value: <b>{choice}</b> ({value})").format(choice=_choice(best), value=value))
    # every fitting configuration, in `recommend --objective fastest`'s own order: each card's best-value row
    # alone named 8 x Arc Pro B60 tensor parallel (15 tokens/s) where 8 x MI300X data parallel does 119
    fastest = ordered([e for e in ranking.entries if e.fits], Objective.FASTEST)[0]
    parts.append(
        tr("fastest: <b>{choice}</b> ({speed} {unit})").format(
            choice=_choice(fastest), speed=rate_text(fastest.throughput), unit=tr(fastest.throughput_unit)
        )
    )
    return " · ".join(parts)


class QtVerdict(QLabel):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("verdict")
        self.setWordWrap(True)
        self.setTextFormat(Qt.TextFormat.RichText)
        self.setStyleSheet("QLabel#verdict { background: #EEF3FA; padding: 4px 8px; }")

    def show_verdict(self, result: ShownEstimate | None, ranking: RankingResult | None) -> None:
        self.setText(verdict_text(result, ranking))
