"""Every decoder family's config.json maps to core's decoder description with transformers' own parameter
count: each family's configuration class shrunk to a tiny size (2 layers, hidden 64), its ForCausalLM built on
the meta device, and the parameters counted (the ground truth) against the analytic graph."""

from typing import Any

import pytest
import torch
import transformers

from advisor.core.llm.families import decoder_from_config
from advisor.core.llm.graph import decoder_graph
from advisor.core.llm.tensors import param_count

TINY = dict(
    hidden_size=64,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    intermediate_size=96,
    vocab_size=128,
    max_position_embeddings=256,
    pad_token_id=None,
    bos_token_id=None,
    eos_token_id=None,
)
MOE = dict(num_experts_per_tok=2, moe_intermediate_size=32)
MLA = dict(
    n_routed_experts=4,
    n_shared_experts=1,
    first_k_dense_replace=1,
    kv_lora_rank=32,
    q_lora_rank=48,
    qk_nope_head_dim=16,
    qk_rope_head_dim=8,
    v_head_dim=16,
    num_key_value_heads=4,
    **MOE,
)
GPT2_NAMES = dict(n_embd=64, n_layer=2, n_head=4, n_positions=256)
FAMILIES: dict[str, dict[str, Any]] = {
    "llama": {},
    "mistral": {},
    "granite": {"attention_bias": True},
    "phi3": {"num_key_value_heads": 4},
    "mixtral": {"num_local_experts": 4, "num_experts_per_tok": 2},
    "qwen2": {},
    "qwen3": {"head_dim": 32},
    "qwen2_moe": {"num_experts": 4, "shared_expert_intermediate_size": 48, "decoder_sparse_step": 2, **MOE},
    "qwen3_moe": {"num_experts": 4, "mlp_only_layers": [0], **MOE},
    "gemma": {"head_dim": 16},
    "gemma2": {"head_dim": 16},
    "gemma3_text": {"head_dim": 16},
    "phi": {"num_key_value_heads": 4},
    "phimoe": {"num_local_experts": 4},
    "granitemoe": {"num_local_experts": 4},
    "granitemoeshared": {"num_local_experts": 4, "shared_intermediate_size": 80},
    "olmo": {},
    "olmo2": {},
    "olmoe": {"num_experts": 4, "num_experts_per_tok": 2},
    "cohere": {},
    "glm4": {"head_dim": 16},
    "llama4_text": {
        "num_local_experts": 4,
        "intermediate_size_mlp": 80,
        "interleave_moe_layer_step": 2,
        "head_dim": 16,
        "attention_chunk_size": 32,
    },
    "gpt_oss": {"num_local_experts": 4, "num_experts_per_tok": 2, "head_dim": 16},
    "deepseek_v2": MLA,
    "deepseek_v3": {**MLA, "n_group": 1, "topk_group": 1},
    "gpt2": GPT2_NAMES,
    "gpt_bigcode": GPT2_NAMES,
    "gptj": {"n_embd": 64, "n_layer": 2, "n_head": 4, "rotary_dim": 8},
    "gpt_neox": {"num_key_value_heads": 4},
    "falcon": {"num_kv_heads": 2},
    "starcoder2": {},
    "opt": {"ffn_dim": 96, "word_embed_proj_dim": 64},
    "bloom": {"n_layer": 2, "n_head": 4},
    "stablelm": {},
}


@pytest.mark.parametrize("model_type", sorted(FAMILIES))
def test_family_parameter_count_matches_transformers(model_type: str) -> None:
    cfg = transformers.AutoConfig.for_model(model_type, **{**TINY, **FAMILIES[model_type]})
    with torch.device("meta"):
        model = transformers.AutoModelForCausalLM.from_config(cfg)
    truth = sum(p.numel() for p in model.parameters())
    spec = decoder_from_config(cfg.to_dict(), model_type)
    assert spec is not None
    assert param_count(spec) == truth
    graph = decoder_graph(spec, 16)
    assert graph.param_count == truth  # the graph holds the same tensors
    # every layer feeds another but the LM head: nothing dangles to be held like a model output
    assert [i for i, users in enumerate(graph.consumers()) if not users] == [len(graph.nodes) - 1]
