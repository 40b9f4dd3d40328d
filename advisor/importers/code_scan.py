"""What a saved model's own code may call, checked before anything of it runs (DESIGN.md, Safety).

A TorchScript archive carries compiled Python-like code (code/**/*.py) that `torch.jit.load` runs: a class's
`__setstate__` runs during loading. TorchScript has no `open`, but it can call every registered operator, and
some reach files or memory maps: `torch.from_file(path, shared=True)` maps a file and `copy_` into it
overwrites that file (issue 16); torchvision registers `torch.ops.image.read_file` / `write_file`; custom
namespaces can hold anything. A torch.export program (.pt2) is a graph of the same operators.

So the check is by name, on the operators an archive calls, before it is loaded:
- any call whose last name part mentions files, memory maps, saving/loading, pickles, processes, sockets or
  libraries is refused (an over-wide net: a harmless method called `reload` is refused too, and the user may
  pass --trust-pickle for a file they trust);
- `torch.ops.<namespace>.*` is allowed only for the namespaces of PyTorch's own tensor operators (aten,
  prim, quantized) and torchvision's detection operators, whose file operators live in a separate
  namespace ("image") and are refused with it.
The pickles inside a TorchScript archive (data.pkl, constants.pkl) may only name torch's own rebuild
functions and the archive's own `__torch__` classes (whose code is checked above); pickletools walks the
opcodes without unpickling anything.
"""

from __future__ import annotations

import pickletools
import re
import zipfile
from collections.abc import Iterable
from pathlib import Path

RISKY_WORDS = frozenset({"file", "mmap", "save", "load", "loads", "open", "pickle", "exec", "eval", "system",
                         "popen", "spawn", "fork", "socket", "library", "dlopen", "shm", "write", "unlink", "remove"})
SAFE_OP_NAMESPACES = frozenset({"aten", "prim", "quantized", "torchvision", "_operator", "operator", "math",
                                "higher_order", "profiler"})
# TorchScript's own unpickler resolves only these (torch/csrc/jit/serialization/unpickler.cpp); anything else
# in an archive's pickle is a foreign file made to look like TorchScript.
SAFE_GLOBAL_PREFIXES = ("torch.", "__torch__.", "collections.OrderedDict")
_CALL = re.compile(r"([A-Za-z_][\w.]*)\s*\(")
_OPS_NAMESPACE = re.compile(r"\bops\.(\w+)")
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
    namespace = _OPS_NAMESPACE.search(name)
    if namespace is not None:
        return namespace.group(1) not in SAFE_OP_NAMESPACES
    if "::" in name:  # an operator's schema name: "image::read_file"
        return name.split("::")[0] not in SAFE_OP_NAMESPACES
    return False


def risky_calls(code: str) -> list[str]:
    """The names called in TorchScript code that risky_name refuses, in order, each once."""
    found = [name for name in _CALL.findall(code) if risky_name(name)]
    found += [f"ops.{ns}" for ns in _OPS_NAMESPACE.findall(code) if ns not in SAFE_OP_NAMESPACES]
    return list(dict.fromkeys(found))


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


def torchscript_problems(path: Path) -> list[str]:
    """What in a TorchScript archive could touch files or run foreign code; [] when nothing does."""
    problems: list[str] = []
    with zipfile.ZipFile(path) as archive:
        for name in archive.namelist():
            if "/code/" in name and name.endswith(".py"):
                calls = risky_calls(archive.read(name).decode("utf-8", "replace"))
                problems += [f"{call}() in {name.split('/code/', 1)[1]}" for call in calls]
            elif name.endswith(".pkl") and not name.endswith(".debug_pkl"):
                problems += [f"{g} in {name.rsplit('/', 1)[-1]}" for g in _pickle_globals(archive.read(name))
                             if not g.startswith(SAFE_GLOBAL_PREFIXES)]  # fmt: skip
    return list(dict.fromkeys(problems))


def describe(problems: list[str], what: str) -> str:
    shown = ", ".join(problems[:3]) + (f" and {len(problems) - 3} more" if len(problems) > 3 else "")
    return f"{what} calls operations that can reach files or run other code ({shown}); {TRUST_HINT}"
