"""Text table and JSON of a ranking."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from advisor.catalog.present import amount_text
from advisor.core.units import format_bytes
from advisor.recommend.plans import Plan
from advisor.recommend.reasons import reasons_text
from advisor.recommend.recommendation import Recommendation

_HEADER = (
    "#",
    "Card",
    "N",
    "Plan",
    "SW",
    "Fits",
    "Needs/card",
    "Usable/card",
    "Max batch",
    "Step ms",
    "Throughput",
    "Price USD",
    "Perf/$",
    "Perf/W",
)
_JOB_HEADER = ("Job h", "Job USD", "Break-even h")


def _as_is(text: str) -> str:
    return text


def plan_label(plan: Plan | str, text: Callable[[str], str] = _as_is) -> str:
    """A plan in words, the one wording of the app and the PDF (the PDF printed "ZeRO-tensor_parallel")."""
    plan = Plan(plan)
    if plan.sharded:
        return f"ZeRO-{plan.zero_stage}"  # the DeepSpeed paper's spelling (Rajbhandari et al., 2020); FSDP is ZeRO-3
    return text(plan.replace("_", " ") if plan is not Plan.SINGLE else "one card")


def price_text(r: Recommendation, t: Callable[[str], str] = _as_is) -> str:
    """ "1,499", "700 used (old)", "9.96/h"; "no price: set one" when the catalog has none. The command line,
    the app's table and the PDF's table all print this cell; `t` translates its words (the app's tr, the
    report's language)."""
    if r.price_usd is None:
        return t("no price: set one")
    if r.price_kind == "rent_hour":
        text = t("{price}/h").format(price=amount_text(r.price_usd))
    else:
        condition = r.price_condition
        text = f"{r.price_usd:,.0f}" + (" " + t(condition) if condition not in (None, "new") else "")
    return text + (" " + t("(old)") if r.price_old else "")


def _hours(value: float | None) -> str:
    return "-" if value is None else f"{value:,.1f}"


def job_cells(r: Recommendation) -> tuple[str, str, str]:
    """The job's hours, its cost in USD and the hours after which buying beats renting, as the command line,
    the app and the PDF print them ("-" where there is none)."""
    cost = "-" if r.job_cost_usd is None else amount_text(r.job_cost_usd)
    return _hours(r.job_hours), cost, _hours(r.break_even_hours)


def _row(rank: int, r: Recommendation, job: bool) -> tuple[str, ...]:
    cells = (
        str(rank),
        r.card,
        str(r.count),
        r.plan,
        r.software,
        "yes" if r.fits else "no",
        format_bytes(r.required_bytes),
        format_bytes(r.usable_bytes),
        batch_text(r),
        step_ms_text(r),
        f"{rate_text(r.throughput)} {r.throughput_unit}",
        price_text(r),
        f"{r.perf_per_dollar:.3g}" if r.perf_per_dollar else "n/a",
        f"{r.perf_per_watt:.3g}",
    )
    if not job:
        return cells
    return (*cells, *job_cells(r))


def best_per_card(entries: list[Recommendation]) -> list[Recommendation]:
    """The table shows each card once, in its best-ranked configuration (JSON lists them all)."""
    seen: set[str] = set()
    best = []
    for entry in entries:
        if entry.card not in seen:
            seen.add(entry.card)
            best.append(entry)
    return best


def _with_generation(
    header: tuple[str, ...], rows: list[tuple[str, ...]], shown: list[Recommendation]
) -> tuple[tuple[str, ...], list[tuple[str, ...]]]:
    """Generate mode: the prompt's speed beside the throughput (which is then the decode speed)."""
    at = header.index("Throughput") + 1
    cells = [prefill_text(r) for r in shown]
    return (
        (*header[:at], "Prefill tok/s", *header[at:]),
        [(*row[:at], cell, *row[at:]) for row, cell in zip(rows, cells, strict=True)],
    )


def render_table(entries: list[Recommendation], top: int) -> str:
    shown = best_per_card(entries)[:top]
    job = any(r.job_hours is not None for r in entries)
    header: tuple[str, ...] = (*_HEADER, *(_JOB_HEADER if job else ()))
    body = [_row(i + 1, r, job) for i, r in enumerate(shown)]
    if any(r.decode_tokens_per_s is not None for r in shown):
        header, body = _with_generation(header, body, shown)
    rows = [header, *body]
    widths = [max(len(row[c]) for row in rows) for c in range(len(header))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows]
    lines.insert(1, "-" * len(lines[0]))
    fitting = [r for r in entries if r.fits]
    if fitting:
        best = fitting[0]
        lines += ["", f"Best: {best.count} x {best.card} ({best.plan}): {reasons_text(best.reasons)}"]
        # any fitting priced row, not the best one: under --objective fastest the fastest may be unpriced
        if all(r.price_usd is None for r in fitting):
            lines.append(
                "No fitting configuration has a price on this basis: set one with "
                "`advisor catalog set-price` or `advisor catalog import-prices`."
            )
    elif not entries:  # the filters left no card: nothing was measured, so no advice about the workload
        lines += ["", "No card in the catalog passes the filters (vendor, segment, memory, software path, budget)."]
    else:
        lines += ["", "No configuration fits; try a smaller batch, mixed precision or gradient checkpointing."]
    lines.append(
        f"{len(entries)} configurations ranked; one row per card, best configuration first "
        f"({len(shown)} shown; --top N for more, --json for every configuration)."
    )
    return "\n".join(lines) + "\n"


def to_json(entries: list[Recommendation]) -> list[dict[str, Any]]:
    return [
        {
            "card": r.card,
            "count": r.count,
            "plan": r.plan,
            "fits": r.fits,
            "reason": reasons_text(r.reasons),
            "reason_codes": [str(item.code) for item in r.reasons],
            "required_bytes": r.required_bytes,
            "usable_bytes": r.usable_bytes,
            "headroom_bytes": r.usable_bytes - r.required_bytes,
            "max_batch": r.max_batch,
            "step_time_s": r.step_time_s,
            "throughput": r.throughput,
            "throughput_unit": r.throughput_unit,
            "price_usd": r.price_usd,
            "price_date": r.price_date.isoformat() if r.price_date else None,
            "price_condition": r.price_condition,
            "price_kind": r.price_kind,
            "price_source": r.price_source,
            "price_old": r.price_old,
            "software": r.software,
            "perf_per_dollar": r.perf_per_dollar,
            "perf_per_watt": r.perf_per_watt,
            "power_w": r.power_w,
            "job_hours": r.job_hours,
            "job_cost_usd": r.job_cost_usd,
            "break_even_hours": r.break_even_hours,
            "prefill_tokens_per_s": r.prefill_tokens_per_s,
            "decode_tokens_per_s": r.decode_tokens_per_s,
        }
        for r in entries
    ]


def rate_text(value: float) -> str:
    """Samples or tokens per second: whole numbers from 10 up (22,168), two significant figures below, so a
    DeepSeek-V3 decode of 0.42 tokens/s is not printed as "0 tokens/s" (the table, the app and the PDF)."""
    return f"{value:,.0f}" if abs(value) >= 10 else f"{value:.2g}"


def value_text(r: Recommendation) -> str | None:
    """Value for money as the app and the PDF print it: throughput per 1,000 USD of a price, per 1 USD of an
    hourly rent (the engine's perf/$ of a rent is per dollar of hourly rent); None without a price. The PDF
    printed 0.00373 tokens/s per USD where the app said 3.73 per $1k."""
    if r.perf_per_dollar is None:
        return None
    return three_figures(r.perf_per_dollar if r.price_kind == "rent_hour" else r.perf_per_dollar * 1000)


def batch_text(r: Recommendation) -> str:
    """The largest batch per card, grouped as every other count is (the app's table showed 118262 beside
    22,346 samples/s)."""
    return f"{r.max_batch:,}"


def step_ms_text(r: Recommendation) -> str:
    """The step time in milliseconds (the PDF grouped its thousands, the app and the command line did not)."""
    return f"{r.step_time_s * 1e3:,.1f}"


def prefill_text(r: Recommendation, missing: str = "n/a") -> str:
    """A generate row's prefill tokens/s as the table, the app and the PDF print it (`missing` otherwise)."""
    return rate_text(r.prefill_tokens_per_s) if r.prefill_tokens_per_s else missing


def three_figures(value: float) -> str:
    """Three significant figures, never scientific notation ("2.28e+04" was how 22,800 per dollar read in
    the PDF, "8.86e+03" in the app): 22,800, 462, 0.972."""
    rounded = float(f"{value:.3g}")
    # trailing zeros kept ("1.10", not "1.1" in a column of 1.24 and 0.994); 99.96 rounds to 100, not "100."
    return f"{rounded:,.0f}" if abs(rounded) >= 100 else f"{value:#.3g}"
