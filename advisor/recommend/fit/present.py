"""Text table and JSON of a make-it-fit report."""

from __future__ import annotations

from typing import Any

from advisor.core.formatting import workload_line
from advisor.core.units import format_bytes
from advisor.recommend.fit.search import FitOption, FitReport
from advisor.recommend.reasons import reason_text

_HEADER = ("Change", "Peak", "Needs", "Fits", "Step ms", "Speed", "Method", "Note")


def speed_text(slowdown: float) -> str:
    if abs(slowdown) < 0.005:
        return "same"
    return f"{slowdown:.0%} slower" if slowdown > 0 else f"{-slowdown / (1 + slowdown):.0%} faster"


def _row(o: FitOption) -> tuple[str, ...]:
    label = o.label + (f" x{o.cards} cards" if o.cards > 1 else "")
    return (
        label,
        format_bytes(o.measured.peak_bytes),
        format_bytes(o.measured.required_bytes),
        "yes" if o.fits else "no",
        f"{o.measured.step_time_s * 1e3:.1f}",
        speed_text(o.slowdown),
        o.method,
        o.note,
    )


def _table(options: list[FitOption]) -> list[str]:
    rows = [_HEADER] + [_row(o) for o in options]
    widths = [max(len(row[c]) for row in rows) for c in range(len(_HEADER) - 1)]
    return [
        "  ".join([*(cell.ljust(w) for cell, w in zip(row, widths, strict=False)), row[-1]]).rstrip() for row in rows
    ]


def verdict(report: FitReport) -> str:
    current = report.current.measured
    spare = report.usable_bytes - current.required_bytes
    if spare < 0:
        state = f"does not fit ({format_bytes(-spare)} short)"
    elif report.needs_help:
        state = f"fits with only {format_bytes(spare)} to spare (under 10%)"
    else:
        state = f"fits with {format_bytes(spare)} to spare"
    line = (
        f"{workload_line(current.estimate)}\non {report.card}: needs {format_bytes(current.required_bytes)}, "
        f"{format_bytes(report.usable_bytes)} usable: {state}"
    )
    if report.refusal is not None:  # the memory is beside the point: the runtime does not run the card
        line += f"\n{reason_text(report.refusal)}; no change below makes it run on this card"
    return line


def render_text(report: FitReport) -> str:
    lines = [verdict(report)]
    best = report.recommended
    if best is not None:
        lines.append(
            f"Recommended: {best.label} ({speed_text(best.slowdown)}, needs "
            f"{format_bytes(best.measured.required_bytes)})"
        )
    lines += ["", "Each change alone (measured by re-estimating; speed against the workload as set):"]
    lines += _table([report.current, *report.singles])
    cheapest = report.cheapest
    training = report.current.training
    which = {
        (True, True): "keeping the training the same",
        (True, False): "keeping the outputs the same",
        (False, True): "changing the training",
        (False, False): "changing the numbers the model computes",
    }[report.combinations_same_training, training]
    lines.append("")
    if cheapest is None:
        lines.append("No set of changes fits at this batch; see the batch and sharding options.")
    else:
        lines.append(f"Fewest changes that fit, {which}, fastest first:")
        lines += _table(list(report.combinations))
    if report.sharding:
        lines += ["", "Sharding over several cards (each holds a share of the model state):"]
        lines += _table(list(report.sharding))
    if not report.allow_8bit and training:  # inference and generation hold no optimizer state
        lines += ["", "8-bit optimizer state (bitsandbytes) not considered; --allow-8bit to include it."]
    return "\n".join(lines) + "\n"


def option_json(o: FitOption) -> dict[str, Any]:
    return {
        "change": o.label,
        "changes": list(o.changes),
        "peak_bytes": o.measured.peak_bytes,
        "required_bytes": o.measured.required_bytes,
        "usable_bytes": o.usable_bytes,
        "fits": o.fits,
        "step_time_s": o.measured.step_time_s,
        "throughput": o.measured.throughput,
        "samples_per_step": o.measured.samples_per_step,
        "step_flops": o.measured.step_flops,
        "slowdown": o.slowdown,
        "same_training": o.same_training,
        "cards": o.cards,
        "method": o.method,
        "note": o.note,
        "settings": o.settings,
    }


def to_json(report: FitReport) -> dict[str, Any]:
    cheapest = report.cheapest
    return {
        "model": report.model,
        "card": report.card,
        "usable_bytes": report.usable_bytes,
        "needs_help": report.needs_help,
        "current": option_json(report.current),
        "changes": [option_json(o) for o in report.singles],
        "cheapest": option_json(cheapest) if cheapest else None,
        "recommended": option_json(report.recommended) if report.recommended else None,
        "combinations": [option_json(o) for o in report.combinations],
        "combinations_same_training": report.combinations_same_training,
        "sharding": [option_json(o) for o in report.sharding],
        "allow_8bit": report.allow_8bit,
        "runtime_refusal": None
        if report.refusal is None
        else {
            "code": report.refusal.code,
            "reason": reason_text(report.refusal),
        },
    }
