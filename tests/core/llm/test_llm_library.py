"""The bundled LLM library: every config.json has a source.json whose published parameter count the decoder
reproduces within the entry's stated tolerance (0: the Hub's exact safetensors total), the families the
2025 models need (GLM-4.5's MoE, Kimi K2, OLMo 3, SmolLM3, Mistral 3's text_config) and the search that
`estimate --list QUERY` and the app's chooser use."""

from __future__ import annotations

import json
from typing import Any

import pytest

from advisor.core import zoo
from advisor.core.errors import SpecError
from advisor.core.llm.families import decoder_from_config
from advisor.core.llm.tensors import active_param_count, param_count
from advisor.core.zoo import library
from advisor.core.zoo.llm import CONFIG_DIR, preset_decoder

NAMES = sorted(path.parent.name for path in CONFIG_DIR.glob("*/config.json"))
MOE = [entry.name for entry in library.library() if entry.published_active_params]


def test_every_bundled_config_has_its_source_and_there_are_sixty() -> None:
    assert [entry.name for entry in library.library()] == NAMES
    assert len(NAMES) >= 60


@pytest.mark.parametrize("name", NAMES)
def test_published_parameter_count(name: str) -> None:
    entry = library.entry(name)
    assert entry is not None and entry.hf_repo in entry.url and entry.published_as and entry.values_from
    built = param_count(preset_decoder(name))
    assert zoo.build(name, 8).param_count == built
    error = (built - entry.compared_params) / entry.compared_params
    assert abs(error) <= entry.tolerance, f"{name}: built {built:,}, published {entry.compared_params:,} ({error:+.2%})"


@pytest.mark.parametrize("name", MOE)
def test_published_active_parameter_count(name: str) -> None:
    """Within 3%, counted as each card counts them (library.active_as_published)."""
    entry, spec = library.entry(name), preset_decoder(name)
    assert entry is not None and entry.published_active_params is not None
    assert library.active_as_published(entry, spec) == pytest.approx(entry.published_active_params, rel=0.03)


def test_active_as_published_leaves_out_the_tables_the_card_does() -> None:
    entry, spec = library.entry("gpt-oss-120b"), preset_decoder("gpt-oss-120b")
    assert entry is not None and entry.published_active_excludes == "input_embedding"
    # gpt-oss counts the unembedding but not the input table: 201088 x 2880
    assert library.active_as_published(entry, spec) == active_param_count(spec) - 201088 * 2880
    glm = library.entry("glm-4.5-air")
    assert glm is not None and glm.published_active_excludes == "embeddings"
    air = preset_decoder("glm-4.5-air")
    assert library.active_as_published(glm, air) == active_param_count(air) - 2 * 151552 * 4096  # untied


def _glm4_moe(**overrides: Any) -> dict[str, Any]:
    cfg = {
        "model_type": "glm4_moe",
        "hidden_size": 64,
        "num_hidden_layers": 3,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "head_dim": 16,
        "intermediate_size": 128,
        "moe_intermediate_size": 32,
        "n_routed_experts": 4,
        "n_shared_experts": 1,
        "num_experts_per_tok": 2,
        "first_k_dense_replace": 1,
        "vocab_size": 100,
        "attention_bias": True,
        "use_qk_norm": True,
        "partial_rotary_factor": 0.5,
        "tie_word_embeddings": False,
    }
    return {**cfg, **overrides}


def test_glm4_moe_counts() -> None:
    spec = decoder_from_config(_glm4_moe(), "tiny-glm")
    assert spec is not None and spec.moe is not None
    assert spec.moe.dense_layers == (0,) and spec.rotary_width == 8  # 16 * 0.5
    # embed and lm_head 2 * 100*64 = 12800, final norm 64
    # attention: q 64*64+64, k and v 64*32+32 each, o 64*64 without bias = 12416; q/k norms 2*16; 2 norms 128
    # layer 0 dense 3*64*128 = 24576; layers 1, 2: router 64*4 + experts 4*3*64*32 + shared 3*64*32 = 30976
    assert param_count(spec) == 12800 + 64 + 3 * (12416 + 32 + 128) + 24576 + 2 * 30976
    # two of four experts run: 2 * 3*64*32 = 12288 of 24576 per MoE layer
    assert param_count(spec) - active_param_count(spec) == 2 * 12288
    plain = decoder_from_config(_glm4_moe(use_qk_norm=False, attention_bias=False), "tiny-glm")
    assert plain is not None
    assert param_count(spec) - param_count(plain) == 3 * (32 + 64 + 32 + 32)  # q/k norms and q, k, v biases


def test_kimi_k2_is_deepseek_v3() -> None:
    cfg = json.loads((CONFIG_DIR / "kimi-k2" / "config.json").read_text(encoding="utf-8"))
    kimi, v3 = (decoder_from_config({**cfg, "model_type": t}, "k2") for t in ("kimi_k2", "deepseek_v3"))
    assert kimi is not None and v3 is not None and kimi.mla is not None and kimi.moe is not None
    assert param_count(kimi) == param_count(v3)
    assert kimi.moe.experts == 384 and kimi.moe.dense_layers == (0,) and kimi.moe.half_routing_weights


def test_olmo3_slides_three_layers_of_four() -> None:
    spec = preset_decoder("olmo-3-7b")
    assert spec.sliding_window == 4096
    assert spec.sliding_layers == (True, True, True, False) * 8  # Olmo3Config: full every 4th of 32
    assert param_count(spec) == param_count(preset_decoder("olmo-2-7b")) - (100352 - 100278) * 4096 * 2


def test_smollm3_and_mistral3_reuse_llama_and_mistral_layers() -> None:
    smol = json.loads((CONFIG_DIR / "smollm3-3b" / "config.json").read_text(encoding="utf-8"))
    as_llama = decoder_from_config({**smol, "model_type": "llama"}, "x")
    assert as_llama is not None and param_count(preset_decoder("smollm3-3b")) == param_count(as_llama)
    # Mistral Small 3.2's text_config has Mistral Small 3's layers (the Pixtral tower is not built)
    assert param_count(preset_decoder("mistral-small-3.2-24b")) == param_count(preset_decoder("mistral-small-24b"))


def test_search_by_family_and_kind() -> None:
    names = zoo.zoo_names()
    assert library.search("qwen3 moe", names) == ["qwen3-235b-a22b-2507", "qwen3-30b-a3b", "qwen3-coder-480b-a35b"]
    assert library.search("GEMMA 3 270m", names) == ["gemma-3-270m"]
    assert library.search("deepseek-ai", names) == [
        "deepseek-coder-33b",
        "deepseek-r1",
        "deepseek-r1-distill-llama-70b",
        "deepseek-r1-distill-qwen-32b",
        "deepseek-v2-lite",
        "deepseek-v3",
    ]
    assert library.search("", names) == names
    assert library.search("resnet5", names) == ["resnet50"]  # outside the library: by name
    assert library.search("no-such-model", names) == []


def test_search_by_size() -> None:
    names = zoo.zoo_names()
    eight = library.search("8b", names)
    assert {"qwen3-8b", "llama-3.1-8b", "ministral-8b"} <= set(eight)
    assert "qwen2.5-7b" not in eight  # 7.62B is 4.8% from 8B: more than the 4% a size word allows
    small = library.search("<1b", names)
    assert "gemma-3-270m" in small and "qwen3-0.6b" in small
    assert all((e := library.entry(n)) is None or e.published_params < 10**9 for n in small)
    assert library.search(">=400b moe", names) == [
        "deepseek-r1",
        "deepseek-v3",
        "kimi-k2",
        "llama-4-maverick",
        "qwen3-coder-480b-a35b",
    ]


def test_size_labels() -> None:
    assert library.size_label(8_190_735_360) == "8.2B"
    assert library.size_label(135_000_000) == "135M"
    assert library.size_label(671_000_000_000) == "671B"
    assert library.size_label(1_000_000_000_000) == "1T"
    assert library.size_label(4_000_000_000) == "4B"


def test_a_bad_source_file_is_named() -> None:
    with pytest.raises(SpecError, match=r"llm_configs/x/source\.json: unknown field\(s\) size"):
        library._entry("x", {"name": "x", "size": 3})
    with pytest.raises(SpecError, match=r"llm_configs/x/source\.json: name 'y' is not its folder's"):
        library._entry("x", {**json.loads((CONFIG_DIR / "qwen3-8b" / "source.json").read_text()), "name": "y"})
    with pytest.raises(SpecError, match=r"llm_configs/x/source\.json: expected a JSON object"):
        library._entry("x", [])


def test_gemma_1_is_geglu_with_a_tied_256k_table() -> None:
    """Gemma 7B (Gemma 1): GeGLU MLP (gelu tanh), head_dim 256 with 16 heads (4096 > hidden 3072), multi-head
    attention, the 256,000-entry embedding tied to the LM head and scaled by sqrt(hidden) (GemmaModel)."""
    spec = preset_decoder("gemma-7b")
    assert spec.activation == "gelu_tanh" and spec.head_dim == 256 and spec.kv_heads == spec.heads == 16
    assert spec.tied_embeddings and spec.embed_scaled and spec.sliding_window == 0
    embedding = 256_000 * 3072  # 786,432,000, counted once (tied)
    attention = 4 * 3072 * 16 * 256  # q, k, v, o of 3072 x 4096: 50,331,648
    mlp = 3 * 3072 * 24576  # gate, up, down: 226,492,416
    assert param_count(spec) == embedding + 28 * (attention + mlp + 2 * 3072) + 3072 == 8_537_680_896


def test_older_models_of_known_families() -> None:
    """Vistral 7B is Mistral 7B with 6,369 more vocabulary entries in the embedding and the untied LM head;
    Qwen1.5-14B is Qwen2 layers with multi-head attention (40 KV heads) and q/k/v biases; deepseek-coder-33b
    is Llama layers with 8 KV heads."""
    extra_vocab = (38_369 - 32_000) * 4096 * 2
    assert param_count(preset_decoder("vistral-7b")) == param_count(preset_decoder("mistral-7b")) + extra_vocab
    qwen = preset_decoder("qwen1.5-14b")
    assert qwen.kv_heads == 40 and qwen.qkv_bias and not qwen.out_bias and qwen.sliding_window == 0
    layer = 3 * (5120 * 5120 + 5120) + 5120 * 5120 + 3 * 5120 * 13696 + 2 * 5120  # 315,253,760
    assert param_count(qwen) == 40 * layer + 2 * 152_064 * 5120 + 5120 == 14_167_290_880
    coder = preset_decoder("deepseek-coder-33b")
    # q and o 7168 x 7168, k and v 7168 x 1024, MLP 3 x 7168 x 19200, 2 norms: 530,331,648 a layer
    layer = 2 * 7168 * 7168 + 2 * 7168 * 1024 + 3 * 7168 * 19200 + 2 * 7168
    assert param_count(coder) == 62 * layer + 2 * 32_256 * 7168 + 7168 == 33_342_991_360
