"""Cross-entropy under autocast, by hand: log_softmax in the logits' dtype, nll_loss's float32 copy."""

from advisor.core.graph import GraphBuilder
from advisor.core.ops import CrossEntropy, Input, Linear
from advisor.core.replay import replay_step
from advisor.core.workload import Workload

# model state at batch 64: fc 8*1000*4 = 32,000 -> 32,256 B (512-byte blocks) and AdamW's two moments the
# same; the input 64*8*4 = 2,048 B and the int64 targets 64*8 = 512 B
STATE = 3 * 32_256 + 2_048 + 512


def _replay(loss: CrossEntropy, precision: str) -> tuple[int, str]:
    b = GraphBuilder("head")
    x = b.add(Input((8,)), [])
    fc = b.add(Linear(1000, bias=False), [x], "fc")
    b.add(loss, [fc], "loss")
    profile = replay_step(b.build(), Workload("train", 64, precision, "adamw"))  # type: ignore[arg-type]
    return profile.peak_bytes, profile.peak_layer


def test_half_logits_keep_half_log_probabilities_and_a_float32_copy() -> None:
    # forward: fc's bf16 weight (16,000 -> 16,384) and input (64*8*2 = 1,024) casts, kept for backward; the
    # bf16 logits 64*1000*2 = 128,000; the loss (512); log_softmax's bf16 output (128,000) and nll_loss's
    # float32 copy of it 64*1000*4 = 256,000. Backward starts with d loss / d loss (512) and nll_loss's
    # float32 gradient (256,000): the peak, before the copy is dropped
    forward = 16_384 + 1_024 + 128_000 + 512 + 128_000 + 256_000
    assert _replay(CrossEntropy(), "amp_bf16") == (STATE + forward + 512 + 256_000, "loss")


def test_float32_logits_make_no_copy() -> None:
    # float32: no casts; logits 256,000, the loss 512, log-probabilities 256,000 (nll_loss keeps that same
    # tensor); backward: d loss (512), the log-probabilities' gradient (256,000) and, beside it, the logits'
    assert _replay(CrossEntropy(), "fp32") == (STATE + 256_000 + 512 + 256_000 + 512 + 2 * 256_000, "loss")


def test_language_model_losses_still_upcast_the_logits_first() -> None:
    # logits.float() (256,000, freed after the forward) feeds log_softmax in float32, whose output (256,000)
    # is kept, no autocast copy; backward: d loss (512), the float32 gradient of the log-probabilities
    # (256,000) and its float32 cast for the logits (256,000) beside the bf16 logits and casts
    forward = 16_384 + 1_024 + 128_000 + 512 + 256_000
    assert _replay(CrossEntropy(upcast=True), "amp_bf16") == (STATE + forward + 512 + 2 * 256_000, "loss")
