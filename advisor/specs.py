"""Turns a SPEC string of the command line into a layer graph (DESIGN.md, SPEC forms)."""

from __future__ import annotations

from advisor.core import zoo
from advisor.core.errors import SpecError
from advisor.core.graph import Graph

FILE_FORMS = (".py", ".pt2", ".pt", ".pth", ".bin", ".onnx", ".safetensors", ".json")


def load_graph(spec: str, seq_len: int | None = None) -> Graph:
    if spec.startswith("zoo:"):
        return zoo.build(spec[4:], seq_len)
    if spec.startswith("seed:"):
        return zoo.build(spec, seq_len)
    if spec.lower().endswith(".json") and not spec.startswith("hf:"):  # a network saved by the app's builder
        from advisor.netfile import load_graph_file

        return load_graph_file(spec)
    if spec.lower().endswith(FILE_FORMS) or spec.startswith(("torchvision:", "timm:", "hf:")):
        raise SpecError(f"{spec}: importing model files is not available yet; use zoo:NAME")
    raise SpecError(f"{spec}: not a model spec; use zoo:NAME (`advisor estimate --list` shows the names)")
