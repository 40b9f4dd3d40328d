"""Turns a SPEC string of the command line into a layer graph (DESIGN.md, SPEC forms).

zoo: and seed: names build in core; model files go through advisor.importers, imported only when a file is
given so that the zoo never loads torch or onnx.
"""

from __future__ import annotations

from advisor.core import zoo
from advisor.core.errors import SpecError
from advisor.core.graph import Graph
from advisor.core.ops import require_registered

FILE_FORMS = (".py", ".pt2", ".pt", ".pth", ".bin", ".onnx", ".safetensors", ".json")
LIBRARY_FORMS = ("torchvision:", "timm:", "hf:")


def load_graph(spec: str, seq_len: int | None = None, *, trust_pickle: bool = False) -> Graph:
    if spec.startswith("zoo:"):
        return zoo.build(spec[4:], seq_len)
    if spec.startswith("seed:"):
        return zoo.build(spec, seq_len)
    lowered = spec.lower()
    if spec.startswith(LIBRARY_FORMS) or lowered.endswith(FILE_FORMS):
        return require_registered(_import(spec, lowered, seq_len, trust_pickle), spec)
    raise SpecError(f"{spec}: not a model spec; use zoo:NAME or a model file "
                    f"({', '.join(FILE_FORMS)}; `advisor estimate --list` shows the zoo)")


def _import(spec: str, lowered: str, seq_len: int | None, trust_pickle: bool) -> Graph:
    from advisor.importers.common import existing_file

    if lowered.endswith(".json") and not spec.startswith("hf:"):  # a network saved by the app's builder
        from advisor.importers.netfile import load_graph_file

        return load_graph_file(existing_file(spec))
    if lowered.endswith(".onnx") and not spec.startswith(LIBRARY_FORMS):
        from advisor.importers import onnx_import

        return onnx_import.load_graph(existing_file(spec), seq_len)
    if lowered.endswith(".safetensors") and not spec.startswith(LIBRARY_FORMS):
        from advisor.importers import safetensors_import

        return safetensors_import.load_graph(existing_file(spec), seq_len)
    if spec.startswith("hf:") and lowered.endswith(".json"):  # a decoder config core describes: no torch
        from advisor.importers import hf_config

        graph = hf_config.analytic_decoder_graph(existing_file(spec[3:]), seq_len)
        if graph is not None:
            return graph
    return _import_torch(spec, lowered, seq_len, trust_pickle)


def _import_torch(spec: str, lowered: str, seq_len: int | None, trust_pickle: bool) -> Graph:
    from advisor.importers.torch_loader import import_torch

    import_torch(spec)  # one line saying which extra to install, before anything else is tried
    from advisor.importers import state_dict
    from advisor.importers.torch_graph import module_to_graph
    from advisor.importers.torch_loader import load_module

    if lowered.endswith((".pt", ".pth", ".bin")) and not spec.startswith(LIBRARY_FORMS) and not trust_pickle:
        from advisor.importers.common import existing_file

        path = existing_file(spec)  # one line for a missing file or a name the file system refuses
        if not state_dict.is_torchscript(path):
            return state_dict.state_dict_graph(path)
    return module_to_graph(load_module(spec, trust_pickle=trust_pickle, seq_len=seq_len))
