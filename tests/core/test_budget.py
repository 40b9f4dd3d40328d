"""The smallest allocator budget a step runs in: the caching allocator under a limit, and required_bytes."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

import pytest

from advisor.core import zoo
from advisor.core.allocator import (
    CachingAllocatorModel,
    OutOfBudget,
    free_replay,
    required_budget_bytes,
    runs_within,
    training_loop_events,
)
from advisor.core.analytic import estimate
from advisor.core.budget import (
    REPLAY_MARGIN_BYTES,
    analytic_curves,
    conv_workspace_margin_bytes,
    required_bytes,
    required_from_peaks,
)
from advisor.core.curve import MemoryCurve, memory_curve
from advisor.core.loss_head import with_loss_head
from advisor.core.tracker import Key
from advisor.core.workload import Workload

MIB = 2**20


def alloc(name: str, mib: int) -> tuple[Key, int]:
    return (name, 0, 0), mib * MIB


def free(name: str, mib: int) -> tuple[Key, int]:
    return (name, 0, 0), -mib * MIB


def test_a_cached_segment_is_released_when_the_limit_is_reached() -> None:
    # 30 + 30 MiB segments; A freed; a 40 MiB request finds no cached block that large:
    # without a limit 30 + 30 + 40 = 100 MiB reserved; at 70 MiB, A's whole free segment goes back first
    events = [alloc("a", 30), alloc("b", 30), free("a", 30), alloc("c", 40)]
    assert runs_within(events, 70 * MIB)  # 30 (b) + 40 (c) = 70
    assert not runs_within(events, 69 * MIB)
    assert 70 * MIB <= required_budget_bytes(events) <= 72 * MIB  # found to 2 MiB


def test_a_split_segment_cannot_be_released() -> None:
    # 40 MiB segment; freed; 20 MiB request takes it and splits off 20 free MiB, which stays in that segment;
    # a 30 MiB request needs a new segment: 40 + 30 = 70 MiB, although only 20 + 30 = 50 MiB are in use
    events = [alloc("x", 40), free("x", 40), alloc("y", 20), alloc("z", 30)]
    model = CachingAllocatorModel(69 * MIB)
    with pytest.raises(OutOfBudget):
        for key, size in events:
            model.malloc(key, size) if size > 0 else model.release(key)
    assert runs_within(events, 70 * MIB)
    assert required_budget_bytes(events) >= 70 * MIB


def test_small_requests_share_two_mib_segments() -> None:
    # 1 KiB and 2 KiB come from one 2 MiB small-pool segment: a 2 MiB budget holds both
    events = [(("s", 0, 0), 1024), (("s", 1, 0), 2048)]
    assert runs_within(events, 2 * MIB)
    assert not runs_within(events, 2 * MIB - 1)


def test_a_small_block_splits_off_a_remainder_of_exactly_512_bytes() -> None:
    # should_split (CUDACachingAllocator.cpp, small pool): remaining >= kMinBlockSize. 1 MiB takes half of a
    # 2 MiB segment; 1 MiB - 512 B takes the other half and leaves 512 B free, which the last 512 B request
    # gets: one segment, 1,048,576 + 1,048,064 + 512 = 2,097,152 B (a strict > 512 would need a second one)
    events = [(("a", 0, 0), MIB), (("b", 0, 0), MIB - 512), (("c", 0, 0), 512)]
    assert runs_within(events, 2 * MIB)
    assert free_replay(events).reserved_bytes == 2 * MIB


def test_the_first_iteration_creates_the_optimizer_state_at_its_step() -> None:
    step = [
        (Key("weights", 0, 0), 100),
        (Key("optimizer_state", 0, 0), 100),
        (Key("activation", 1, 0), 50),
        (Key("activation", 1, 0), -50),
        (Key("param_grad", 0, 0), 100),
        (Key("optimizer_temporary", 0, 0), 100),
        (Key("optimizer_temporary", 0, 0), -100),
    ]
    loop = training_loop_events(step, steps=2)
    first = loop[: len(step)]
    assert [key[0] for key, _ in first] == [
        "weights",
        "activation",
        "activation",
        "param_grad",
        "optimizer_state",
        "optimizer_temporary",
        "optimizer_temporary",
    ]
    # between iterations the gradient (made by the step) is dropped, the weights and state stay
    assert loop[len(step)] == (("param_grad", 0, 0), -100)
    assert loop[len(step) + 1 :] == step


def test_required_bytes_adds_the_margins() -> None:
    # the margin is bytes, not a share of the peak: one 20 MiB large-pool segment, the replay's granule
    assert REPLAY_MARGIN_BYTES == 20 * MIB == 20_971_520
    # replay 1,000 MiB, peak 900 MiB, largest convolution output 64 MiB: 1,000 + 64 + 20 = 1,084 MiB
    assert required_bytes(1000 * MIB, 900 * MIB, 64 * MIB) == 1084 * MIB
    assert required_bytes(800 * MIB, 900 * MIB, 0) == 920 * MIB  # never below the peak: 900 + 20
    # the same 20 MiB at a 70 GiB peak (1% of the peak would have been 716.8 MiB)
    assert required_bytes(70 * 1024 * MIB, 70 * 1024 * MIB, 0) == 70 * 1024 * MIB + 20 * MIB
    rows = [
        SimpleNamespace(kind=kind, output_bytes=n)
        for kind, n in (("linear", 10), ("conv", 7), ("Conv2d", 9), ("relu", 99))
    ]
    assert conv_workspace_margin_bytes(rows) == 9  # the largest convolution output, whatever the other layers


def test_required_curve_adds_affine_fragmentation() -> None:
    peaks = MemoryCurve(((1000.0, 10.0),), 0)  # peak = 1,000 + 10 b
    # fragmentation 100 at batch 16 and 160 at batch 64: slope 60 / 48 = 1.25, intercept 100 - 16 x 1.25 = 80
    required = required_from_peaks(peaks, [(64, 160), (16, 100)], conv_margin_per_sample=2.0)
    # (1,000 + 10 x 32) + 80 + 20,971,520 (the replay margin) + (1.25 + 2) x 32 = 1,320 + 80 + 104 + 20,971,520
    assert required.peak_bytes(32) == 1504 + 20_971_520
    assert required.max_batch(1504 + 20_971_520) == 32
    assert required.max_batch(1503 + 20_971_520) == 31
    # a steep fragmentation line crosses under the peak curve at small batches: there the peak curve holds
    steep = required_from_peaks(peaks, [(64, 1000), (16, 40)], conv_margin_per_sample=0.0)
    # slope 960 / 48 = 20, intercept 40 - 320 = -280: at batch 1 the line says 1,010 - 260 = 750 < 1,010
    assert steep.peak_bytes(1) == 1010 + 20_971_520
    assert steep.peak_bytes(64) == 1640 + 1000 + 20_971_520


def test_an_estimate_needs_more_than_its_peak_and_a_conv_net_keeps_a_workspace_margin() -> None:
    result = estimate(zoo.build("resnet18", None), Workload("train", 16, "fp32", "sgd_momentum"))
    memory = result.memory
    largest_conv = max(r.output_bytes for r in result.layers if r.kind == "conv")
    assert largest_conv == 16 * 64 * 112 * 112 * 4  # conv1 output, fp32: 51,380,224 B
    assert memory.required_bytes >= memory.peak_bytes + largest_conv + REPLAY_MARGIN_BYTES
    assert memory.required_bytes < memory.peak_bytes * 1.25


def test_the_curves_add_the_loss_head_themselves_when_training() -> None:
    graph, train = zoo.build("seed:cnn"), Workload(batch=8)
    assert graph.nodes[-1].op.kind != "cross_entropy"  # the zoo graph has no loss
    assert analytic_curves(graph, train, ()) == analytic_curves(with_loss_head(graph), train, ())
    infer = Workload(batch=8, mode="infer")  # inference runs no loss, so a head given to it stays and costs bytes
    assert memory_curve(graph, infer).peak_bytes(8) < memory_curve(with_loss_head(graph), infer).peak_bytes(8)
    # the estimate's own peak sits on the curve it is drawn with (both step the same headed graph)
    assert memory_curve(graph, train).peak_bytes(8) >= estimate(graph, train).memory.peak_bytes


def test_one_free_replay_gives_the_reservation_the_measured_peak_and_the_bisections_bounds() -> None:
    """A 30 MiB load freed before measuring, then a measured 12 + 12 MiB step: two 12 MiB segments (each
    request >= 10 MiB gets its own, rounded to 2 MiB) beside the 30 MiB one, which stays cached."""
    events = [alloc("load", 30), free("load", 30), alloc("a", 12), alloc("b", 12), free("a", 12), free("b", 12)]
    replay = free_replay(events, measure_from=2)
    assert replay.reserved_bytes == 30 * MIB  # a and b fit in the cached 30 MiB segment: 12 + 12 = 24
    assert replay.allocated_bytes == 30 * MIB  # the load, before measuring
    assert replay.measured_allocated_bytes == 24 * MIB  # 12 + 12 from event 2 on
    assert required_budget_bytes(events, replay) == required_budget_bytes(events)


@pytest.mark.parametrize(
    "workload",
    [
        Workload("train", 2, "bf16", "adamw"),
        Workload("train", 2, "bf16", "adamw", finetune="lora"),
        Workload("train", 2, "amp_bf16", "adamw", finetune="qlora", checkpointing=True),
        Workload("train", 2, "bf16", "adamw", finetune="lora", lora_targets=("q_proj", "v_proj", "lm_head")),
        Workload("train", 2, "bf16", "adamw", attention="eager", loss="fused"),
    ],
    ids=["full", "lora", "qlora-checkpointed", "lora-lm-head", "eager-fused-loss"],
)
def test_the_curves_replay_the_step_the_estimate_replays(workload: Workload) -> None:
    """The ranking's largest batch and the charts read the curves; the headline reads the estimate. Both
    must replay one step: the curves once skipped the LoRA adapters, so a LoRA step's curve was a full
    fine-tune's and its per-sample bytes about half the estimate's (Qwen3 0.6B at 1,024 tokens: 2.50 GiB a
    sample against 4.51), and `recommend` listed batch 4 as the largest on a card where 3 needs 14.9 GiB."""
    graph = zoo.build("smollm2-135m", 128)
    peaks, required = analytic_curves(graph, workload, ())
    for batch in (1, 3, 5):
        memory = estimate(graph, replace(workload, batch=batch)).memory
        # the curve adds one allocator block per live tensor as slack (core/curve.py)
        assert memory.peak_bytes <= peaks.peak_bytes(batch) <= memory.peak_bytes + peaks.slack_bytes
        # the required curve carries the fragmentation measured at batches 16 and 64 down to small batches
        # (required_from_peaks): an approximation, within 18% of the replay at batches 1-5 here
        assert abs(required.peak_bytes(batch) - memory.required_bytes) <= 0.2 * memory.required_bytes
