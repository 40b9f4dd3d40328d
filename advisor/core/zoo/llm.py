"""Zoo entries of popular decoder LLMs (zoo:llama-3.1-8b, ...). Each is built from the published config.json
bundled in advisor/data/llm_configs/NAME/, read by the same mapping `hf:CONFIG.json` uses, so a preset and
its config cannot disagree. Generation mode defaults to these models' usual prompt lengths via --prompt-len."""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import partial
from pathlib import Path

from advisor.core.errors import SpecError
from advisor.core.graph import Graph
from advisor.core.llm.decoder import DecoderSpec
from advisor.core.llm.families import decoder_from_config
from advisor.core.llm.graph import decoder_graph

CONFIG_DIR = Path(__file__).resolve().parents[2] / "data" / "llm_configs"


def preset_config_path(name: str) -> Path:
    return CONFIG_DIR / name / "config.json"


def preset_decoder(name: str) -> DecoderSpec:
    spec = decoder_from_config(json.loads(preset_config_path(name).read_text(encoding="utf-8")), name)
    if spec is None:
        raise SpecError(f"{name}: bundled config has a model_type the decoder mapping does not know")
    return spec


def _preset(name: str, seq_len: int = 2048) -> Graph:
    return decoder_graph(preset_decoder(name), seq_len)


MODELS: dict[str, Callable[[int], Graph]] = {
    path.parent.name: partial(_preset, path.parent.name) for path in sorted(CONFIG_DIR.glob("*/config.json"))
}
