"""Reading an untrusted torch.export archive (.pt2) without running anything pickled in it.

`torch.export.load` unpickles parts of the archive with `torch.load(weights_only=False)`: a weight or
constant marked `use_pickle`, the legacy `<model>.pt` weight files, the sample inputs when the weights-only
unpickler refuses them, and "opaque" constants with plain `pickle.loads` (torch/export/pt2_archive/_package.py,
_load_state_dict / _load_constants; torch/_export/serde/serialize.py, deserialize_torch_artifact). A crafted
archive therefore runs code on load (issue 16). This module reads the same parts itself, in the same layout
(torch 2.13's PT2 archive format, pinned by scripts/constraints.txt):
- raw tensor records through torch's own reader (bytes, no unpickling);
- every pickled part only through `torch.load(weights_only=True)`, which refuses anything but tensors and
  plain containers; torchbind and opaque objects are refused outright;
- then hands the dicts (not bytes) to torch's deserializer, which then unpickles nothing itself;
- finally checks the graph's operators with code_scan (a graph may call `aten.from_file`).
A file the user trusts (`--trust-pickle`) goes to torch.export.load as before.
"""

from __future__ import annotations

import io
import json
import pickle
from pathlib import Path
from typing import Any

from advisor.importers.code_scan import TRUST_HINT, describe, risky_name
from advisor.importers.common import fail, one_line
from advisor.importers.pt2_graph import program_problems
from advisor.importers.zip_limits import checked_members

MODEL = "model"  # torch.export.save writes one program under this name; torch.export.load returns it


class _Refused(Exception):
    """A part of the archive that would need the full unpickler (or is a file op): refused, one line."""


class _Damaged(Exception):
    """A part of the archive that cannot be read at all."""


def _weights_only(torch: Any, data: bytes, part: str) -> Any:
    try:
        return torch.load(io.BytesIO(data), weights_only=True, map_location="cpu")
    except pickle.UnpicklingError as error:
        if "Weights only load failed" in str(error):
            raise _Refused(f"{part} holds pickled Python objects, which run code when loaded") from None
        raise


def _payloads(torch: Any, reader: Any, config_path: str, folder: str) -> dict[str, Any]:
    """Weights or constants of one config (`model_weights_config.json` ...), as torch's loader builds them."""
    from torch._export.serde import schema
    from torch._export.serde.serialize import (
        _dict_to_dataclass,
        deserialize_size,
        deserialize_storage_offset,
        deserialize_stride,
    )
    from torch.export.pt2_archive._package import _build_file_map
    from torch.export.pt2_archive.constants import TENSOR_CONSTANT_FILENAME_PREFIX, WEIGHT_FILENAME_PREFIX

    config = _dict_to_dataclass(schema.PayloadConfig, json.loads(reader.read_string(config_path)))  # type: ignore[no-untyped-call]
    raw = _build_file_map(reader, config, folder)  # raw records only: pickled ones are skipped there
    found: dict[str, Any] = {}
    for fqn, meta in config.config.items():
        if not meta.path_name.startswith((WEIGHT_FILENAME_PREFIX, TENSOR_CONSTANT_FILENAME_PREFIX)):
            raise _Refused(f"{meta.path_name!r} is a pickled Python object, which runs code when loaded")
        if meta.use_pickle:
            found[fqn] = _weights_only(torch, reader.read_bytes(folder + meta.path_name), meta.path_name)
            continue
        tensor = torch.as_strided(
            raw[meta.path_name],
            deserialize_size(meta.tensor_meta.sizes),
            deserialize_stride(meta.tensor_meta.strides),
            deserialize_storage_offset(meta.tensor_meta.storage_offset),
        )
        found[fqn] = torch.nn.Parameter(tensor, meta.tensor_meta.requires_grad) if meta.is_param else tensor
    return found


def _parts(torch: Any, reader: Any) -> tuple[Any, dict[str, Any], dict[str, Any], Any]:
    from torch._export.serde import schema
    from torch.export.pt2_archive import constants as names

    records = set(reader.get_file_names())
    for legacy in (f"{names.WEIGHTS_DIR}{MODEL}.pt", f"{names.CONSTANTS_DIR}{MODEL}.pt"):
        if legacy in records:
            raise _Refused(f"it uses the old pickled layout ({legacy}); save it again with torch.export.save")
    program = _checked_program(schema, reader.read_bytes(names.MODELS_FILENAME_FORMAT.format(MODEL)))
    weights = _payloads(torch, reader, names.WEIGHTS_CONFIG_FILENAME_FORMAT.format(MODEL), names.WEIGHTS_DIR)
    constants = _payloads(torch, reader, names.CONSTANTS_CONFIG_FILENAME_FORMAT.format(MODEL), names.CONSTANTS_DIR)
    sample = reader.read_bytes(names.SAMPLE_INPUTS_FILENAME_FORMAT.format(MODEL))
    inputs = _weights_only(torch, sample, "the sample inputs") if sample else None
    if inputs is not None and not (isinstance(inputs, tuple) and len(inputs) == 2):
        raise _Refused("its sample inputs are not (args, kwargs)")
    return program, weights, constants, inputs


def _checked_program(schema: Any, data: bytes) -> Any:
    """The serialized program as torch's dataclass, after pt2_graph's allowlist passed its JSON."""
    from torch._export.serde.serialize import _dict_to_dataclass

    try:
        program = json.loads(data)
    except (ValueError, RecursionError) as error:
        raise _Damaged(f"its program is not valid JSON ({one_line(str(error), 80)})") from None
    problems = program_problems(program) if isinstance(program, dict) else ["a program that is not a JSON object"]
    if problems:
        raise _Refused(f"its graph calls what a model may not ({_shown(problems)}); nothing of it was loaded")
    return _dict_to_dataclass(schema.ExportedProgram, program)  # type: ignore[no-untyped-call]


def _shown(problems: list[str]) -> str:
    return ", ".join(problems[:3]) + (f" and {len(problems) - 3} more" if len(problems) > 3 else "")


def _graph_calls(program: Any) -> list[str]:
    """Every operator the program's graphs call (higher-order ops keep subgraphs as submodules)."""
    return [
        _op_name(node.target)
        for module in program.graph_module.modules()
        if hasattr(module, "graph")
        for node in module.graph.nodes
        if node.op == "call_function"
    ]


def _op_name(target: Any) -> str:
    """ "ops.<namespace>.<name>" for a registered operator, so its namespace is checked too."""
    namespace = getattr(target, "namespace", None)
    return f"ops.{namespace}.{getattr(target, '__name__', target)}" if namespace else str(target)


def load_untrusted(torch: Any, path: Path) -> Any:
    """The ExportedProgram of `path`, read as data; SpecError (one line) for a part that is not data."""
    from torch._export.serde.serialize import ExportedProgramDeserializer
    from torch.export.pt2_archive._package import PT2ArchiveReader

    checked_members(path)  # sizes from the zip directory, before anything is decompressed
    try:
        reader = PT2ArchiveReader(str(path))
        program_data, weights, constants, inputs = _parts(torch, reader)
        program = ExportedProgramDeserializer(None).deserialize(program_data, weights, constants, inputs)
    except _Refused as refused:
        raise fail(path, f"{refused}; {TRUST_HINT}") from None
    except _Damaged as damaged:
        raise fail(path, f"not a loadable torch.export archive: {damaged}") from None
    except Exception as error:  # damaged JSON, a missing record, an unknown operator
        raise fail(
            path, f"not a loadable torch.export archive: {one_line(f'{type(error).__name__}: {error}', 200)}"
        ) from None
    risky = [name for name in _graph_calls(program) if risky_name(name)]
    if risky:
        raise fail(path, describe(sorted(set(risky)), "the exported program"))
    return program
