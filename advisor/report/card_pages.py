"""The later pages: the ranked cards, what more cards do and do not buy, the local GPUs, and where every
figure came from."""

from __future__ import annotations

import re
from datetime import datetime

from advisor.core.budget import REPLAY_MARGIN_BYTES
from advisor.core.overheads import DEFAULT_OVERHEAD
from advisor.core.units import format_bytes
from advisor.core.workload import Runtime, Workload
from advisor.recommend.devices import DRIVER_RESERVED_FRACTION, PROCESS_OVERHEAD_BYTES, local_need_bytes
from advisor.recommend.money import frontier
from advisor.recommend.present import (
    batch_text,
    job_cells,
    plan_label,
    prefill_text,
    rate_text,
    step_ms_text,
    three_figures,
    value_text,
)
from advisor.recommend.present import price_text as cell_price_text
from advisor.recommend.recommendation import Recommendation
from advisor.report.content import CardSource, Report, sharded_plans
from advisor.report.markup import Text, bullets, esc, figure, grid, heading, lines, paragraph
from advisor.report.model_pages import method_text, objective_text, price_text
from advisor.telemetry.present import fit
from advisor.telemetry.readings import DeviceReading, Snapshot


def _ratio(value: float | None) -> str:
    return three_figures(value) if value else "n/a"


def _price_cell(r: Recommendation, t: Text) -> str:
    """The command line's and the app's price cell ("700 used (old)", "9.96/h"), with the price's date below."""
    text = cell_price_text(r, t)
    return lines(text, r.price_date.isoformat()) if r.price_usd is not None and r.price_date else text


def _card_cell(r: Recommendation, t: Text) -> str:
    """The card, and below it how many, the plan, and how PyTorch runs it (CUDA, ROCm, XPU, Gaudi)."""
    return lines(r.card, f"{r.count} × {plan_label(r.plan, t)}, {r.software}")


def _row(rank: int, r: Recommendation, t: Text, generating: bool = False) -> list[str]:
    price = _price_cell(r, t)
    return [
        str(rank),
        _card_cell(r, t),
        t("yes") if r.fits else t("no"),
        lines(format_bytes(r.required_bytes), t("of {usable}").format(usable=format_bytes(r.usable_bytes))),
        batch_text(r),
        step_ms_text(r),
        rate_text(r.throughput),
        *([prefill_text(r, t("n/a"))] if generating else []),  # the command line's and the app's prefill cell
        price,
        value_text(r) or "n/a",  # per $1k (per $1/h of rent), as the app prints it
        _ratio(r.perf_per_watt),
    ]


def _filters(report: Report, t: Text) -> str:
    ranking = report.ranking
    one = ranking.options.max_gpus == 1  # "1 to 1 cards of a kind" read as a mistake
    words = [
        (
            t("Ranked by {objective}; {n} configurations (one card of each kind) were considered; one row per card.")
            if one
            else t(
                "Ranked by {objective}; {n} configurations (1 to {max} cards of a kind, every plan) were "
                "considered; one row per card, in its best configuration."
            )
        ).format(
            objective=objective_text(ranking.options.objective, t),
            n=ranking.configurations,
            max=ranking.options.max_gpus,
        )
    ]
    if ranking.options.budget_usd is not None:
        words.append(
            t("Budget: {budget} USD for all the cards together.").format(budget=f"{ranking.options.budget_usd:,.0f}")
        )
    cards = ranking.cards
    if cards.vendor or cards.segment or cards.min_memory_bytes:
        shown = [
            cards.vendor or "",
            t(cards.segment) if cards.segment else "",
            f"≥ {format_bytes(cards.min_memory_bytes)}" if cards.min_memory_bytes else "",
        ]
        words.append(t("Only cards: {filters}.").format(filters=", ".join(s for s in shown if s)))
    if cards.allow_used:
        words.append(t("Used prices were considered where cheaper."))
    return " ".join(words)


def recommendations(report: Report, t: Text) -> str:
    rows = report.ranking.rows
    if not rows:
        return heading(t("Recommended cards"), new_page=True) + paragraph(
            t("No card of the catalog matches the filters.")
        )
    unit = t(rows[0].throughput_unit)
    # generation: the throughput is the decode speed, and the prompts' prefill speed follows it, as in
    # `advisor recommend --mode generate` and the app
    generating = any(r.decode_tokens_per_s is not None for r in rows)
    speeds = [lines(t("Throughput"), unit, small=2)]
    if generating:
        speeds = [lines(t("Decode"), unit, small=2), lines(t("Prefill"), unit, small=2)]
    headers = ["#", t("Card"), t("Fits"), t("Needs/card"), t("Max batch"), t("Step ms"), *speeds]
    rent = all(r.price_kind == "rent_hour" for r in rows if r.perf_per_dollar is not None)
    headers += [t("Price USD"), t("Per $1/h") if rent else t("Per $1k"), t("Perf/W")]
    table = grid(
        headers,
        [_row(i + 1, r, t, generating) for i, r in enumerate(rows)],
        numeric=(0, 3, 4, 5, 6, 7, 9, 10) if generating else (0, 3, 4, 5, 6, 8, 9),
        muted=[i for i, r in enumerate(rows) if not r.fits],
        widths=(3, 21, 6, 11, 7, 7, 9, 9, 11, 8, 8) if generating else (4, 22, 6, 11, 7, 8, 12, 14, 8, 8),
    )
    legend = t(
        "Needs/card: the step's required memory at this batch (its peak plus what the allocator cannot "
        "reuse), less what sharding moves off the card, of the memory the card leaves usable. Max batch: "
        "largest batch per card that fits. Price: for all the cards of the configuration, with its "
        "condition and date. Per $1k: {unit} per 1,000 USD of the price (Per $1/h: per USD of hourly rent); "
        "Perf/W: {unit} per watt of board power (TDP)."
    ).format(unit=unit)
    return (
        heading(t("Recommended cards"), new_page=True)
        + paragraph(_filters(report, t))
        + table
        + paragraph(legend, "font-size: 7.5pt; color: #555555")
    )


def multi_gpu(report: Report, t: Text) -> str:
    notes = [
        t(
            "Data parallel: every card holds the whole model, its gradients and optimizer state. Memory does "
            "not pool across cards (not over NVLink, SLI or PCIe); more cards raise throughput, not the model "
            "size that fits."
        ),
        t(
            "Sharding divides the model state instead: ZeRO-1 shards the optimizer state, ZeRO-2 also the "
            "gradients, ZeRO-3 (FSDP) also the weights; activations are never sharded. Sharded plans need "
            "DeepSpeed or PyTorch FSDP, and they communicate more per step."
        ),
    ]
    sharded = sharded_plans(list(report.ranking.rows))
    if sharded:
        listed = ", ".join(f"{r.count} × {r.card} ({plan_label(r.plan, t)})" for r in sharded)
        notes.append(t("Listed above with sharding: {list}.").format(list=listed))
    return heading(t("More than one card")) + bullets(notes)


def job_cost(report: Report, t: Text) -> str:
    """With a job size (--samples / --tokens): its time against its cost, and the best choices named."""
    costed = report.ranking.costed
    if not costed:
        return ""
    money = report.ranking.options.money
    size = (
        t("{n} samples").format(n=f"{money.samples:,.0f}")
        if money.samples is not None
        else t("{n} tokens").format(n=f"{money.tokens or 0:,.0f}")
    )
    caption = t(
        "The whole job ({size}) on every fitting configuration with a price: renting costs hours x rent "
        "x cards; buying costs the cards plus their board power x hours x {kwh} USD/kWh. On the line, "
        "the best choices: nothing else is both faster and cheaper."
    ).format(size=size, kwh=f"{money.kwh_usd:.2f}")
    headers = [t("Card"), t("Price USD"), t("Job hours"), t("Job USD"), t("Buying beats renting after (h)")]
    # the command line's Job h, Job USD and Break-even h cells
    rows = [[_card_cell(r, t), cell_price_text(r, t), *job_cells(r)] for r in frontier(costed)]
    return figure("job_cost", t("The cost of the job"), caption) + grid(
        headers, rows, numeric=(2, 3, 4), widths=(40, 15, 13, 13, 19)
    )


def batch_chart(report: Report, t: Text) -> str:
    return figure(
        "batch",
        t("Memory vs batch"),
        t(
            "Peak and required memory per card against the batch; a line for each of the first fitting "
            "cards at the memory a step may use on it."
        ),
    )


def _device_row(device: DeviceReading, report: Report, t: Text) -> list[str]:
    need = local_need_bytes(report.estimate.memory.required_bytes)
    verdict = fit(device, need)
    values = {
        "subject": "",
        "name": device.name,
        "need": f"{verdict.required_gib:.1f}",
        "usable": f"{verdict.usable_gib or 0:.1f}",
    }
    if verdict.fits is None:
        words = t("{subject}vs your {name}: memory n/a").format(**values)
    elif verdict.fits:
        words = t("{subject}fits on your {name}: {need} of {usable} GiB").format(**values)
    else:
        words = t("{subject}does not fit on your {name}: {need} of {usable} GiB").format(**values)
    used, total = device.memory_used_bytes, device.memory_total_bytes
    return [
        str(device.index),
        device.name,
        format_bytes(total) if total else t("n/a"),
        format_bytes(used) if used is not None else t("n/a"),
        f"{device.gpu_util_pct} %" if device.gpu_util_pct is not None else t("n/a"),
        words,
    ]


def _snapshot_line(snapshot: Snapshot, t: Text) -> str:
    count = len(snapshot.devices)
    line = (
        t("{count} NVIDIA GPU · NVIDIA driver {driver}")
        if count == 1
        else t("{count} NVIDIA GPUs · NVIDIA driver {driver}")
    ).format(count=count, driver=snapshot.driver_version or t("n/a"))
    when = datetime.fromtimestamp(snapshot.timestamp).astimezone().strftime("%Y-%m-%d %H:%M")
    return line + " · " + t("read {time}").format(time=when)


def local_gpus(report: Report, t: Text) -> str:
    snapshot = report.snapshot
    title = heading(t("GPUs in this computer"), new_page=True)
    if snapshot is None:
        return title + paragraph(t("The local GPUs were not read."))
    if not snapshot.devices:
        reason = (snapshot.message or "").partition("(")[2].rstrip(")")
        return title + paragraph(t("No NVIDIA GPU found") + (f" ({reason})" if reason else "") + ".")
    headers = ["#", t("GPU"), t("Memory"), t("In use"), t("utilisation %"), t("This workload")]
    rows = [_device_row(device, report, t) for device in snapshot.devices]
    return title + paragraph(_snapshot_line(snapshot, t)) + grid(headers, rows, numeric=(0, 2, 3, 4))


def _required_rule(w: Workload, t: Text) -> str:
    """What "Required" means for this workload: vLLM's share rule (core/llm/generate.py), else the replay. The
    caption described the caching allocator's replay under a vLLM estimate, which is not how it is sized."""
    if w.generating and w.runtime_used == Runtime.VLLM:
        return t(
            "Required memory (vLLM): the card memory whose gpu_memory_utilization share ({share}) holds the "
            "weights, the startup profile's peak and the KV blocks of the batch, and whose rest holds what the "
            "engine allocates after the share, less the CUDA context, which lies outside it."
        ).format(share=f"{w.gpu_memory_utilization:.2f}")
    return t(
        "Required memory: the smallest budget in which PyTorch's caching allocator, replayed under a limit, "
        "runs the step, plus {share} and, with convolutions, a cuDNN workspace (checked against "
        "the largest batches that trained on an H200 by benchmarks/max_batch.py)."
    ).format(share=f"{REPLAY_MARGIN_BYTES // 2**20} MiB")


def _overheads(w: Workload, t: Text) -> list[str]:
    return [
        _required_rule(w, t),
        t(
            "Usable memory per card = card memory less the driver's reservation ({driver}) and the runtime's "
            "context with its library workspaces ({context}: the CUDA context with cuBLAS/cuDNN, {source}); "
            "assumed the same for every card, the HIP context on AMD and Level Zero's on Intel included."
        ).format(
            driver=f"{DRIVER_RESERVED_FRACTION:.2%}",
            context=format_bytes(PROCESS_OVERHEAD_BYTES),
            source=t(DEFAULT_OVERHEAD.source),
        ),
        t(
            "Step time: the kernels each layer launches (GEMMs, convolutions, attention, memory-bound kernels), "
            "each timed on the card, the longer of the host's dispatch and the card's work; efficiencies fitted "
            "on step times of the H200 and public runs on 15 other cards; multi-card plans add their "
            "communication over the card's link, without overlap."
        ),
        t("Throughput per watt uses the board power (TDP) of the catalog, not a measurement."),
    ]


# The estimator states its assumptions with the JSON output's field names; the report names the same figures as
# its memory table does ("peak_bytes" read as code in a sentence, issue 27).
_FIELD_WORDS = {
    "peak_bytes": "the peak allocated memory",
    "required_bytes": "the required memory",
    "reserved_bytes": "the reserved memory",
    "device_total_bytes": "the nvidia-smi total",
    "decode_flops_per_token": "the decode FLOPs per token",
}
_FIELD = re.compile(r"\b(" + "|".join(_FIELD_WORDS) + r")\b( ?)")
_TIMES = re.compile(r"(?<=\w) x (?=\w)")  # "2 x MACs": the multiplication sign the rest of the report uses


def plain_words(text: str, t: Text) -> str:
    """An assumption (already translated) with words for field names and "×" for " x "; a sentence that
    starts with a field name starts with a capital."""

    def word(match: re.Match[str]) -> str:  # Chinese puts no space between the words and what follows
        words = t(_FIELD_WORDS[match.group(1)])
        return words + (match.group(2) if words[-1].isascii() else "")

    worded = _TIMES.sub(" × ", _FIELD.sub(word, text))
    return worded[:1].upper() + worded[1:] if _FIELD.match(text) else worded


def _source_item(s: CardSource, t: Text) -> str:
    price = t("no price in the catalog")
    if s.price_usd is not None:
        where = s.price_source or t("n/a")
        if s.figures_source:  # a launch price usually cites the card's own source again: say so, once
            where = where.replace(s.figures_source, t("the same source"))
        price = t("price {price}, {date}: {source}").format(
            price=price_text(s.price_usd, s.price_condition, t, s.price_kind), date=s.price_date, source=where
        )
    figures = t("figures: {source}").format(source=s.figures_source or t("n/a"))
    # the size on the name's own span: Qt's rich text set a <b> at the body size (9 pt), larger than its line
    return (
        f'<li style="font-size: 7pt"><span style="font-size: 7pt; font-weight: bold">{esc(s.card)}</span>: '
        f"{esc(figures)}; {esc(price)}</li>"
    )


def _sources(report: Report, t: Text) -> str:
    return "<ul>" + "".join(_source_item(s, t) for s in report.ranking.sources) + "</ul>"


def provenance(report: Report, t: Text) -> str:
    e = report.estimate
    return (
        heading(t("Assumptions and provenance"))
        + heading(t("Estimation method"), 3)
        + paragraph(method_text(e.method, t))
        + heading(t("Overheads assumed"), 3)
        + bullets(_overheads(e.workload, t))
        + heading(t("Assumptions of the estimate, as the estimator states them"), 3)
        + bullets([plain_words(t(a), t) for a in e.assumptions])
        + heading(t("Data sources"), 3)
        + paragraph(
            t(
                "Card figures and prices come from the catalog; each price is the newest it holds for "
                "the card. Check prices before buying."
            )
        )
        + _sources(report, t)
    )
