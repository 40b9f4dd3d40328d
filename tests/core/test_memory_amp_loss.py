"""Cross-entropy under autocast, by hand: log_softmax in the logits' dtype, nll_loss's float32 copy."""

from dataclasses import replace

from advisor.core.allocator import peak_reserved_bytes
from advisor.core.graph import GraphBuilder
from advisor.core.loss_head import with_loss_head
from advisor.core.ops import CrossEntropy, Input, Linear
from advisor.core.replay import replay_step
from advisor.core.step_records import MemoryProfile
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


def _lm_head_replay(release: str, batch: int, seq: int, hidden: int, vocab: int, drops: bool = False) -> MemoryProfile:
    b = GraphBuilder("lm")
    x = b.add(Input((seq, hidden)), [])
    b.add(Linear(vocab, bias=False), [x], "lm_head")
    w = Workload("train", batch, "bf16", "adamw", transformers_version=release, drops_logits=drops)  # type: ignore[arg-type]
    return replay_step(with_loss_head(replace(b.build(), task="language_model"), w.transformers_version), w)


def test_transformers_4_45_outputs_keep_the_fp32_logits() -> None:
    # pure bf16, batch 2, seq 4, vocab 1000: lm_head 8*1000*2 = 16,000 -> 16,384 B, AdamW's two bf16 moments
    # 2 x 16,384, input 2*4*8*2 = 128 -> 512 and int64 targets 2*4*8 = 64 -> 512: state 50,176
    state = 16_384 + 2 * 16_384 + 512 + 512
    logits16, logits32, loss = 16_384, 32_256, 512  # 2*4*1000*2 = 16,000 and *4 = 32,000, 512-byte blocks
    # transformers 5 (ForCausalLMLoss upcasts a local copy): at the loss's backward the output's bf16 logits,
    # the loss, the fp32 log-probabilities, d loss / d loss, nll_loss's fp32 gradient and its cast for the
    # logits
    new = _lm_head_replay("5", 2, 4, 8, 1000)
    assert new.peak_bytes == state + logits16 + loss + logits32 + loss + 2 * logits32 == 164_352
    # 4.45 (`logits = logits.float()` in LlamaForCausalLM.forward): the output keeps the fp32 copy instead
    old = _lm_head_replay("4.45", 2, 4, 8, 1000)
    assert old.peak_bytes == state + logits32 + loss + logits32 + loss + 2 * logits32 == 180_224
    # a loop that drops the output (Trainer, torchtune) frees the fp32 logits before backward: the same peak
    dropped = (_lm_head_replay(r, 2, 4, 8, 1000, drops=True).peak_bytes for r in ("5", "4.45"))
    assert set(dropped) == {state + loss + logits32 + loss + 2 * logits32} == {147_968}


def test_transformers_4_45_shifted_copy_costs_one_more_cached_segment() -> None:
    # batch 1, seq 2048, vocab 32000: bf16 logits 2048*32000*2 B = 125 MiB, fp32 250 MiB, each request its
    # own segment (>= 10 MiB: rounded to 2 MiB). 5: the fp32 copy is freed after forward and nll_loss's
    # gradient reuses its segment; 4.45 keeps it, and the shifted contiguous copy (2047 rows, 249.9 MiB ->
    # 250 MiB) leaves the segment the gradient takes instead: one more 250 MiB segment. The peak differs by the
    # held logits' width, 2048*32000*(4-2) B = 125 MiB.
    mib = 2**20
    new, old = (_lm_head_replay(r, 1, 2048, 64, 32000) for r in ("5", "4.45"))
    assert old.peak_bytes - new.peak_bytes == 2048 * 32000 * (4 - 2) == 125 * mib
    assert peak_reserved_bytes(old.events) - peak_reserved_bytes(new.events) == 250 * mib
