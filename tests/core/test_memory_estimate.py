"""One constructor of the memory figures, one fixed_bytes rule (core/estimate.py memory_estimate)."""

from advisor.core.budget import REPLAY_MARGIN_BYTES
from advisor.core.estimate import OPTIMIZER_PHASE, MemoryEstimate, memory_estimate
from advisor.core.overheads import device_total_bytes
from advisor.core.tracker import CategoryBytes

MIB = 2**20
# weights 100, gradients 100, optimizer state 200, activations 300, temporaries 50, inputs 10 MiB
AT_PEAK = CategoryBytes(100 * MIB, 100 * MIB, 200 * MIB, 300 * MIB, 50 * MIB, 10 * MIB)


def figures(phase: str, fixed_temporaries: int = 0) -> MemoryEstimate:
    return memory_estimate(
        peak_bytes=AT_PEAK.total,
        at_peak=AT_PEAK,
        peak_phase=phase,
        peak_layer="fc",
        batch=10,
        replayed_reserved_bytes=700 * MIB,
        replayed_required_bytes=780 * MIB,
        conv_margin_bytes=5 * MIB,
        fixed_temporaries_bytes=fixed_temporaries,
    )


def test_model_state_is_fixed_and_the_rest_grows_with_the_batch() -> None:
    m = figures("backward")
    assert m.fixed_bytes == 400 * MIB  # 100 + 100 + 200
    assert m.per_sample_bytes == 36 * MIB  # (760 - 400) / 10
    assert figures("backward", 20 * MIB).fixed_bytes == 420 * MIB  # cached weight casts the replay names


def test_the_optimizer_steps_temporaries_are_fixed() -> None:
    assert figures(OPTIMIZER_PHASE).fixed_bytes == 450 * MIB  # 400 + all 50 of temporaries


def test_reserved_is_never_below_the_peak_and_required_adds_the_margins() -> None:
    m = figures("backward")
    assert m.peak_bytes == 760 * MIB  # 100 + 100 + 200 + 300 + 50 + 10
    assert m.reserved_bytes == 760 * MIB  # the replay's 700 is below the peak
    assert REPLAY_MARGIN_BYTES == 20 * MIB  # one large-pool segment
    assert m.required_bytes == 780 * MIB + 5 * MIB + 20 * MIB  # replay + convolution margin + replay margin
    assert m.device_total_bytes == device_total_bytes(760 * MIB)
