"""LoRA/QLoRA: trainable adapters r x (in + out) per targeted linear, optimizer state only for them, a frozen
(nf4 for QLoRA) base, and activations still kept where the adapters need them."""

import pytest

from advisor.core import zoo
from advisor.core.analytic import estimate
from advisor.core.errors import SpecError
from advisor.core.workload import Workload

# Llama 3 8B (hidden 4096, 8 KV heads x 128 = 1024, intermediate 14336, 32 layers), rank 16
Q = OUT = 16 * (4096 + 4096)  # 131,072 each for q_proj and o_proj
K = V = 16 * (4096 + 1024)  # 81,920
GATE = UP = DOWN = 16 * (4096 + 14336)  # 294,912


def lora(**fields: object) -> Workload:
    return Workload("train", 1, "amp_bf16", "adamw", **fields)  # type: ignore[arg-type]


def test_llama3_8b_rank16_all_linears() -> None:
    graph = zoo.build("llama-3.1-8b", 64)
    e = estimate(graph, lora(finetune="lora", weights="bf16"))
    trainable = 32 * (Q + K + V + OUT + GATE + UP + DOWN)
    assert trainable == 41_943_040  # PEFT's print_trainable_parameters for this model and config
    assert e.memory.at_peak.optimizer_state == 2 * trainable * 4  # AdamW: two fp32 states per adapter weight
    assert e.param_count == 8_030_261_248 + trainable
    rows = {r.name: r for r in e.layers}
    assert rows["lm_head"].kept_bytes == 0  # a frozen linear keeps nothing of its input
    assert rows["layers.0.self_attn.q_proj"].kept_bytes >= 64 * 16 * 2  # lora_A's rank-wide output


def test_targets_q_and_v_only() -> None:
    e = estimate(zoo.build("llama-3.1-8b", 64), lora(finetune="lora", lora_targets=("q_proj", "v_proj")))
    assert e.memory.at_peak.optimizer_state == 2 * 32 * (Q + V) * 4  # 6,815,744 trainable weights


def test_qlora_base_is_nf4() -> None:
    graph = zoo.build("llama-3.1-8b", 64)
    bf16 = estimate(graph, lora(finetune="lora", weights="bf16")).memory.at_peak.weights
    nf4 = estimate(graph, lora(finetune="qlora")).memory.at_peak.weights
    # under autocast (the PEFT/TRL QLoRA recipe) prepare_model_for_kbit_training has cast every unquantized
    # weight to fp32: embed_tokens and lm_head 2 x 128256 x 4096 x 4 B, the 65 RMSNorm weights x 4 B
    embeddings = 2 * 128256 * 4096 * 4
    adapters = 41_943_040 * 4
    # nf4 blocks: 4 bits + 8/64 + 32/(64 x 256) bits per weight of the 32 x 7 block matrices
    matrices = 8_030_261_248 - 2 * 128256 * 4096 - 65 * 4096  # minus embeddings and the 65 RMSNorm weights
    assert nf4 == pytest.approx(embeddings + adapters + matrices * 4.127 / 8 + 65 * 4096 * 4, rel=0.002)
    assert nf4 < 0.5 * bf16
    pure = estimate(graph, Workload("train", 1, "bf16", "adamw", finetune="qlora")).memory.at_peak.weights
    assert nf4 - pure == pytest.approx(2 * 128256 * 4096 * 2 + 65 * 4096 * 2, rel=0.002)  # bf16 there


def test_bad_target_names_the_model() -> None:
    with pytest.raises(SpecError, match="lora_targets: resnet18 has no linear layer named q_proj"):
        estimate(zoo.build("resnet18"), Workload(finetune="lora", lora_targets=("q_proj",)))


def test_quantized_full_training_is_refused() -> None:
    with pytest.raises(SpecError, match="weights: int4 weights are frozen"):
        Workload(weights="int4")


def test_lm_head_and_embed_tokens_targets() -> None:
    """PEFT target_modules with lm_head (a LoRA Linear, 4096 in, 128,256 out) and embed_tokens (lora.Embedding:
    A r x 128,256 looked up by the ids, B 4096 x r)."""
    graph = zoo.build("llama-3.1-8b", 64)
    only_q = estimate(graph, lora(finetune="lora", lora_targets=("q_proj",)))
    both = estimate(graph, lora(finetune="lora", lora_targets=("q_proj", "lm_head", "embed_tokens")))
    head = embed = 16 * (4096 + 128256)  # 2,117,632 each
    assert only_q.trainable_param_count == 32 * Q  # 4,194,304
    assert both.trainable_param_count == 32 * Q + head + embed
    assert both.memory.at_peak.optimizer_state == pytest.approx(2 * 4 * (32 * Q + head + embed), abs=40 * 512)
    rows = {r.name: r for r in both.layers}
    assert rows["embed_tokens"].kept_bytes >= 64 * 16 * 2  # the rank-wide lookup kept for B's gradient
    with pytest.raises(SpecError, match="lora_targets: unknown wte"):
        Workload(finetune="lora", lora_targets=("wte",))
