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


def test_peft_fp32_adapters_save_an_fp32_copy_of_each_adapted_input() -> None:
    """Pure-bf16 LoRA on Llama 3.1 8B: PEFT keeps the adapters in fp32 and each adapted layer casts its
    input to fp32 for lora_A (peft/tuners/lora/layer.py Linear.forward: x = self._cast_input_dtype(x,
    lora_A.weight.dtype)), which lora_A saves for its weight gradient; q, k and v each make their own copy."""
    graph = zoo.build("llama-3.1-8b", 2048)
    e = estimate(graph, Workload("train", 1, "bf16", "adamw", finetune="lora"))
    rows = {r.name: r for r in e.layers}
    lora_a_out = 2048 * 16 * 4  # rank-16 lora_A output, fp32: 131,072 B
    for name in ("q_proj", "k_proj", "o_proj"):
        assert rows[f"layers.0.self_attn.{name}"].kept_bytes == 2048 * 4096 * 4 + lora_a_out  # 33,685,504
    # v_proj also holds its bf16 output, which the attention saves: + 2048 x 1024 x 2
    assert rows["layers.0.self_attn.v_proj"].kept_bytes == 2048 * 4096 * 4 + lora_a_out + 2048 * 1024 * 2
    assert rows["layers.0.mlp.down_proj"].kept_bytes == 2048 * 14336 * 4 + lora_a_out  # 117,571,584
    assert e.memory.at_peak.optimizer_state == 2 * 41_943_040 * 4  # AdamW on fp32 adapters, not bf16 ones
    amp = estimate(graph, Workload("train", 1, "amp_bf16", "adamw", finetune="lora"))
    amp_rows = {r.name: r for r in amp.layers}
    # under autocast the input is fp32 already (no PEFT copy); lora_A's autocast saves a bf16 copy of it, the
    # base and the adapters keep their bf16 weight copies: 2048x4096x2 + 4096x4096x2 + 2x16x4096x2 + 2048x16x2
    amp_q = 2048 * 4096 * 2 + 4096 * 4096 * 2 + 2 * 16 * 4096 * 2 + 2048 * 16 * 2
    assert amp_rows["layers.0.self_attn.q_proj"].kept_bytes == amp_q  # 50,659,328
