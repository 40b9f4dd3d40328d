"""What a saved model's own code may call, checked before anything of it runs (DESIGN.md, Safety).

A TorchScript archive carries compiled Python-like code (code/**) that `torch.jit.load` compiles and runs: a
class's `__setstate__` runs during loading. TorchScript has no `open`, but it can call every registered
operator, and some reach files or memory maps: `torch.from_file(path, shared=True)` maps a file and `copy_`
into it overwrites that file (issue 16); custom namespaces and torchbind classes can hold anything.

Issue 29 walked around a check that searched the text for `name(`: a backslash line break or a comment
before the `(`, `(torch.from_file)(...)`, and a code member named `builtins.PY`. So the check is an allowlist
over the parsed code (Python's `ast`: TorchScript's serialized code is Python syntax, torch/csrc/jit/
serialization/python_print.cpp), over every code member whatever its extension:
- every dotted reference rooted at `torch`, `ops` or `math` must name an operator in torch's own registry
  (`torch.X` -> aten::X, `ops.NS.X` -> NS::X for PyTorch's tensor namespaces) that does not reach files;
- every call must be one of those, a function or method defined in the archive, a TorchScript builtin
  (`annotate`, `len`, ...) or a method that is a registered aten/prim operator (list.append is aten::append);
  a call through any other expression is refused;
- torchbind classes (`__torch__.torch.classes.*`, C++ objects such as c10d's FileStore) are refused but
  for the quantized packed weights.
Names are compared case-insensitively for the file-reaching words and exactly for the registry (TorchScript
resolves names exactly, so a differently-cased name is unknown and refused). The pickles inside an archive
(data.pkl, constants.pkl) may only name torch's own rebuild functions and the archive's own `__torch__`
classes; pickletools walks the opcodes without unpickling anything.
"""

from __future__ import annotations

import ast
import functools
import pickletools
import zipfile
from collections.abc import Iterable, Iterator
from pathlib import Path

from advisor.importers.zip_limits import checked_members, member_kind, read_member

RISKY_WORDS = frozenset(
    {
        "file",
        "mmap",
        "save",
        "load",
        "loads",
        "open",
        "pickle",
        "exec",
        "eval",
        "system",
        "popen",
        "spawn",
        "fork",
        "socket",
        "library",
        "dlopen",
        "shm",
        "write",
        "unlink",
        "remove",
    }
)
SAFE_OP_NAMESPACES = frozenset(
    {"aten", "prim", "prims", "quantized", "torchvision", "_operator", "operator", "math", "higher_order", "profiler"}
)
CODE_OP_NAMESPACES = frozenset({"aten", "prim", "quantized", "torchvision", "profiler"})
# TorchScript's own unpickler resolves only these (torch/csrc/jit/serialization/unpickler.cpp); anything else
# in an archive's pickle is a foreign file made to look like TorchScript.
SAFE_GLOBAL_PREFIXES = ("torch.", "__torch__.", "collections.OrderedDict")
TORCHBIND = "__torch__.torch.classes."
SAFE_TORCHBIND = frozenset(
    {
        "quantized.LinearPackedParamsBase",
        "quantized.Conv2dPackedParamsBase",
        "quantized.Conv3dPackedParamsBase",
        "quantized.EmbeddingPackedParamsBase",
    }
)
# Names TorchScript's compiler itself provides (torch/csrc/jit/frontend/ir_emitter.cpp, python_print.cpp);
# `fork` is torch.jit.fork: its function argument is a reference checked like any other.
BUILTIN_CALLS = frozenset(
    {
        "annotate",
        "unchecked_cast",
        "uninitialized",
        "int",
        "float",
        "bool",
        "str",
        "complex",
        "len",
        "range",
        "enumerate",
        "zip",
        "isinstance",
        "getattr",
        "hasattr",
        "min",
        "max",
        "abs",
        "list",
        "dict",
        "tuple",
        "round",
        "divmod",
        "ord",
        "chr",
        "sum",
        "any",
        "all",
        "hash",
        "print",
        "sorted",
        "fork",
        "wait",
        "NamedTuple",
        "Tensor",
        "Device",
        "Future",
        "_unwrap_optional",
        "interface",
    }
)
TRUST_HINT = "if you trust this file, pass --trust-pickle"


def _risky_token(token: str) -> bool:
    # Whole words ("load", not "overload"), plus "file" and "mmap" inside a word ("fromfile"); "profiler"
    # (torch.ops.profiler record_function, common in scripted code) merely contains the letters.
    return token in RISKY_WORDS or ("file" in token and not token.startswith("profil")) or "mmap" in token


def risky_name(name: str) -> bool:
    """True for an operator or function name that may reach files, memory maps, processes or libraries."""
    last = name.lower().split("::")[-1]
    parts = [p for p in last.split(".") if p not in ("default", "out", "tensor")]
    if any(_risky_token(token) for part in parts[-2:] for token in part.split("_")):
        return True
    if "ops." in name.lower():
        namespace = name.lower().split("ops.", 1)[1].split(".")[0]
        return namespace not in SAFE_OP_NAMESPACES
    if "::" in name:  # an operator's schema name: "image::read_file"
        return name.split("::")[0].lower() not in SAFE_OP_NAMESPACES
    return False


@functools.cache
def registered(namespace: str, name: str) -> bool:
    """True when torch's C++ operator registry has `namespace::name` (a lookup: nothing is imported)."""
    import torch

    return bool(torch._C._jit_get_schemas_for_operator(f"{namespace}::{name}"))


def allowed_operator(namespace: str, name: str) -> bool:
    """A registered operator of PyTorch's own tensor namespaces that does not reach files."""
    return namespace in SAFE_OP_NAMESPACES and registered(namespace, name) and not risky_name(f"{namespace}::{name}")


def _dotted(node: ast.expr) -> str | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id, *reversed(parts)])


def reference_problem(dotted: str) -> str | None:
    """Why a dotted reference in TorchScript code is not allowed, or None."""
    root, *rest = dotted.split(".")
    if dotted.startswith(TORCHBIND):
        return None if dotted.removeprefix(TORCHBIND) in SAFE_TORCHBIND else dotted
    if root in ("torch", "math"):
        return None if len(rest) == 1 and allowed_operator("aten", rest[0]) else dotted
    if root == "ops":
        ok = len(rest) == 2 and rest[0] in CODE_OP_NAMESPACES and allowed_operator(rest[0], rest[1])
        return None if ok else dotted
    if root.lower() in ("torch", "ops", "math", "builtins", "__builtins__", "sys", "os"):  # Torch.from_file
        return dotted
    return None


class _Scan:
    """One pass over the parsed code members: the names the archive defines, then every reference and call."""

    def __init__(self, trees: dict[str, ast.Module]) -> None:
        self.trees = trees
        self.defined = {
            n.name for tree in trees.values() for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.ClassDef)
        }
        self.bound = {
            n.id
            for tree in trees.values()
            for n in ast.walk(tree)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
        }
        self.bound |= {
            a.arg
            for tree in trees.values()
            for n in ast.walk(tree)
            if isinstance(n, ast.arguments)
            for a in (*n.posonlyargs, *n.args, *n.kwonlyargs)
        }

    def problems(self) -> Iterator[str]:
        for member, tree in self.trees.items():
            inner = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
            for node in ast.walk(tree):
                if isinstance(node, ast.Attribute | ast.Name) and id(node) not in inner:
                    dotted = _dotted(node)
                    bad = reference_problem(dotted) if dotted else None
                    if bad:
                        yield f"{bad} in {member}"
                elif isinstance(node, ast.Call):
                    bad = self._call_problem(node)
                    if bad:
                        yield f"{bad}() in {member}"

    def _call_problem(self, call: ast.Call) -> str | None:
        func = call.func
        if isinstance(func, ast.Name):
            if func.id in ("getattr", "hasattr"):
                return _getattr_problem(call)
            if func.id in BUILTIN_CALLS:  # fork is torch.jit.fork, an asynchronous call: not a process
                return None
            ok = func.id in self.defined or func.id in self.bound
            return None if ok and not risky_name(func.id) else func.id
        dotted = _dotted(func) if isinstance(func, ast.Attribute) else None
        if dotted is None:
            return f"a call through an expression ({ast.unparse(func)[:60]})"
        root, leaf = dotted.split(".")[0], dotted.rsplit(".", 1)[-1]
        if root in ("torch", "ops", "math") or dotted.startswith("__torch__."):
            return None  # the reference itself was checked above
        method = leaf in self.defined or allowed_operator("aten", leaf) or allowed_operator("prim", leaf)
        return None if method and not risky_name(leaf) else dotted


def _getattr_problem(call: ast.Call) -> str | None:
    """getattr(self, "name"): TorchScript resolves it at compile time; only literal, harmless names."""
    if len(call.args) < 2 or not isinstance(call.args[1], ast.Constant) or not isinstance(call.args[1].value, str):
        return "getattr with a computed name"
    return f"getattr(..., {call.args[1].value!r})" if risky_name(call.args[1].value) else None


def code_problems(members: dict[str, str]) -> list[str]:
    """What the code members (name -> source) call that is not on the allowlist; [] when everything is."""
    trees: dict[str, ast.Module] = {}
    for name, source in members.items():
        try:
            trees[name] = ast.parse(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return [f"code that is not valid TorchScript syntax in {name}"]
    return list(dict.fromkeys(_Scan(trees).problems()))


def _pickle_globals(data: bytes) -> Iterable[str]:
    """Module.name of each global a pickle would import; STACK_GLOBAL reads the two strings before it."""
    strings: list[str] = []
    for opcode, argument, _ in pickletools.genops(data):
        if opcode.name in ("GLOBAL", "INST"):
            yield str(argument).replace(" ", ".")
        elif opcode.name == "STACK_GLOBAL":
            yield ".".join(strings[-2:]) if len(strings) >= 2 else "?"
        elif isinstance(argument, str):
            strings.append(argument)


def _global_allowed(name: str) -> bool:
    if name.startswith(TORCHBIND):
        return name.removeprefix(TORCHBIND) in SAFE_TORCHBIND
    return name.startswith(SAFE_GLOBAL_PREFIXES)


def torchscript_problems(path: Path) -> list[str]:
    """What in a TorchScript archive could touch files or run foreign code; [] when nothing does.
    Every member's size is checked from the zip directory first (zip_limits.py)."""
    members = checked_members(path)
    problems: list[str] = []
    code: dict[str, str] = {}
    with zipfile.ZipFile(path) as archive:
        for info in members:
            kind, short = member_kind(info.filename), info.filename.split("/code/", 1)[-1]
            if kind == "code":
                code[short] = read_member(archive, info).decode("utf-8", "replace")
            elif kind == "pickle":
                names = _pickle_globals(read_member(archive, info))
                problems += [f"{g} in {short.rsplit('/', 1)[-1]}" for g in names if not _global_allowed(g)]
    return list(dict.fromkeys(problems + code_problems(code)))


def describe(problems: list[str], what: str) -> str:
    shown = ", ".join(problems[:3]) + (f" and {len(problems) - 3} more" if len(problems) > 3 else "")
    return f"{what} calls operations outside what a model may call ({shown}); {TRUST_HINT}"
