"""Zoo LLM presets: the published parameter count of each, and `hf:` on the bundled config.json (the one
source the preset is built from) giving the same count and the same graph."""

from pathlib import Path

import pytest

from advisor.core import zoo
from advisor.core.llm.tensors import active_param_count, param_count
from advisor.core.zoo.library import library
from advisor.core.zoo.llm import preset_config_path, preset_decoder
from advisor.importers.spec_graph import load_graph

# Total parameters as the model's Hugging Face page reports them (the safetensors metadata of the official
# checkpoint, e.g. "8.03B params"), with the model card's or paper's rounded figure beside it.
PUBLISHED = {
    "llama-3.1-8b": (8_030_261_248, "meta-llama/Llama-3.1-8B, card: 8B"),
    "llama-3.1-70b": (70_553_706_496, "meta-llama/Llama-3.1-70B, card: 70B"),
    "llama-3.1-405b": (405_853_388_800, "meta-llama/Llama-3.1-405B, card: 405B"),
    "llama-3.2-1b": (1_235_814_400, "meta-llama/Llama-3.2-1B, card: 1.23B"),
    "llama-3.2-3b": (3_212_749_824, "meta-llama/Llama-3.2-3B, card: 3.21B"),
    "mistral-7b": (7_241_732_096, "mistralai/Mistral-7B-v0.1, card: 7.3B"),
    "mixtral-8x7b": (46_702_792_704, "mistralai/Mixtral-8x7B-v0.1, paper: 47B total, 13B active"),
    "qwen2.5-0.5b": (494_032_768, "Qwen/Qwen2.5-0.5B, card: 0.49B"),
    "qwen2.5-1.5b": (1_543_714_304, "Qwen/Qwen2.5-1.5B, card: 1.54B"),
    "qwen2.5-3b": (3_085_938_688, "Qwen/Qwen2.5-3B, card: 3.09B"),
    "qwen2.5-7b": (7_615_616_512, "Qwen/Qwen2.5-7B, card: 7.61B"),
    "qwen2.5-14b": (14_770_033_664, "Qwen/Qwen2.5-14B, card: 14.7B"),
    "qwen2.5-32b": (32_763_876_352, "Qwen/Qwen2.5-32B safetensors"),
    "qwen2.5-72b": (72_706_203_648, "Qwen/Qwen2.5-72B, card: 72.7B"),
    "gemma-7b": (8_537_680_896, "google/gemma-7b, HF page: 8.54B"),
    "gemma-2-2b": (2_614_341_888, "google/gemma-2-2b, HF page: 2.61B"),
    "gemma-2-9b": (9_241_705_984, "google/gemma-2-9b, HF page: 9.24B"),
    "gemma-2-27b": (27_227_128_320, "google/gemma-2-27b, HF page: 27.2B"),
    "phi-3-mini": (3_821_079_552, "microsoft/Phi-3-mini-4k-instruct, card: 3.8B"),
    "phi-3-medium": (13_960_238_080, "microsoft/Phi-3-medium-4k-instruct, card: 14B"),
    "deepseek-v2-lite": (15_706_484_224, "deepseek-ai/DeepSeek-V2-Lite, card: 15.7B total, 2.4B active"),
    "gpt-oss-20b": (20_914_757_184, "openai/gpt-oss-20b, card: 21B total, 3.6B active"),
}


def test_the_exact_counts_are_the_librarys() -> None:
    """These presets' source.json carry the same safetensors totals, checked exactly (tolerance 0); the
    library's other models are checked in test_llm_library.py."""
    exact = {entry.name: entry.published_params for entry in library() if entry.tolerance == 0}
    assert exact == {name: count for name, (count, _source) in PUBLISHED.items()}


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_published_parameter_count(name: str) -> None:
    expected, _source = PUBLISHED[name]
    assert param_count(preset_decoder(name)) == expected
    assert zoo.build(name, 8).param_count == expected


@pytest.mark.parametrize("name", ["llama-3.2-1b", "qwen2.5-0.5b", "gemma-2-2b", "deepseek-v2-lite"])
def test_hf_config_gives_the_zoo_graph(name: str) -> None:
    path = Path(preset_config_path(name))
    via_hf = load_graph(f"hf:{path}", 32)
    via_zoo = zoo.build(name, 32)
    assert via_hf.param_count == via_zoo.param_count == PUBLISHED[name][0]
    assert [n.name for n in via_hf.nodes] == [n.name for n in via_zoo.nodes]


def test_active_parameters_of_mixtures_of_experts() -> None:
    # Mixtral: 2 of 8 experts; each expert 3 x 4096 x 14336 per layer, 32 layers
    mixtral = preset_decoder("mixtral-8x7b")
    assert param_count(mixtral) - active_param_count(mixtral) == 6 * 3 * 4096 * 14336 * 32
    # published active counts exclude the embedding table: gpt-oss-20b 3.6B, DeepSeek-V2-Lite 2.4B
    oss, lite = preset_decoder("gpt-oss-20b"), preset_decoder("deepseek-v2-lite")
    assert (active_param_count(oss) - 201088 * 2880) / 1e9 == pytest.approx(3.6, abs=0.06)
    assert (active_param_count(lite) - 102400 * 2048) / 1e9 == pytest.approx(2.4, abs=0.06)  # 2.45
