"""The bundled LLM library against its published counts: one row per model with the published parameter
count (less any part not built, e.g. a vision encoder), the decoder's count, the error in percent and the
entry's tolerance, then the active counts of the mixtures of experts. Option: --with-transformers adds the
count of the model transformers builds from the same config.json on the meta device (needs torch)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from advisor.core.llm.tensors import param_count
from advisor.core.zoo.library import active_as_published, library
from advisor.core.zoo.llm import preset_config_path, preset_decoder


def transformers_count(name: str) -> str:
    import torch
    import transformers

    raw = json.loads(preset_config_path(name).read_text(encoding="utf-8"))
    if raw.get("model_type") == "kimi_k2":  # transformers knows it as the DeepSeek-V3 it is
        raw = {**raw, "model_type": "deepseek_v3"}
    config = transformers.AutoConfig.for_model(**raw)
    text = getattr(config, "text_config", None)
    with torch.device("meta"):
        model = transformers.AutoModelForCausalLM.from_config(text if text is not None else config)
    return f"{sum(p.numel() for p in model.parameters()):>18,d}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--with-transformers", action="store_true")
    args = parser.parse_args()
    print(
        f"{'model':30} {'published':>18} {'built':>18} {'error':>7} {'tol':>5}"
        + (f" {'transformers':>18}" if args.with_transformers else "")
    )
    for entry in library():
        built = param_count(preset_decoder(entry.name))
        error = 100 * (built - entry.compared_params) / entry.compared_params
        extra = f" {transformers_count(entry.name)}" if args.with_transformers else ""
        print(
            f"{entry.name:30} {entry.compared_params:>18,d} {built:>18,d} {error:>+6.2f}% "
            f"{100 * entry.tolerance:>4.0f}%{extra}"
        )
    print("\nactive parameters (mixtures of experts; the card's convention for the embedding tables)")
    for entry in (e for e in library() if e.published_active_params):
        active = active_as_published(entry, preset_decoder(entry.name))
        assert entry.published_active_params is not None
        error = 100 * (active - entry.published_active_params) / entry.published_active_params
        print(
            f"{entry.name:30} {entry.published_active_params:>18,d} {active:>18,d} {error:>+6.2f}%  "
            f"(without: {entry.published_active_excludes})"
        )


if __name__ == "__main__":
    main()
