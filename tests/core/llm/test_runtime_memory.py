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


def test_data_parallel_buckets_hold_only_trainable_gradients() -> None:
    """Llama 3.1 8B QLoRA on two cards in data parallel: DDP's buckets cover the rank-16 adapters only."""
    from advisor.recommend.plans import plan_cost

    w = Workload("train", 1, "amp_bf16", "adamw", checkpointing=True, finetune="qlora")
    e = estimate(zoo.build("llama-3.1-8b", 4096), w)
    adapters = 32 * 16 * (2 * (4096 + 4096) + 2 * (4096 + 1024) + 3 * (4096 + 14336))  # 41,943,040
    assert e.trainable_param_count == adapters
    dp = plan_cost(e, "data_parallel", 2)
    assert dp.saved_bytes == -adapters * 4  # one fp32 bucket copy: 167,772,160 B, not 8.07e9 x 4 B
    assert dp.comm_bytes == 2 * (1 / 2) * adapters * 4  # ring all-reduce of the adapters' gradients
    full = estimate(zoo.build("llama-3.2-1b", 256), Workload("train", 1, "amp_bf16", "adamw"))
    assert full.trainable_param_count == full.param_count == 1_235_814_400  # tied head counted once
