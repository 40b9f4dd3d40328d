"""Tiny configurations of the transformers families people use (issue 14): each config class with 2 layers,
hidden 64, vocab 1000 and few experts, so a model builds on the meta device and steps in well under a
second. `SHRINK` holds the generic sizes, applied where the config class has that field; `Family.sizes`
the family's own fields (GPT-2's n_embd, T5's d_model, DeepSeek's latent ranks); None there keeps the
class default (Swin's per-stage head counts)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import transformers

SHRINK: dict[str, Any] = {
    "num_hidden_layers": 2,
    "hidden_size": 64,
    "intermediate_size": 128,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "vocab_size": 1000,
    "max_position_embeddings": 256,
    "head_dim": 16,
    # mixture of experts: 4 experts, 2 per token, small expert MLPs
    "num_local_experts": 4,
    "num_experts": 4,
    "n_routed_experts": 4,
    "num_experts_per_tok": 2,
    "moe_intermediate_size": 32,
    "shared_expert_intermediate_size": 32,
    "n_shared_experts": 1,
    "n_group": 1,
    "topk_group": 1,
    "first_k_dense_replace": 1,
    # sliding windows and special tokens inside the tiny vocabulary
    "sliding_window": 64,
    "bos_token_id": 1,
    "eos_token_id": 2,
    "pad_token_id": 0,
    "decoder_start_token_id": 0,
}


@dataclass(frozen=True)
class Family:
    name: str
    config: str  # transformers config class
    architecture: str  # the model class a published config names
    sizes: dict[str, Any] = field(default_factory=dict)
    kind: str = "decoder"  # decoder, encoder, seq2seq, vision


GPT_NAMES = {"n_layer": 2, "n_embd": 64, "n_head": 4, "n_positions": 256}
SEQ2SEQ = {
    "encoder_layers": 2,
    "decoder_layers": 2,
    "d_model": 64,
    "encoder_ffn_dim": 128,
    "decoder_ffn_dim": 128,
    "encoder_attention_heads": 4,
    "decoder_attention_heads": 4,
}
VISION = {"image_size": 32, "patch_size": 8, "num_channels": 3, "num_labels": 10}

FAMILIES: tuple[Family, ...] = (
    Family("llama", "LlamaConfig", "LlamaForCausalLM"),
    Family("mistral", "MistralConfig", "MistralForCausalLM"),
    Family("mixtral", "MixtralConfig", "MixtralForCausalLM"),
    Family("qwen2", "Qwen2Config", "Qwen2ForCausalLM"),
    Family("qwen2_moe", "Qwen2MoeConfig", "Qwen2MoeForCausalLM"),
    Family("qwen3", "Qwen3Config", "Qwen3ForCausalLM"),
    Family("qwen3_moe", "Qwen3MoeConfig", "Qwen3MoeForCausalLM"),
    Family("gemma", "GemmaConfig", "GemmaForCausalLM"),
    Family("gemma2", "Gemma2Config", "Gemma2ForCausalLM"),
    Family("gemma3", "Gemma3TextConfig", "Gemma3ForCausalLM"),
    Family("phi", "PhiConfig", "PhiForCausalLM"),
    Family("phi3", "Phi3Config", "Phi3ForCausalLM"),
    Family("phimoe", "PhimoeConfig", "PhimoeForCausalLM"),
    Family("falcon", "FalconConfig", "FalconForCausalLM"),
    Family("gpt_neox", "GPTNeoXConfig", "GPTNeoXForCausalLM"),
    Family("gptj", "GPTJConfig", "GPTJForCausalLM", {**GPT_NAMES, "rotary_dim": 8}),
    Family("gpt2", "GPT2Config", "GPT2LMHeadModel", GPT_NAMES),
    Family("starcoder2", "Starcoder2Config", "Starcoder2ForCausalLM"),
    Family("opt", "OPTConfig", "OPTForCausalLM", {"ffn_dim": 128, "word_embed_proj_dim": 64}),
    Family("bloom", "BloomConfig", "BloomForCausalLM", {"n_layer": 2, "n_head": 4}),
    Family("stablelm", "StableLmConfig", "StableLmForCausalLM"),
    Family("olmo", "OlmoConfig", "OlmoForCausalLM"),
    Family("olmo2", "Olmo2Config", "Olmo2ForCausalLM"),
    Family("olmoe", "OlmoeConfig", "OlmoeForCausalLM"),
    Family("cohere", "CohereConfig", "CohereForCausalLM"),
    Family(
        "deepseek_v2",
        "DeepseekV2Config",
        "DeepseekV2ForCausalLM",
        {"kv_lora_rank": 16, "q_lora_rank": 32, "qk_rope_head_dim": 8, "qk_nope_head_dim": 8, "v_head_dim": 16},
    ),
    Family(
        "deepseek_v3",
        "DeepseekV3Config",
        "DeepseekV3ForCausalLM",
        {
            "kv_lora_rank": 16,
            "q_lora_rank": 32,
            "qk_rope_head_dim": 8,
            "qk_nope_head_dim": 8,
            "v_head_dim": 16,
            "head_dim": 8,
        },
    ),
    Family("granite", "GraniteConfig", "GraniteForCausalLM"),
    Family("granitemoe", "GraniteMoeConfig", "GraniteMoeForCausalLM"),
    Family("mamba", "MambaConfig", "MambaForCausalLM", {"state_size": 8, "expand": 2, "conv_kernel": 4}),
    Family(
        "jamba",
        "JambaConfig",
        "JambaForCausalLM",
        {
            "attn_layer_period": 2,
            "attn_layer_offset": 1,
            "expert_layer_period": 2,
            "expert_layer_offset": 1,
            "mamba_d_state": 8,
            "mamba_dt_rank": 8,
            "use_mamba_kernels": False,
        },
    ),
    Family("glm4", "Glm4Config", "Glm4ForCausalLM"),
    Family("gpt_oss", "GptOssConfig", "GptOssForCausalLM"),
    Family("bert", "BertConfig", "BertForMaskedLM", kind="encoder"),
    Family("roberta", "RobertaConfig", "RobertaForSequenceClassification", kind="encoder"),
    Family(
        "distilbert",
        "DistilBertConfig",
        "DistilBertForMaskedLM",
        {"n_layers": 2, "dim": 64, "hidden_dim": 128, "n_heads": 4},
        kind="encoder",
    ),
    Family("deberta_v2", "DebertaV2Config", "DebertaV2ForMaskedLM", kind="encoder"),
    Family("albert", "AlbertConfig", "AlbertForMaskedLM", {"embedding_size": 32}, kind="encoder"),
    Family("electra", "ElectraConfig", "ElectraForPreTraining", {"embedding_size": 32}, kind="encoder"),
    Family(
        "t5",
        "T5Config",
        "T5ForConditionalGeneration",
        {"num_layers": 2, "d_model": 64, "d_ff": 128, "num_heads": 4, "d_kv": 16},
        kind="seq2seq",
    ),
    Family("bart", "BartConfig", "BartForConditionalGeneration", SEQ2SEQ, kind="seq2seq"),
    Family(
        "whisper",
        "WhisperConfig",
        "WhisperForConditionalGeneration",
        {**SEQ2SEQ, "num_mel_bins": 16, "max_source_positions": 32, "max_target_positions": 64},
        kind="seq2seq",
    ),
    Family("vit", "ViTConfig", "ViTForImageClassification", VISION, kind="vision"),
    Family("deit", "DeiTConfig", "DeiTForImageClassification", VISION, kind="vision"),
    Family(
        "swin",
        "SwinConfig",
        "SwinForImageClassification",
        {
            **VISION,
            "embed_dim": 16,
            "depths": [1, 1],
            "num_heads": [2, 4],
            "window_size": 4,
            "patch_size": 4,
            "num_attention_heads": None,
            "num_hidden_layers": None,
            "hidden_size": None,
        },
        kind="vision",
    ),
    Family("clip_vision", "CLIPVisionConfig", "CLIPVisionModel", VISION, kind="vision"),
)


def make_config(family: Family) -> Any:
    cls = getattr(transformers, family.config)
    default = cls()
    settable = {
        k
        for k in SHRINK
        if (k in default.to_dict() or hasattr(default, k)) and not isinstance(getattr(cls, k, None), property)
    }  # Falcon's head_dim is derived
    sizes = {k: v for k, v in {**{k: SHRINK[k] for k in settable}, **family.sizes}.items() if v is not None}
    return cls(**sizes, architectures=[family.architecture])


def write_config(family: Family, folder: Path) -> Path:
    path = folder / f"{family.name}.json"
    path.write_text(json.dumps(make_config(family).to_dict()))
    return path


def write_model_file(family: Family, folder: Path, seq_len: int) -> Path:
    """The same model as a FILE.py: build_model() from the config, example_inputs with labels."""
    config = write_config(family, folder)
    path = folder / f"{family.name}_model.py"
    path.write_text(
        "import json, pathlib, torch, transformers\n"  # read_text closes the file (open() left it to the GC)
        f"CFG = transformers.AutoConfig.for_model(**json.loads(pathlib.Path({str(config)!r}).read_text()))\n"
        f"def build_model():\n    return transformers.{family.architecture}(CFG)\n"
        f"def example_inputs(batch_size):\n{_inputs_source(family, seq_len)}"
    )
    return path


def _inputs_source(family: Family, seq_len: int) -> str:
    if family.kind == "vision":
        return "    return {'pixel_values': torch.randn(batch_size, 3, 32, 32)}\n"
    if family.name == "whisper":
        return (
            "    ids = torch.randint(0, 1000, (batch_size, 16))\n"
            "    return {'input_features': torch.randn(batch_size, 16, 64), 'decoder_input_ids': ids,"
            " 'labels': ids}\n"
        )
    source = f"    ids = torch.randint(0, 1000, (batch_size, {seq_len}))\n"
    if family.kind == "seq2seq":
        return source + "    return {'input_ids': ids, 'decoder_input_ids': ids, 'labels': ids}\n"
    if family.architecture.endswith("ForSequenceClassification"):
        return source + "    return {'input_ids': ids, 'labels': torch.zeros(batch_size, dtype=torch.long)}\n"
    return source + "    return {'input_ids': ids, 'labels': ids}\n"
