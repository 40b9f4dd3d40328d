"""The library's configs as transformers reads them: the model transformers builds from each bundled
config.json on the meta device has exactly the parameters the analytic decoder counts (one model of each
family the library added; Kimi K2 is left out: its config names model_type kimi_k2, which transformers
builds only through the repository's own code)."""

from __future__ import annotations

import json

import pytest

from advisor.core.llm.tensors import param_count
from advisor.core.zoo.llm import preset_config_path, preset_decoder

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

NEW_FAMILIES = [
    "qwen3-0.6b",
    "qwen3-30b-a3b",
    "gemma-3-270m",
    "gemma-3-4b",
    "llama-4-scout",
    "deepseek-v3",
    "glm-4.5-air",
    "olmo-3-7b",
    "smollm3-3b",
    "phi-3.5-moe",
    "mistral-small-3.2-24b",
]


@pytest.mark.parametrize("name", NEW_FAMILIES)
def test_transformers_builds_the_same_parameters(name: str) -> None:
    raw = json.loads(preset_config_path(name).read_text(encoding="utf-8"))
    config = transformers.AutoConfig.for_model(**raw)
    text = getattr(config, "text_config", None)  # Gemma 3, Llama 4, Mistral 3: the language model only
    with torch.device("meta"):
        model = transformers.AutoModelForCausalLM.from_config(text if text is not None else config)
    assert sum(p.numel() for p in model.parameters()) == param_count(preset_decoder(name))
