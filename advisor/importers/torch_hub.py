"""Models named by a library: `torchvision:NAME`, `timm:NAME`, `hf:CONFIG.json` (transformers).

None of these download weights: the architecture is built with random (torchvision, timm) or meta
(transformers, so a 7B model costs no memory) parameters, which is all an estimate needs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from advisor.core.errors import SpecError
from advisor.importers import hf_model
from advisor.importers.common import existing_file, fail, optional_module, read_config
from advisor.importers.torch_loader import Inputs, LoadedModel, describe_error, import_torch

IMAGE_SIZE = 224  # torchvision's and timm's default eval resolution for the ImageNet classifiers


def load(spec: str, seq_len: int | None = None) -> LoadedModel:
    prefix, _, name = spec.partition(":")
    if not name:
        raise SpecError(f"{spec}: give a name after '{prefix}:'")
    if prefix == "hf":
        return load_hf(name, seq_len)
    torch = import_torch(spec)
    library = optional_module(prefix, spec)
    make = _torchvision_builder(library, name, spec) if prefix == "torchvision" else _timm_builder(library, name, spec)
    try:
        module = make()
    except Exception as error:
        raise SpecError(f"{spec}: building the model failed: {describe_error(error)}") from None
    size = _image_size(module, prefix)

    def example_inputs(batch_size: int) -> Inputs:
        return (torch.randn(batch_size, 3, size, size),), {}

    return LoadedModel(name, module, example_inputs, None, spec, "classification")


def _torchvision_builder(library: Any, name: str, spec: str) -> Callable[[], Any]:
    if name not in library.models.list_models():
        raise SpecError(f"{spec}: torchvision has no model {name!r}")
    return lambda: library.models.get_model(name, weights=None)


def _timm_builder(library: Any, name: str, spec: str) -> Callable[[], Any]:
    if not library.list_models(name):
        raise SpecError(f"{spec}: timm has no model {name!r}")
    return lambda: library.create_model(name, pretrained=False)


def _image_size(module: Any, prefix: str) -> int:
    """timm models say their input size (pretrained_cfg input_size (3, H, W)); torchvision's take 224."""
    cfg = getattr(module, "pretrained_cfg", None) or {}
    size = cfg.get("input_size") if isinstance(cfg, dict) else None
    return int(size[-1]) if prefix == "timm" and size else IMAGE_SIZE


# ---------------------------------------------------------------- hf:CONFIG.json


def load_hf(config_spec: str, seq_len: int | None = None) -> LoadedModel:
    path = existing_file(config_spec)
    config = read_config(path)
    torch = import_torch(f"hf:{config_spec}")
    transformers = optional_module("transformers", f"hf:{config_spec}")
    if "model_type" not in config:
        raise fail(path, "config has no model_type (a transformers config.json names one)")
    try:
        cfg = transformers.AutoConfig.for_model(**config)
    except Exception as error:
        raise fail(path, f"transformers cannot read this config: {describe_error(error)}") from None
    model = hf_model.build(transformers, torch, cfg, path, seq_len)
    return LoadedModel(
        str(config.get("_name_or_path") or path.parent.name or path.stem),
        model.module,
        model.inputs,
        None,
        f"hf:{config_spec}",
        model.task,
        model.train_inputs,
    )
