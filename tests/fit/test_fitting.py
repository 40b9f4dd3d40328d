"""Each change lowers (or trades) what it should, with the numbers checked against the estimator itself."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import replace

import pytest

from advisor.catalog import CardRecord, find_card, open_catalog
from advisor.core import zoo
from advisor.core.analytic import estimate
from advisor.core.loss_head import with_loss_head
from advisor.core.replay import step_plan
from advisor.core.tracker import rounded
from advisor.core.workload import Workload
from advisor.recommend.fit.keys import GROUPS, SAME_TRAINING
from advisor.recommend.fit.measure import (
    Measurer,
    Subject,
    Target,
    Variant,
    largest_fitting_batch,
    target,
)
from advisor.recommend.fit.search import FitOption, FitReport, make_it_fit
from advisor.recommend.plans import plan_cost
from advisor.recommend.rewrites import freeze_before, trainable_layers, with_inplace_activations


@pytest.fixture(scope="module")
def cards(tmp_path_factory: pytest.TempPathFactory) -> dict[str, CardRecord]:
    catalog = open_catalog(tmp_path_factory.mktemp("catalog") / "catalog.sqlite3")
    with catalog.read() as session:
        found = {name: find_card(session, name) for name in ("RTX 3060 12GB", "T4", "H100 SXM")}
    catalog.close()
    return found


@pytest.fixture(scope="module")
def rtx3060(cards: dict[str, CardRecord]) -> Target:
    return target(cards["RTX 3060 12GB"])


def gpt2(seq: int = 1024, batch: int = 8) -> Subject:
    return Subject(zoo.build("gpt2-medium", seq), Workload(batch=batch), seq, lambda n: zoo.build("gpt2-medium", n))


def resnet50(batch: int = 128) -> Subject:
    return Subject(zoo.build("resnet50"), Workload(batch=batch))


FitOnRtx3060 = Callable[..., FitReport]


@pytest.fixture(scope="module")
def fit_on_3060(rtx3060: Target) -> FitOnRtx3060:
    """make_it_fit(gpt2() or resnet50(), rtx3060[, allow_8bit]), searched once per module: several tests read
    the same (frozen) report, each checking its own option; a search is some seconds of allocator replay."""
    made: dict[tuple[str, bool], FitReport] = {}

    def fit(subject: str, allow_8bit: bool = False) -> FitReport:
        if (subject, allow_8bit) not in made:
            build = {"gpt2": gpt2, "resnet50": resnet50}[subject]
            made[(subject, allow_8bit)] = make_it_fit(build(), rtx3060, allow_8bit=allow_8bit)
        return made[(subject, allow_8bit)]

    return fit


def option(report: FitReport, *keys: str) -> FitOption:
    for o in (*report.singles, *report.combinations, *report.sharding):
        if o.changes == keys:
            return o
    raise AssertionError(f"{keys} not offered: {[o.changes for o in report.singles]}")


def per_tensor_bytes(graph_name: str, dtype: int) -> int:
    """Parameters of every layer as the step allocates them: one tensor per layer, rounded to 512 B."""
    graph = with_loss_head(zoo.build(graph_name))
    return sum(rounded(n.op.param_count(graph.input_specs(n)) * dtype) for n in graph.nodes)


def test_sgd_instead_of_adam_removes_exactly_two_fp32_states_per_parameter(fit_on_3060: FitOnRtx3060) -> None:
    report = fit_on_3060("resnet50")
    adam = report.current.measured.estimate
    sgd = option(report, "sgd").measured.estimate
    assert adam.memory.at_peak.optimizer_state == 2 * per_tensor_bytes("resnet50", 4)
    assert adam.memory.at_peak.optimizer_state == pytest.approx(2 * adam.param_count * 4, rel=1e-3)
    assert sgd.memory.at_peak.optimizer_state == 0
    assert sgd.workload.optimizer == "sgd"
    # optimizer state is live through the whole step: the peak, at the same moment, drops by all of it
    assert (adam.memory.peak_phase, adam.memory.peak_layer) == (sgd.memory.peak_phase, sgd.memory.peak_layer)
    assert adam.memory.peak_bytes - sgd.memory.peak_bytes == adam.memory.at_peak.optimizer_state
    momentum = option(report, "sgd_momentum").measured.estimate
    assert momentum.memory.at_peak.optimizer_state == per_tensor_bytes("resnet50", 4)


def test_checkpointing_lowers_the_peak_and_costs_about_one_forward(fit_on_3060: FitOnRtx3060) -> None:
    subject = gpt2()
    report = fit_on_3060("gpt2")
    plain, ckpt = report.current.measured, option(report, "checkpointing").measured
    direct = estimate(subject.graph, replace(subject.workload, checkpointing=True))
    assert ckpt.peak_bytes == direct.memory.peak_bytes < plain.peak_bytes
    blocks = step_plan(with_loss_head(subject.graph), direct.workload).blocks
    recomputed = sum(direct.layers[i].forward_flops for block in blocks for i in block)
    assert ckpt.step_flops - plain.step_flops == recomputed
    # the 24 transformer layers are recomputed, the embeddings and the LM head are not
    assert 0.7 * plain.estimate.forward_flops < recomputed < plain.estimate.forward_flops
    assert ckpt.step_time_s > plain.step_time_s
    assert "87% of a forward" in option(report, "checkpointing").note


def test_mixed_precision_lowers_the_peak_and_bf16_needs_a_card_that_has_it(
    cards: dict[str, CardRecord], fit_on_3060: FitOnRtx3060
) -> None:
    subject = resnet50()
    on_3060 = fit_on_3060("resnet50")
    amp = option(on_3060, "amp_bf16").measured
    assert amp.peak_bytes == estimate(subject.graph, Workload(batch=128, precision="amp_bf16")).memory.peak_bytes
    assert amp.peak_bytes < on_3060.current.measured.peak_bytes
    assert amp.step_time_s < on_3060.current.measured.step_time_s  # tensor cores
    pure = option(on_3060, "bf16").measured.estimate
    assert pure.memory.at_peak.weights == pytest.approx(
        on_3060.current.measured.estimate.memory.at_peak.weights / 2, rel=1e-3
    )
    on_t4 = make_it_fit(subject, target(cards["T4"]))  # Turing: fp16 tensor cores, no bf16
    offered = {o.changes for o in on_t4.singles}
    assert ("amp_fp16",) in offered and ("amp_bf16",) not in offered and ("bf16",) not in offered


def test_eight_bit_state_is_bitsandbytes_adamw8bit(fit_on_3060: FitOnRtx3060) -> None:
    """The change is the workload's own --optimizer adamw8bit, estimated as any optimizer is (it was a quarter
    of Adam's state, scaled on the estimate and marked "modelled"), and the app's Optimizer box can apply it."""
    assert ("adam_8bit",) not in {o.changes for o in fit_on_3060("resnet50").singles}
    report = fit_on_3060("resnet50", allow_8bit=True)
    eight = option(report, "adam_8bit")
    assert eight.settings == {"optimizer": "adamw8bit"} and eight.applicable
    state = eight.measured.estimate.memory.at_peak.optimizer_state
    params = eight.measured.estimate.param_count
    # two uint8 states and an fp32 absmax per block of 256 (tensors under 4,096 elements keep two fp32 states):
    # at least 2 bytes and at most 2 + 2 x 4/256 + a small tensor's 8 bytes per parameter
    assert 2 * params <= state <= 2.2 * params
    adam = report.current.measured.estimate.memory.at_peak.optimizer_state
    assert report.current.measured.peak_bytes - eight.measured.peak_bytes >= adam - state - 512 * 161 * 2
    assert eight.method == report.current.measured.method


def test_freezing_all_but_the_head_drops_gradients_state_and_saved_activations(fit_on_3060: FitOnRtx3060) -> None:
    subject = resnet50()
    report = fit_on_3060("resnet50")
    head = option(report, "freeze_head").measured.estimate
    fc = subject.graph.nodes[trainable_layers(subject.graph)[-1]]
    assert fc.name == "fc"
    assert head.param_count == 2048 * 1000 + 1000
    assert head.memory.at_peak.optimizer_state == 2 * rounded(head.param_count * 4)  # Adam: fc's two states
    frozen = freeze_before(subject.graph, trainable_layers(subject.graph)[-1])
    assert head.memory.peak_bytes == estimate(frozen, subject.workload).memory.peak_bytes
    # the backbone saves nothing for backward; only fc's input (the pooled features) is kept
    assert sum(r.kept_bytes for r in head.layers[:-2]) == 128 * 2048 * 4
    assert head.memory.at_peak.weights == report.current.measured.estimate.memory.at_peak.weights
    assert head.step_flops < report.current.measured.step_flops  # no backward through the backbone


def test_largest_batch_fits_and_one_more_does_not(rtx3060: Target) -> None:
    subject = resnet50(256)
    m = Measurer(subject, rtx3060)
    base = Variant(subject.workload)
    largest = largest_fitting_batch(m, base, rtx3060.usable_bytes)
    assert 1 <= largest < 256
    for batch, fits in ((largest, True), (largest + 1, False)):
        result = estimate(subject.graph, Workload(batch=batch))
        assert (result.memory.required_bytes <= rtx3060.usable_bytes) is fits


def test_accumulation_keeps_the_effective_batch_and_its_gradients(fit_on_3060: FitOnRtx3060) -> None:
    report = fit_on_3060("gpt2")
    acc = option(report, "accumulate")
    steps, micro = acc.notes[0][1]["steps"], acc.notes[0][1]["batch"]
    assert isinstance(steps, int) and isinstance(micro, int)
    assert steps * micro >= 8 and acc.measured.samples_per_step == steps * micro
    plain_micro = estimate(gpt2().graph, Workload(batch=micro))
    # .grad lives through the later micro-steps' forward: more than one plain step of the micro-batch
    assert acc.measured.peak_bytes > plain_micro.memory.peak_bytes
    assert acc.measured.peak_bytes <= plain_micro.memory.peak_bytes + plain_micro.param_count * 4 + 2**20
    assert acc.fits and acc.same_training


def test_shorter_sequences_are_the_model_rebuilt_at_that_length(fit_on_3060: FitOnRtx3060) -> None:
    report = fit_on_3060("gpt2")
    short = option(report, "seq_len")
    tokens = short.settings["seq_len"]
    assert isinstance(tokens, int) and tokens < 1024 and short.fits
    direct = estimate(zoo.build("gpt2-medium", tokens), Workload(batch=8))
    assert short.measured.peak_bytes == direct.memory.peak_bytes
    assert not short.same_training


def test_sharding_moves_model_state_off_each_card(rtx3060: Target) -> None:
    subject = Subject(zoo.build("gpt2-medium", 128), Workload(batch=2), 128, lambda n: zoo.build("gpt2-medium", n))
    report = make_it_fit(subject, rtx3060)
    base = report.current.measured
    for o in report.sharding:
        cost = plan_cost(base.estimate, o.changes[0], o.cards)
        assert o.measured.peak_bytes == base.peak_bytes - cost.saved_bytes
        assert o.measured.step_time_s > base.step_time_s  # communication
    zero3 = option(report, "zero3")
    assert zero3.fits and zero3.cards in (2, 4, 8)


def test_inplace_is_listed_only_where_it_lowers_the_peak(rtx3060: Target) -> None:
    subject = Subject(zoo.build("bert-base", 512), Workload(batch=48), 512, lambda n: zoo.build("bert-base", n))
    rewritten = estimate(with_inplace_activations(subject.graph), subject.workload)
    plain = estimate(subject.graph, subject.workload)
    assert rewritten.memory.peak_bytes > plain.memory.peak_bytes  # in-place GELU: autograd keeps a copy
    assert ("inplace",) not in {o.changes for o in make_it_fit(subject, rtx3060).singles}


def pool(report: FitReport) -> list[list[str]]:
    """The changes the combination search draws from: those that helped alone, of the same training first."""
    helpful = {o.changes[0] for o in report.singles}
    keys = [k for k in helpful if report.combinations_same_training is False or k in SAME_TRAINING]
    return [[k for k in group if k in keys and k not in ("batch", "accumulate")] for group in GROUPS]


@pytest.mark.parametrize("allow_8bit", [False, True])
def test_the_cheapest_set_fits_and_no_smaller_set_does(
    rtx3060: Target, fit_on_3060: FitOnRtx3060, allow_8bit: bool
) -> None:
    subject = gpt2()
    report = fit_on_3060("gpt2", allow_8bit=allow_8bit)
    cheapest = report.cheapest
    assert cheapest is not None and cheapest.fits
    assert cheapest.slowdown == min(o.slowdown for o in report.combinations)
    m = Measurer(subject, rtx3060)
    groups = [g for g in pool(report) if g]
    single_changes = {o.changes[0]: o for o in report.singles}
    for size in range(1, len(cheapest.changes)):
        for chosen in itertools.combinations(groups, size):
            for keys in itertools.product(*chosen):
                variant = Variant(subject.workload, seq_len=1024)
                for key in keys:
                    variant = apply(variant, single_changes[key])
                assert not m.measure(variant).fits(rtx3060.usable_bytes), keys
    # and its own numbers are the estimator's: re-measured from scratch, it still fits
    variant = Variant(subject.workload, seq_len=1024)
    for key in cheapest.changes:
        variant = apply(variant, single_changes[key])
    assert Measurer(subject, rtx3060).measure(variant).required_bytes == cheapest.measured.required_bytes


def apply(variant: Variant, single: FitOption) -> Variant:
    """Rebuilds a change from what the report says about it (settings, or the modelled flags)."""
    key = single.changes[0]
    if key.startswith("freeze_"):
        return replace(variant, freeze=key.removeprefix("freeze_"))
    if key == "inplace":
        return replace(variant, inplace=True)
    if key == "seq_len":
        return replace(variant, seq_len=int(single.settings["seq_len"]))  # type: ignore[call-overload]
    return replace(variant, workload=replace(variant.workload, **single.settings))  # type: ignore[arg-type]


def test_a_workload_with_room_to_spare_needs_no_help(cards: dict[str, CardRecord]) -> None:
    report = make_it_fit(resnet50(32), target(cards["H100 SXM"]))
    assert report.current.fits and not report.needs_help


def test_recommended_is_the_fastest_fitting_option_that_keeps_the_training(fit_on_3060: FitOnRtx3060) -> None:
    report = fit_on_3060("gpt2", allow_8bit=True)
    best = report.recommended
    assert best is not None and best.fits and best.same_training
    same = [o for o in (*report.singles, *report.combinations) if o.fits and o.same_training]
    assert best.slowdown == min(o.slowdown for o in same)
    # 8 micro-steps of 1 fit and keep the training; the recommendation is never slower than that
    accumulate = option(report, "accumulate")
    assert accumulate.fits and accumulate.same_training and best.slowdown <= accumulate.slowdown
