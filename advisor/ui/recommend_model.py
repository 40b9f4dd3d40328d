"""The ranking as a sortable table, and the explanation of one row in the user's language."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor

from advisor.catalog.software import context_name
from advisor.core.estimate import Estimate
from advisor.core.units import format_bytes
from advisor.recommend.plans import Plan
from advisor.recommend.present import batch_text, plan_label, prefill_text, rate_text, step_ms_text, value_text
from advisor.recommend.reasons import ReasonCode, reason_text
from advisor.recommend.recommendation import Recommendation
from advisor.recommend.runtime_support import refused
from advisor.recommend.serving import split_holdings
from advisor.ui.i18n import language, tr
from advisor.ui.money_text import money_lines, price_cell
from advisor.ui.table_model import SORT_ROLE, Index, RecordTableModel


def plan_name(plan: Plan) -> str:
    return plan_label(plan, tr)


def per_thousand_usd(r: Recommendation) -> str:
    """Value for money with its unit: work per second per 1,000 USD of the price (the engine's perf/$ x 1000)."""
    value = value_text(r)
    if value is None:
        return tr("n/a")
    if r.price_kind == "rent_hour":  # the engine's perf/$ of a rent is per dollar of hourly rent: say so
        return tr("{value} {unit} per $1/h of rent").format(value=value, unit=tr(r.throughput_unit))
    return tr("{value} {unit} per $1k").format(value=value, unit=tr(r.throughput_unit))


def _value_cell(r: Recommendation) -> str:
    """Value for money in the table: the header says "Per $1k", so the cell gives the number and its unit (a
    rent's value is per $1/h: 'per $1k' of hourly rent meant nothing to a buyer)."""
    value = value_text(r)
    if value is None:
        return tr("n/a")
    if r.price_kind == "rent_hour":
        return per_thousand_usd(r)
    return f"{value} {tr(r.throughput_unit)}"


# Shown at first (card, software, fits, needs, max batch, speed, price, value): they fit a 1366-pixel screen;
# the column chooser brings back the others (cards, plan, usable memory, step time, per watt). The prefill
# column is for generation (the panel shows it, and the plan, when the ranking is of a generate workload).
PLAN_COLUMN, THROUGHPUT_COLUMN, PREFILL_COLUMN, VALUE_COLUMN = 4, 10, 11, 13
HIDDEN_AT_FIRST = (3, PLAN_COLUMN, 7, 9, PREFILL_COLUMN, 14)


def _speed_columns(generating: bool) -> list[tuple[str, str]]:
    """Throughput, which in generation is the decode speed, and the prefill speed of the prompts."""
    if not generating:
        return [
            (tr("Throughput"), tr("Samples (or tokens) per second over all cards")),
            (tr("Prefill tok/s"), tr("Generation only")),
        ]
    return [
        (
            tr("Decode tok/s"),
            tr(
                "Generated tokens per second over all sequences and copies of the model: "
                "each decode step reads the weights and the KV cache once (the throughput)"
            ),
        ),
        (tr("Prefill tok/s"), tr("Prompt tokens per second while the prompts are processed at once (compute-bound)")),
    ]


def _value_header(generating: bool, rent: bool) -> tuple[str, str]:
    """A rent's value is per dollar of hourly rent: its header says so, and the cells hold the figure and its
    unit ("399,000 samples/s per $1/h of rent" in every cell pushed the column off a 1280-pixel screen)."""
    if rent:
        return tr("Per $1/h"), tr("Throughput per USD of hourly rent: value for money when renting")
    return (
        tr("tok/s per $1k") if generating else tr("Per $1k"),
        tr("Throughput per 1,000 USD of the price: value for money"),
    )


def _columns(generating: bool = False, rent: bool = False) -> list[tuple[str, str]]:
    return [
        ("#", tr("Rank under the chosen objective (fitting configurations first)")),
        (tr("Card"), tr("Card in the catalog, and how many of it when more than one")),
        (
            tr("Software"),
            tr(
                "How PyTorch runs the card: CUDA (NVIDIA), ROCm (AMD), XPU (Intel Arc), Gaudi (Intel "
                "Gaudi, through its own PyTorch bridge)"
            ),
        ),
        (tr("Cards"), tr("How many cards of this kind")),
        (tr("Plan"), tr("How the work is split over the cards")),
        (tr("Fits"), tr("Required memory per card is within the card's usable memory")),
        (
            tr("Needs/card"),
            tr(
                "Required bytes per card: the step's peak at this batch plus what the allocator cannot "
                "reuse, less what sharding moves off the card"
            ),
        ),
        (
            tr("Usable/card"),
            tr("Card memory less the runtime's context (CUDA, HIP or Level Zero) and the driver's reservation"),
        ),
        (tr("Max batch"), tr("Largest per-card batch whose required memory fits, from the memory curve")),
        (
            tr("Step ms"),
            tr(
                "Predicted time of one step: the kernels each layer launches, timed on the card "
                "(fitted on the H200 and public runs on 15 cards), plus communication for multi-card "
                "plans"
            ),
        ),
        *_speed_columns(generating),
        (tr("Price USD"), tr("Latest catalog price for all cards together (new, or used if allowed and cheaper)")),
        _value_header(generating, rent),
        (tr("Per watt"), tr("Throughput per watt of board power (TDP)")),
    ]


def _fits_text(r: Recommendation) -> str:
    return tr("yes") if r.fits else tr("incomplete") if r.plan is Plan.INCOMPLETE else tr("no")


def _cells(rank: int, r: Recommendation) -> list[tuple[str, Any]]:
    price = price_cell(r)
    return [
        (str(rank), rank),
        (r.card if r.count == 1 else f"{r.count} × {r.card}", r.card),
        (r.software, r.software),
        (str(r.count), r.count),
        (plan_name(r.plan), r.plan),
        (_fits_text(r), int(r.fits)),
        (format_bytes(r.required_bytes), r.required_bytes),
        (format_bytes(r.usable_bytes), r.usable_bytes),
        (batch_text(r), r.max_batch),
        (step_ms_text(r), r.step_time_s),
        (f"{rate_text(r.throughput)} {tr(r.throughput_unit)}", r.throughput),
        (prefill_text(r, tr("n/a")), r.prefill_tokens_per_s or 0.0),
        (price, r.price_usd if r.price_usd is not None else float("inf")),
        (_value_cell(r), r.perf_per_dollar or 0.0),
        (f"{r.perf_per_watt:.3g} {tr(r.throughput_unit)}/W", r.perf_per_watt),
    ]


_WORDED_ABOVE = frozenset(
    {ReasonCode.FITS, ReasonCode.DOES_NOT_FIT, ReasonCode.WOULD_FIT, ReasonCode.DATA_PARALLEL, ReasonCode.ZERO}
)


def _sentence(text: str) -> str:
    """An engine reason (a clause in lower case, as the command line joins them) as a line of its own."""
    stop = "." if language() == "en" else "。"  # a Chinese sentence ends with a full-width stop
    return text[:1].upper() + text[1:] + stop


def split_lines(r: Recommendation, e: Estimate | None) -> list[str]:
    """A generation split over cards: what each card holds (that only the split makes it fit is the engine's
    reason, ONLY_TENSOR_SPLIT / ONLY_LAYER_SPLIT, worded below with the others)."""
    held = split_holdings(e, r.plan, r.count) if e is not None else None
    if e is None or held is None:
        return []
    m = e.memory
    return [
        tr(
            "Each card holds {weights} of the {all_weights} of weights and {kv} of the {all_kv} KV cache; "
            "with the prefill activations and workspaces, which are not split, it needs {need}, where one "
            "card would need {single}."
        ).format(
            weights=format_bytes(held[0]),
            all_weights=format_bytes(m.at_peak.weights),
            kv=format_bytes(held[1]),
            all_kv=format_bytes(m.at_peak.kv_cache),
            need=format_bytes(r.required_bytes),
            single=format_bytes(m.required_bytes),
        )
    ]


def explain(r: Recommendation, batch: int, estimate: Estimate | None = None) -> str:
    """Why this configuration fits or not, in the user's language, from the engine's reasons; with the
    estimate, a split generation plan also says what each card holds."""
    head = tr("{count} × {card}, {plan}").format(count=r.count, card=r.card, plan=plan_name(r.plan))
    verdict = tr("Fits") if r.fits else tr("Does not fit")
    if refused(r.reasons):  # the runtime cannot run the card: its reason follows, the memory may still fit
        verdict = tr("Does not run")
    lines = [
        f"<b>{tr('{what}: {verdict}').format(what=head, verdict=verdict)}</b>",  # a Chinese colon in Chinese
        tr(
            "Needs {need} per card at batch {batch}; the card has {usable} usable after {context} ({margin} {what})."
        ).format(
            need=format_bytes(r.required_bytes),
            context=tr(context_name(r.software)),
            batch=batch,
            usable=format_bytes(r.usable_bytes),
            margin=format_bytes(abs(r.usable_bytes - r.required_bytes)),
            what=tr("to spare") if r.required_bytes <= r.usable_bytes else tr("short"),
        ),
        tr("Largest batch per card that fits: {n}.").format(n=batch_text(r)),
    ]
    lines += split_lines(r, estimate)
    if r.plan is Plan.DATA_PARALLEL:
        lines.append(
            tr(
                "Data parallel: every card holds the whole model, its gradients and optimizer state. "
                "Memory does not pool across cards (not over NVLink, SLI or PCIe); more cards raise "
                "throughput, not the model size that fits."
            )
        )
    elif r.plan.sharded:
        sharded = {Plan.ZERO1: tr("optimizer state"), Plan.ZERO2: tr("optimizer state and gradients")}.get(
            r.plan, tr("optimizer state, gradients and parameters")
        )
        lines.append(
            tr(
                "{plan} shards the {what} over the {count} cards, so each holds a share; activations are not sharded."
            ).format(plan=plan_name(r.plan), what=sharded, count=r.count)
        )
    # the engine's other reasons (another vendor's allocator, what a split plan does, a fit that only sharding
    # or splitting buys, missing figures), in the user's language; the lines above word the rest more fully
    lines += [_sentence(reason_text(item, tr)) for item in r.reasons if item.code not in _WORDED_ABOVE]
    money = money_lines(r)
    if any(item.code == ReasonCode.NOT_CUDA for item in r.reasons):
        money = money[1:]  # its software line: the not-CUDA reason above says it already
    lines += money
    return "<br>".join(lines)


class RecommendationTableModel(RecordTableModel):
    def __init__(self) -> None:
        self.generating = False  # the ranking is of a generate workload: decode and prefill columns
        self.rent = False  # every price is an hourly rent: the value column is per $1/h
        super().__init__(lambda: _columns(self.generating, self.rent))

    @property
    def entries(self) -> list[Recommendation]:
        return list(self.items)

    def set_entries(self, entries: list[Recommendation], generating: bool = False) -> None:
        self.generating = generating
        self.rent = bool(entries) and all(e.price_kind == "rent_hour" for e in entries if e.price_usd is not None)
        self.set_items(entries)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = 0) -> Any:
        """In generation the headers take two lines ("Decode" over "tok/s"): the plan and prefill columns it
        adds pushed the value for money off a 1280-pixel screen (issue 27)."""
        header = super().headerData(section, orientation, role)
        if self.generating and role == Qt.ItemDataRole.DisplayRole and isinstance(header, str):
            return header.replace(" ", "\n", 1)
        return header

    def format_row(self, row: int) -> list[tuple[str, Any]]:
        return _cells(row + 1, self.items[row])

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        entry: Recommendation = self.items[index.row()]  # not self.entries: a copy of every row per cell
        text, value = self.cells(index.row())[index.column()]
        if role == Qt.ItemDataRole.DisplayRole:
            if self.generating and index.column() == THROUGHPUT_COLUMN:
                return rate_text(entry.throughput)  # the header says tok/s, as the prefill column's does
            if self.rent and index.column() == VALUE_COLUMN and entry.perf_per_dollar is not None:
                return f"{value_text(entry)} {tr(entry.throughput_unit)}"  # the header: per $1/h
            if (
                self.generating
                and index.column() == VALUE_COLUMN
                and entry.perf_per_dollar is not None
                and entry.price_kind != "rent_hour"
            ):  # a rent's cell has its unit, as in training
                return value_text(entry)
            return text
        if role == SORT_ROLE:
            return value
        if role == Qt.ItemDataRole.ToolTipRole:  # the card column's may be elided: its tip is the whole name
            return text if index.column() == 1 else self.columns[index.column()][1]
        if role == Qt.ItemDataRole.ForegroundRole and not entry.fits:
            return QBrush(QColor("#9A9A9A"))
        return None
