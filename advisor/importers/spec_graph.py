"""Turns a SPEC string of the command line into a layer graph (DESIGN.md, SPEC forms).

zoo: and seed: names build in core; model files go through advisor.importers, imported only when a file is
given so that the zoo never loads torch or onnx.
"""

from __future__ import annotations

import os

from advisor.core import zoo
from advisor.core.errors import SpecError
from advisor.core.graph import Graph
from advisor.core.ops import require_registered

FILE_FORMS = (".py", ".pt2", ".pt", ".pth", ".bin", ".onnx", ".safetensors", ".json", ".gguf")
LIBRARY_FORMS = ("torchvision:", "timm:", "hf:")


def load_graph(spec: str, seq_len: int | None = None, *, trust_pickle: bool = False) -> Graph:
    if spec.startswith("zoo:"):
        return zoo.build(spec[4:], seq_len)
    if spec.startswith("seed:"):
        return zoo.build(spec, seq_len)
    lowered = spec.lower()
    if spec.startswith(LIBRARY_FORMS) or lowered.endswith(FILE_FORMS):
        return require_registered(_import(spec, lowered, seq_len, trust_pickle), spec)
    if os.path.isdir(spec):  # a model folder (a Hugging Face one holds config.json) was "not a model spec"
        inside = os.path.join(spec, "config.json")
        raise SpecError(f"{spec}: a folder, not a file" + (f"; give hf:{inside}" if os.path.isfile(inside) else ""))
    raise SpecError(
        f"{spec}: not a model spec; use zoo:NAME or a model file "
        f"({', '.join(FILE_FORMS)}; `advisor estimate --list` shows the zoo)"
    )


def _import(spec: str, lowered: str, seq_len: int | None, trust_pickle: bool) -> Graph:
    from advisor.importers.common import existing_file
    from advisor.importers.hf_hub import is_hub_spec
    from advisor.importers.sandbox import run_capped

    if is_hub_spec(spec):  # hf:ORG/NAME[@REVISION] through the Hub client's cache
        from advisor.importers import hf_hub_estimate

        return hf_hub_estimate.load_graph(spec, seq_len)
    if lowered.endswith(".gguf") and not spec.startswith(LIBRARY_FORMS):
        from advisor.importers import gguf_import

        return gguf_import.load_graph(existing_file(spec), seq_len)
    if lowered.endswith(".json") and not spec.startswith("hf:"):  # a network saved by the app's builder
        from advisor.importers.netfile import load_graph_file

        return load_graph_file(existing_file(spec))
    if lowered.endswith(".onnx") and not spec.startswith(LIBRARY_FORMS):
        from advisor.importers import onnx_import

        path = existing_file(spec)
        onnx_import.warm_imports(path)
        return run_capped(path, lambda file: onnx_import.load_graph(file, seq_len))
    if lowered.endswith(".safetensors") and not spec.startswith(LIBRARY_FORMS):
        from advisor.importers import safetensors_import

        path = existing_file(spec)
        return run_capped(path, lambda file: safetensors_import.load_graph(file, seq_len))
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

    if spec.startswith(LIBRARY_FORMS) or trust_pickle or lowered.endswith(".py"):
        return module_to_graph(load_module(spec, trust_pickle=trust_pickle, seq_len=seq_len))
    from advisor.importers.common import existing_file
    from advisor.importers.sandbox import run_capped
    from advisor.importers.torch_loader import warm_imports

    path = existing_file(spec)  # one line for a missing file or a name the file system refuses
    if lowered.endswith((".pt", ".pth", ".bin")) and not state_dict.is_torchscript(path):
        return run_capped(path, state_dict.state_dict_graph)
    warm_imports()  # in this process, once: a child's imports die with it (seconds each time)
    return run_capped(path, lambda file: module_to_graph(load_module(str(file), seq_len=seq_len)))
