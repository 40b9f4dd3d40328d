"""Issue 25: LLM memory as PyTorch, transformers and PEFT really allocate it. Each test writes the arithmetic
beside the bytes it expects."""

from advisor.core import zoo
from advisor.core.estimate import estimate
from advisor.core.workload import Workload

GIB = 2**30


def qwen7b_full(checkpointing: bool) -> Workload:
    return Workload("train", 1, "amp_bf16", "adamw", checkpointing=checkpointing)


def test_checkpointed_block_outputs_are_freed_in_backward() -> None:
    """Qwen2.5 7B full fine-tune at 2,048 tokens: the optimizer step sets the peak with and without
    checkpointing; a recomputed block's output, which no op of the block reads, is not kept to the step."""
    graph = zoo.build("qwen2.5-7b", 2048)
    plain, ckpt = (estimate(graph, qwen7b_full(c)).memory for c in (False, True))
    assert plain.peak_phase == ckpt.peak_phase == "optimizer step"
    leaked = 28 * 2048 * 3584 * 4  # one fp32 residual stream per layer: 822,083,584 B before the fix
    assert ckpt.peak_bytes <= plain.peak_bytes < ckpt.peak_bytes + leaked
    # at the step only the caller's bf16 logits remain of the activations: 2048 x 152064 x 2 = 622,854,144 B
    assert ckpt.at_peak.activations == plain.at_peak.activations == 2048 * 152064 * 2 + 512  # + the loss
