"""The first pages: title, the verdict in one sentence, the model, the workload, and where the memory goes."""

from __future__ import annotations

from advisor.catalog.present import amount_text
from advisor.core.budget import REPLAY_MARGIN_BYTES
from advisor.core.estimate import Estimate, adapter_dtype_name
from advisor.core.units import format_bytes, format_count
from advisor.core.workload import Finetune
from advisor.recommend.objectives import Objective
from advisor.recommend.present import plan_label, rate_text
from advisor.report.content import Report
from advisor.report.markup import Text, chart, facts, figure, heading, lines, paragraph, side_by_side


def price_text(amount: float | None, condition: str | None, t: Text, kind: str | None = None) -> str:
    if amount is None:
        return t("n/a")
    if kind == "rent_hour":  # rent: per hour, in cents (below a dollar, to the hundredth of a cent)
        return t("{amount} USD per hour").format(amount=amount_text(amount))
    return t("{amount} USD ({condition})").format(amount=f"{amount:,.0f}", condition=t(condition or "new"))


def objective_text(objective: Objective, t: Text) -> str:
    return t(objective.ranked_by)


def title(report: Report, t: Text) -> str:
    e = report.estimate
    stamp = report.created.strftime("%Y-%m-%d %H:%M %Z").strip()
    return heading(t("Which GPU for {model}").format(model=e.model), 1) + paragraph(
        t("Advisor {version} report, made {date}").format(version=report.version, date=stamp), "color: #555555"
    )


def summary(report: Report, t: Text) -> str:
    best = report.best
    objective = objective_text(report.ranking.options.objective, t)
    if best is None:
        # no card passed the filters: nothing was measured, so no advice about the workload (as `recommend`)
        empty = not report.ranking.rows
        return paragraph(
            t("No card of the catalog matches the filters.")
            if empty
            else t("No listed configuration fits; try a smaller batch, mixed precision or gradient checkpointing."),
            "font-weight: bold",
        )
    text = t("Best under “{objective}”: {count} × {card} ({plan}), {throughput} {unit}, price {price}.").format(
        objective=objective,
        count=best.count,
        card=best.card,
        plan=plan_label(best.plan, t),
        throughput=rate_text(best.throughput),
        unit=t(best.throughput_unit),
        price=price_text(best.price_usd, best.price_condition, t, best.price_kind),
    )
    return paragraph(text, "font-weight: bold")


def model_layer_count(e: Estimate) -> int:
    """The model's own layers, as the app's builder lists them: a training estimate adds a cross-entropy
    row named "loss" (core.loss_head.with_loss_head) that is not part of the user's network."""
    rows = e.layers
    added_loss = e.workload.training and rows and rows[-1].name == "loss" and rows[-1].kind == "cross_entropy"
    return len(rows) - 1 if added_loss else len(rows)


def model_facts(report: Report, t: Text) -> str:
    e = report.estimate
    batch = e.workload.batch
    rows = [
        (t("Name"), e.model),
        (t("Source"), report.source or t("built in the app")),
        (t("Parameters"), f"{e.param_count:,} ({format_count(e.param_count)})"),
        (
            t("MACs, forward"),
            t("{macs} multiply-adds at batch {batch}").format(macs=format_count(e.forward_macs), batch=batch),
        ),
        (
            t("FLOPs, forward"),
            t("{flops} (FLOPs = 2 x MACs + elementwise)").format(flops=format_count(e.forward_flops)),
        ),
        (
            t("FLOPs per step"),
            format_count(e.step_flops)
            + "  "
            + (t("(forward + backward)") if e.workload.training else t("(forward only)")),
        ),
        (t("Layers"), str(model_layer_count(e))),
    ]
    return facts(rows)


def _precision(name: str, t: Text) -> str:
    return {"amp_bf16": t("AMP bf16"), "amp_fp16": t("AMP fp16"), "bf16": t("pure bf16"), "fp16": t("pure fp16")}.get(
        name, name
    )


def _optimizer(e: Estimate, t: Text) -> str:
    if not e.workload.training:
        return t("none (inference)")
    return {"sgd": "SGD", "sgd_momentum": t("SGD with momentum"), "adam": "Adam", "adamw": "AdamW"}.get(
        e.workload.optimizer, e.workload.optimizer
    )


def method_text(method: str, t: Text) -> str:
    if method == "simulated":
        return t("simulated: one real PyTorch step on the meta device, every allocation tracked")
    return t("analytic: layer formulas over the layer graph")


def workload_facts(report: Report, t: Text) -> str:
    e, w = report.estimate, report.estimate.workload
    mode = {"train": t("Training step"), "infer": t("Inference"), "generate": t("Generation")}[w.mode]
    rows = [
        (t("Mode"), mode),
        (t("Batch"), t("{batch} samples per card").format(batch=w.batch)),
        *_sequence_rows(report, t),
        (t("Precision"), _precision(w.precision, t)),
        *_storage_rows(e, t),
        (t("Optimizer"), _optimizer(e, t)),
        (t("Gradient checkpointing"), t("yes") if w.checkpointing else t("no")),
        (t("Estimation method"), method_text(e.method, t)),
    ]
    return facts(rows)


def _sequence_rows(report: Report, t: Text) -> list[tuple[str, str]]:
    """Generation's prompt and new tokens; otherwise the sequence length the step runs."""
    w, tokens = report.estimate.workload, report.tokens_per_sample
    if w.generating:
        return [(t("Prompt length"), f"{w.prompt_len:,}"), (t("New tokens"), f"{w.new_tokens:,}")]
    return [(t("Sequence length"), f"{tokens:,}" if tokens > 1 else t("n/a"))]


def _storage_rows(e: Estimate, t: Text) -> list[tuple[str, str]]:
    """How the weights and the KV cache are stored (generation), or the fine-tuning (training): the same
    options as --weights, --kv-cache and --finetune."""
    w = e.workload
    if w.generating:
        return [(t("Weights"), w.weight_format), (t("KV cache"), w.kv_cache_dtype)]
    if w.training and w.finetune != Finetune.FULL:
        kind = (
            t("QLoRA (4-bit frozen base + LoRA adapters)")
            if w.finetune == Finetune.QLORA
            else t("LoRA adapters on a frozen base")
        )
        # the adapters' dtype (--adapter-dtype) moves their gradients and optimizer state: the row said the rank only
        adapters = t("{kind}, rank {rank}, adapters in {dtype}")
        return [(t("Fine-tuning"), adapters.format(kind=kind, rank=w.lora_rank, dtype=adapter_dtype_name(w)))]
    return []


def memory(report: Report, t: Text) -> str:
    m = report.estimate.memory
    rows = [
        (
            t("Peak allocated"),
            lines(
                format_bytes(m.peak_bytes),
                # a runtime's setup (llama.cpp's context, vLLM's engine) peaks before any layer runs
                t("at {phase}, layer {layer}").format(phase=t(m.peak_phase), layer=m.peak_layer)
                if m.peak_layer
                else t("at {phase}").format(phase=t(m.peak_phase)),
            ),
        ),
        (
            t("Required"),
            lines(
                format_bytes(m.required_bytes),
                t(
                    "The smallest allocator budget the step runs in: PyTorch's caching allocator replayed under a "
                    "limit (what it cannot reuse), plus {share} and, with convolutions, a cuDNN workspace"
                ).format(share=f"{REPLAY_MARGIN_BYTES // 2**20} MiB"),
            ),
        ),
        (
            t("Reserved"),
            lines(
                format_bytes(m.reserved_bytes),
                t("What PyTorch's caching allocator would hold at the peak with plenty of memory"),
            ),
        ),
        (
            "nvidia-smi",
            lines(
                format_bytes(m.device_total_bytes),
                t("Reserved + CUDA context and library workspaces: what nvidia-smi would show"),
            ),
        ),
    ]
    return (
        heading(t("Memory breakdown"))
        + facts(rows, 20)
        + paragraph(
            t("Memory at the peak by category (what decides whether a card fits is the required memory, per card):")
        )
        + chart("breakdown")
    )


def front_pages(report: Report, t: Text) -> list[str]:
    return [
        title(report, t),
        summary(report, t),
        side_by_side((t("Model"), model_facts(report, t)), (t("Workload"), workload_facts(report, t))),
        memory(report, t),
    ]


def layer_pages(report: Report, t: Text, model_map: bool = False) -> list[str]:
    note = t("Forward + backward FLOPs over the batch: 2 x MACs + elementwise work; backward about twice the forward")
    kept = (
        t("Bytes autograd still holds for this layer when the forward pass ends")
        if report.estimate.workload.training
        else t("Bytes of each layer's output (inference keeps nothing for backward)")
    )
    pages = [
        figure("layers_memory", t("Top layers by memory"), kept),
        figure("layers_compute", t("Top layers by compute"), note),
    ]
    if model_map:
        pages.append(
            figure(
                "model_map",
                t("Choose the model"),
                t(
                    "Published ImageNet top-1 accuracy of torchvision's weights against forward compute; "
                    "circle area is the parameter count. Top left is best: accurate and cheap."
                ),
            )
        )
    return pages
