"""Hostile model files of every format, one builder per attack class (issue 29), shared by
tests/importers/test_hostile.py and benchmarks/fuzz_importers.py.

Each builder writes its file(s) into a folder that also holds `victim.txt` (VICTIM_TEXT) and may name
`marker` (created if the file's code ran). `CASES` maps a class name to (builder, what the refusal says).
Zip bombs are real: deflate blocks of zeros, written by a tiny zip writer so that a 1 GiB member costs a
few MB and well under a second to make (zlib would spend seconds compressing the gigabyte).
"""

from __future__ import annotations

import io
import json
import os
import re
import struct
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path

import torch
from malicious_files import overwriting_torchscript

VICTIM_TEXT = "precious"
SECRET = "secret.bin"  # the ONNX external-data case's file in the working folder
SECRET_NUMBER = "4999"  # what its bytes say; never in the output
GIB = 1 << 30
Builder = Callable[[Path], Path]


# ---------------------------------------------------------------- zip writing with a real bomb


def _zeros_deflated(size: int) -> tuple[bytes, int]:
    """Raw deflate of `size` zero bytes (a multiple of 1 MiB) and its CRC-32: one 1 MiB block, fully flushed so
    it stands alone, repeated, then an empty final block."""
    chunk = bytes(1 << 20)
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = compressor.compress(chunk) + compressor.flush(zlib.Z_FULL_FLUSH)
    crc = 0
    for _ in range(size >> 20):
        crc = zlib.crc32(chunk, crc)
    return block * (size >> 20) + b"\x03\x00", crc


def _write_zip(path: Path, members: list[tuple[str, bytes, int, int, int]]) -> Path:
    """(name, stored bytes, method, crc, unpacked size) -> a zip file (PKWARE APPNOTE 4.3: local headers, data,
    central directory, end record; sizes under 4 GiB, so no zip64)."""
    out, central = io.BytesIO(), io.BytesIO()
    for name, data, method, crc, size in members:
        raw = name.encode()
        offset = out.tell()
        out.write(struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, method, 0, 0x21, crc, len(data), size, len(raw), 0))
        out.write(raw + data)
        central.write(
            struct.pack(
                "<IHHHHHHIIIHHHHHII",
                0x02014B50,
                20,
                20,
                0,
                method,
                0,
                0x21,
                crc,
                len(data),
                size,
                len(raw),
                0,
                0,
                0,
                0,
                0,
                offset,
            )
            + raw
        )
    start, directory = out.tell(), central.getvalue()
    out.write(
        directory + struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(members), len(members), len(directory), start, 0)
    )
    path.write_bytes(out.getvalue())
    return path


def with_bomb(seed: bytes, path: Path, member: Callable[[str], bool], size: int = GIB) -> Path:
    """`seed` (a zip) with the first member `member` accepts replaced by `size` deflated zeros."""
    members, done = [], False
    with zipfile.ZipFile(io.BytesIO(seed)) as archive:
        for info in archive.infolist():
            if not done and member(info.filename):
                members.append((info.filename, *_bomb(size)))
                done = True
            else:
                data = archive.read(info.filename)
                members.append((info.filename, data, 0, zlib.crc32(data), len(data)))
    return _write_zip(path, members)


def _bomb(size: int) -> tuple[bytes, int, int, int]:
    data, crc = _zeros_deflated(size)
    return data, 8, crc, size


def rewritten(seed: bytes, path: Path, change: Callable[[str, bytes], tuple[str, bytes]]) -> Path:
    with zipfile.ZipFile(io.BytesIO(seed)) as old, zipfile.ZipFile(path, "w") as new:
        for info in old.infolist():
            name, data = change(info.filename, old.read(info.filename))
            new.writestr(name, data)
    return path


# ---------------------------------------------------------------- TorchScript


def _torchscript(folder: Path) -> bytes:
    return overwriting_torchscript(str(folder / "victim.txt"))


def _code_edit(edit: Callable[[str], str], rename: str | None = None) -> Builder:
    def build(folder: Path) -> Path:
        def change(name: str, data: bytes) -> tuple[str, bytes]:
            if "/code/" in name and name.endswith(".py"):
                return (name[:-3] + rename if rename else name), edit(data.decode()).encode()
            return name, data

        return rewritten(_torchscript(folder), folder / "evil.pt", change)

    return build


def _comment_before_paren(code: str) -> str:
    """`mapped = (torch.from_file  # comment` / `((state)[2], ...))`: the call spans two lines."""
    return re.sub(r"= torch\.from_file\((.*)\n", r"= (torch.from_file  # a comment\n      (\1)\n", code, count=1)


def _plain_torchscript(folder: Path) -> bytes:
    buffer = io.BytesIO()
    torch.jit.save(torch.jit.script(torch.nn.Sequential(torch.nn.Linear(4, 3))), buffer)
    return buffer.getvalue()


def _ts_bomb(which: Callable[[str], bool]) -> Builder:
    return lambda folder: with_bomb(_plain_torchscript(folder), folder / "bomb.pt", which)


def _ts_torchbind(folder: Path) -> Path:
    """A code member that builds c10d's FileStore (a torchbind class that creates the file it names)."""
    return _code_edit(
        lambda code: code.replace(
            "return torch.matmul(x, weight)",
            '_s = __torch__.torch.classes.dist_c10d.FileStore("m", 1)\n    return torch.matmul(x, weight)',
        )
    )(folder)


# ---------------------------------------------------------------- torch.export (.pt2)


class _Tiny(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(4, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear(x)


def exported_bytes() -> bytes:
    buffer = io.BytesIO()
    torch.export.save(torch.export.export(_Tiny(), (torch.randn(2, 4),)), buffer)
    return buffer.getvalue()


HELPER = "import pathlib\npathlib.Path(__file__).with_name('marker').touch()\nclass F:\n    apply = staticmethod(abs)\n"


def _pt2_node(target: str, extra: list[dict[str, object]]) -> Builder:
    """A .pt2 whose first node calls `target` (with `extra` arguments before the input tensor)."""

    def build(folder: Path) -> Path:
        (folder / "evil_helper.py").write_text(HELPER)  # what the custom-autograd target would import

        def change(name: str, data: bytes) -> tuple[str, bytes]:
            if not name.endswith("models/model.json"):
                return name, data
            program = json.loads(data)
            graph = program["graph_module"]["graph"]
            first = graph["nodes"][0]["inputs"][0]
            graph["tensor_values"]["evil_out"] = graph["tensor_values"][first["arg"]["as_tensor"]["name"]]
            graph["nodes"].insert(
                0,
                {
                    "target": target,
                    "inputs": [*extra, first],
                    "name": "evil",
                    "metadata": {},
                    "outputs": [{"as_tensor": {"name": "evil_out"}}],
                    "is_hop_single_tensor_return": None,
                },
            )
            return name, json.dumps(program).encode()

        return rewritten(exported_bytes(), folder / "evil.pt2", change)

    return build


CUSTOM_AUTOGRAD = "torch.export.custom_ops._call_custom_autograd_function_in_pre_dispatch"
_HELPER_ARG = [{"name": "function_cls_name", "arg": {"as_string": "evil_helper.F"}, "kind": 1}]


# ---------------------------------------------------------------- torch.save, ONNX, configs


def _state_dict_bytes() -> bytes:
    buffer = io.BytesIO()
    torch.save(torch.nn.Linear(4, 3).state_dict(), buffer)
    return buffer.getvalue()


def _onnx_external_cwd(folder: Path) -> Path:
    """A Reshape whose target shape is an INT64 initializer stored "outside" in secret.bin, a relative path:
    read against the working folder (the test runs there), its bytes would become a shape (3 x 4999)."""
    import numpy as np
    from onnx import TensorProto, helper, save

    (folder / SECRET).write_bytes(np.array([3, 4999], np.int64).tobytes())
    shape = TensorProto(name="shape", data_type=TensorProto.INT64, dims=[2])
    shape.data_location = TensorProto.EXTERNAL
    for key, value in (("location", SECRET), ("offset", "0"), ("length", "16")):
        shape.external_data.add(key=key, value=value)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3 * 4999])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    nodes = [
        helper.make_node("Identity", ["shape"], ["copied"], name="copy"),  # folded by onnx_fold.py
        helper.make_node("Reshape", ["x", "copied"], ["y"], name="reshape"),
    ]
    graph = helper.make_graph(nodes, "g", [x], [y], [shape])
    path = folder / "external.onnx"
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    return path


def _onnx_huge_dims(folder: Path) -> Path:
    """A Gemm weight declared [10^9, 10^9] with no data: 10^18 parameters from a 200-byte file."""
    from onnx import TensorProto, helper, save

    weight = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[10**9, 10**9])
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 10**9])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 10**9])
    graph = helper.make_graph(
        [helper.make_node("Gemm", ["x", "w"], ["y"], name="fc", transB=1)], "g", [x], [y], [weight]
    )
    path = folder / "huge.onnx"
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    return path


LLAMA = {
    "model_type": "llama",
    "hidden_size": 64,
    "intermediate_size": 128,
    "num_attention_heads": 4,
    "num_key_value_heads": 4,
    "vocab_size": 100,
    "max_position_embeddings": 128,
}


def _config(values: dict[str, object]) -> Builder:
    def build(folder: Path) -> Path:
        path = folder / "config.json"
        path.write_text(json.dumps({**LLAMA, **values}))
        return path

    return build


def _unreadable(folder: Path, name: str) -> Path:
    """`name` as a link to a regular file whose read fails (EINVAL) even for root: /proc/self/clear_refs."""
    path = folder / name
    os.symlink("/proc/self/clear_refs", path)
    return path


def _safetensors_beside_unreadable_config(folder: Path) -> Path:
    from model_files import gpt2_tiny_tensors, safetensors_bytes

    _unreadable(folder, "config.json")
    path = folder / "model.safetensors"
    path.write_bytes(safetensors_bytes(gpt2_tiny_tensors()))
    return path


def _sparse(name: str, size: int) -> Builder:
    """A file of `size` zero bytes that takes no disk (a hole): the size checks must act before any read."""

    def build(folder: Path) -> Path:
        path = folder / name
        with path.open("wb") as f:
            f.truncate(size)
        return path

    return build


# class -> (builder, the SPEC prefix, a regular expression the one-line refusal matches)
CASES: dict[str, tuple[Builder, str, str]] = {
    "ts-backslash-before-paren": (
        _code_edit(lambda c: c.replace("torch.from_file(", "torch.from_file\\\n  (")),
        "",
        r"torch\.from_file",
    ),
    "ts-comment-before-paren": (_code_edit(_comment_before_paren), "", r"torch\.from_file"),
    "ts-parenthesised-callee": (
        _code_edit(lambda c: c.replace("torch.from_file(", "(torch.from_file)(")),
        "",
        r"torch\.from_file",
    ),
    "ts-code-member-builtins.PY": (_code_edit(lambda c: c, rename=".PY"), "", r"torch\.from_file in .*\.PY"),
    "ts-getattr-computed": (
        _code_edit(lambda c: c.replace("torch.from_file(", 'getattr(torch, "from_" + "file")(')),
        "",
        r"getattr",
    ),
    "ts-custom-namespace": (
        _code_edit(lambda c: c.replace("torch.from_file(", "ops.image.read_file(")),
        "",
        r"ops\.image\.read_file",
    ),
    "ts-torchbind-filestore": (_ts_torchbind, "", r"torch\.classes\.dist_c10d\.FileStore"),
    "ts-debug_pkl-bomb-1GiB": (_ts_bomb(lambda n: n.endswith(".debug_pkl")), "", r"unpacks to 1\.0 GiB"),
    "ts-code-bomb-1GiB": (_ts_bomb(lambda n: "/code/" in n and n.endswith(".py")), "", r"unpacks to 1\.0 GiB"),
    "ts-data.pkl-bomb-1GiB": (_ts_bomb(lambda n: n.endswith("data.pkl")), "", r"unpacks to 1\.0 GiB"),
    "pt2-custom-autograd-import": (_pt2_node(CUSTOM_AUTOGRAD, _HELPER_ARG), "", re.escape(CUSTOM_AUTOGRAD)),
    "pt2-python-function-target": (_pt2_node("builtins.exec", []), "", r"builtins\.exec"),
    "pt2-aten-from_file": (_pt2_node("torch.ops.aten.from_file.default", []), "", r"aten\.from_file"),
    "pt2-extension-op": (_pt2_node("#evil_helper:F", []), "", r"#evil_helper"),
    "pt2-json-bomb-1GiB": (
        lambda f: with_bomb(exported_bytes(), f / "bomb.pt2", lambda n: n.endswith("model.json")),
        "",
        r"unpacks to 1\.0 GiB",
    ),
    "pth-data.pkl-bomb-1GiB": (
        lambda f: with_bomb(_state_dict_bytes(), f / "bomb.pth", lambda n: n.endswith("data.pkl")),
        "",
        r"unpacks to 1\.0 GiB",
    ),
    "onnx-external-data-from-cwd": (_onnx_external_cwd, "", r"."),
    "onnx-dims-1e9": (_onnx_huge_dims, "", r"out of range|parameters"),
    "onnx-over-2GiB": (_sparse("big.onnx", (2 << 30) + 1), "", r"larger than 2 GiB"),
    "network-json-over-64MiB": (_sparse("big.json", (64 << 20) + 1), "", r"larger than 64 MiB"),
    "hf-10000-layers": (_config({"num_hidden_layers": 10_000}), "hf:", r"num_hidden_layers must be .* 512"),
    "hf-100000-experts": (
        _config({"model_type": "mixtral", "num_local_experts": 100_000}),
        "hf:",
        r"num_local_experts must be",
    ),
    "hf-unreadable-config": (lambda f: _unreadable(f, "config.json"), "hf:", r"cannot read the config file"),
    "safetensors-unreadable": (lambda f: _unreadable(f, "model.safetensors"), "", r"cannot read"),
    "safetensors-unreadable-config-beside": (_safetensors_beside_unreadable_config, "", r"cannot read the config"),
}


def build(case: str, folder: Path) -> str:
    """Writes the victim file and the hostile file(s) of `case` into `folder`; -> the SPEC to import."""
    (folder / "victim.txt").write_text(VICTIM_TEXT)
    builder, prefix, _ = CASES[case]
    return prefix + str(builder(folder))
