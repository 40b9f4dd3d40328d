"""Issue 25: LoRA on LLM.int8 weights as bitsandbytes' MatMul8bitLt allocates (bitsandbytes 0.39.0 0f40fa3,
2023-05-23, and 95f9af3, 2026, autograd/_functions.py). Each test writes the arithmetic beside the bytes."""

from advisor.core import zoo
from advisor.core.analytic import estimate
from advisor.core.llm.lora import with_adapters
from advisor.core.replay import replay_step
from advisor.core.tracker import Store
from advisor.core.workload import Workload

TOKENS = 256


def int8_lora(checkpointing: bool = False) -> Workload:
    return Workload(
        "train", 1, "amp_fp16", "adamw", checkpointing=checkpointing, weights="int8", finetune="lora",
        lora_targets=("q_proj",),
    )  # fmt: skip


def test_int8_matmul_hands_back_its_input_dtype_and_keeps_its_input() -> None:
    """LLaMA-7B, 256 tokens, int8 base under fp16 autocast, no checkpointing. prepare_model_for_int8_training
    leaves the norms in fp32, so each block's projections read fp32; MatMul8bitLt returns `output.to(A.dtype)`
    (fp32) and keeps A for backward (`ctx.tensors = (CAt, subA, A)`), frozen or adapted. So the MLP's
    product, which down_proj reads and nothing else saves, stays to backward in fp32, and gate_proj's output,
    which SiLU saves, is fp32 too."""
    rows = {r.name: r for r in estimate(zoo.build("llama-7b", TOKENS), int8_lora()).layers}
    product = TOKENS * 11008 * 4  # 11,272,192 B: kept by down_proj (before: freed in forward, 0 B)
    assert rows["layers.0.mlp.mul"].kept_bytes == product
    assert rows["layers.0.mlp.gate_proj"].kept_bytes == TOKENS * 11008 * 4  # fp32, not fp16's 5,636,096 B


def test_int8_backward_dequantizes_the_weight_in_the_input_dtype() -> None:
    """Backward rebuilds each int8 weight for the input's gradient: `state.CB.to(ctx.dtype_A,
    copy=True)`, fp32 here, held until that gradient exists: down_proj 4,096 x 11,008 x 4 = 180,355,072 B,
    q_proj 4,096 x 4,096 x 4 = 67,108,864 B. The first layer's q/k/v read the embeddings' output, which
    needs no gradient without checkpointing (enable_input_require_grads is what checkpointing adds), so
    MatMul8bitLt skips grad_A there (`if req_gradA`)."""
    graph = with_adapters(zoo.build("llama-7b", TOKENS), int8_lora())
    names = [n.name for n in graph.nodes]
    rebuilt = {
        names[k.node]: size
        for k, size in replay_step(graph, int8_lora()).events
        if k.store == Store.WORKSPACE and k.slot == 1 and size > 0
    }
    assert rebuilt["layers.1.mlp.down_proj"] == 4096 * 11008 * 4
    assert rebuilt["layers.1.self_attn.q_proj"] == 4096 * 4096 * 4  # the int8 base alone, not its adapters
    assert "layers.0.self_attn.k_proj" not in rebuilt and "layers.0.mlp.down_proj" in rebuilt
    assert len(rebuilt) == 32 * 7 - 3  # every projection but layer 0's q, k and v
