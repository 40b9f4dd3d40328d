"""Loads a PyTorch model from any torch SPEC form into one LoadedModel: the module, a way to make inputs for
a batch, the loss, and where it came from.

Safety (DESIGN.md, Safety): unless the caller says the file is trusted (`trust_pickle`, the `--trust-pickle`
flag), nothing pickled runs and no archive code that could reach files loads: a .pt2 is read part by part
(pt2_archive.py) instead of through torch.export.load, a TorchScript archive's code is checked
(code_scan.py) before torch.jit.load runs it, and `torch.load` runs only with weights_only=True. A `.py`
file is code the user chose to run.
"""

from __future__ import annotations

import functools
import importlib.util
import logging
import pickletools
import sys
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from advisor.core.errors import SpecError
from advisor.importers.common import existing_file, fail, one_line, optional_module

if TYPE_CHECKING:
    import torch

Inputs = tuple[tuple[Any, ...], dict[str, Any]]
TORCH_PREFIXES = ("torchvision:", "timm:", "hf:")
TORCH_SUFFIXES = (".py", ".pt2", ".pt", ".pth", ".bin")
TASKS = ("classification", "language_model")


@dataclass(frozen=True)
class LoadedModel:
    """A model ready to run. `example_inputs(batch)` returns (args, kwargs) for `module(*args, **kwargs)`.
    `loss_fn(output, inputs)` is the user's loss when the model file gives one (else cross-entropy applies).
    The module may live on the meta device (hf:): parameters with shapes and no storage."""

    name: str
    module: torch.nn.Module
    example_inputs: Callable[[int], Inputs]
    loss_fn: Callable[..., Any] | None
    source: str
    task: str
    # a training step's inputs when they differ from example_inputs (hf: models add their labels)
    train_inputs: Callable[[int], Inputs] | None = None


class ExampleInputs:
    """example_inputs for forms that carry their own inputs at one batch size (torch.export archives):
    `fixed_batch` is that size when the program only accepts it, so tracing uses it."""

    def __init__(self, make: Callable[[int], Inputs], fixed_batch: int | None = None) -> None:
        self._make, self.fixed_batch = make, fixed_batch

    def __call__(self, batch_size: int) -> Inputs:
        return self._make(batch_size)


def import_torch(form: str) -> Any:
    return optional_module("torch", form)


@functools.cache
def warm_imports() -> None:
    """Imports what reading an archive needs, before sandbox.py forks a child for it: the child's own imports
    die with it, and torch's export and fake-tensor machinery take seconds to import each time."""
    import torch._export.serde.serialize
    import torch.export.pt2_archive._package

    from advisor.importers import torch_graph  # noqa: F401
    from advisor.importers.probe import _warm_fake_tensors

    _warm_fake_tensors(torch)


def is_torch_spec(spec: str) -> bool:
    return spec.startswith(TORCH_PREFIXES) or spec.lower().endswith(TORCH_SUFFIXES)


def load_module(spec: str, *, trust_pickle: bool = False, seq_len: int | None = None) -> LoadedModel:
    """Any torch SPEC form -> LoadedModel; a SpecError (one line naming the file) for anything wrong.
    `seq_len` sets the tokens per sample of hf: models (the model file's example_inputs decide otherwise)."""
    if spec.startswith(TORCH_PREFIXES):
        from advisor.importers import torch_hub

        return torch_hub.load(spec, seq_len)
    lowered = spec.lower()
    if not lowered.endswith(TORCH_SUFFIXES):
        raise fail(spec, f"not a torch model file (expected one of {', '.join(TORCH_SUFFIXES)})")
    path = existing_file(spec)
    import_torch(spec)
    if lowered.endswith(".py"):
        return load_python(path)
    if lowered.endswith(".pt2"):
        return load_exported(path, trust_pickle)
    return load_archive(path, trust_pickle)


# ---------------------------------------------------------------- TorchScript


def check_debug_info(path: Path) -> None:
    """TorchScript unpickles an archive's *.debug_pkl members only when it builds an error message, and a
    damaged one made that take 15-30 s of allocations (seen by fuzzing): refuse such a file at once instead.
    Sizes are capped from the zip directory first (a 1 GiB debug_pkl kept this walk busy for 420 s, issue 29);
    pickletools only walks the opcodes; nothing is unpickled or run."""
    from advisor.importers.zip_limits import checked_members, member_kind, read_member

    members = [m for m in checked_members(path) if member_kind(m.filename) == "debug"]
    try:
        with zipfile.ZipFile(path) as archive:
            for info in members:
                for _ in pickletools.genops(read_member(archive, info)):
                    pass
    except Exception as error:  # a bad zip member, an unknown opcode, a truncated argument
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise fail(path, f"damaged TorchScript archive (debug info unreadable: {reason})") from None


def check_script_code(path: Path) -> None:
    """Refuse an archive whose code could reach files or run foreign code, before torch.jit.load runs any of
    it (its classes' __setstate__ runs during loading): see code_scan.py."""
    from advisor.importers.code_scan import describe, torchscript_problems

    try:
        problems = torchscript_problems(path)
    except SpecError:
        raise
    except Exception as error:  # a damaged member or pickle: refused as damaged, nothing ran
        raise fail(path, f"damaged TorchScript archive ({one_line(f'{type(error).__name__}: {error}', 160)})") from None
    if problems:
        raise fail(path, describe(problems, "the TorchScript code"))


# ---------------------------------------------------------------- FILE.py


def _run_file(path: Path) -> Any:
    name = f"advisor_user_model_{abs(hash(str(path.resolve())))}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise fail(path, "cannot be imported as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickling look their module up here
    # as `python FILE.py` would, the file's folder comes first on the path, so helpers beside it import (and
    # calls into them later, from example_inputs or loss_fn, still find them)
    folder = str(path.resolve().parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    try:
        spec.loader.exec_module(module)
    except SpecError:
        raise
    except BaseException as error:  # the user's code: report any failure as one line, even SystemExit
        sys.modules.pop(name, None)
        raise fail(path, f"running it failed: {describe_error(error)}") from None
    return module


# advisor's own files: a line in them is where advisor called the user's code, not where that code failed
_ADVISOR_FOLDER = str(Path(__file__).resolve().parents[1])


def describe_error(error: BaseException) -> str:
    """One line for an exception raised in the user's or a library's code: its type, message and the last line of
    a .py file it passed outside advisor, with that file's name (what the CLI prints, and the simulated step's
    failure). A bare "(line 156)" was advisor's own line for a syntax error on line 1 of a 1-line file, and a
    line of torch's linear.py read as one of the user's file."""
    line = ""
    tb = error.__traceback__
    while tb is not None:
        file = tb.tb_frame.f_code.co_filename
        if file.endswith(".py") and not file.startswith(_ADVISOR_FOLDER):
            line = f" ({Path(file).name}, line {tb.tb_lineno})"
        tb = tb.tb_next
    return one_line(f"{type(error).__name__}: {error}{line}", 240)


def load_python(path: Path) -> LoadedModel:
    code = _run_file(path)
    for required in ("build_model", "example_inputs"):
        if not callable(getattr(code, required, None)):
            raise fail(
                path,
                f"defines no {required}() function (a model file needs build_model() and example_inputs(batch_size))",
            )
    torch = import_torch(str(path))
    try:
        module = code.build_model()
    except BaseException as error:
        raise fail(path, f"build_model() failed: {describe_error(error)}") from None
    if not isinstance(module, torch.nn.Module):
        raise fail(path, f"build_model() returned {type(module).__name__}, not a torch.nn.Module")
    task = getattr(code, "TASK", "classification")
    if task not in TASKS:
        raise fail(path, f"TASK must be one of {', '.join(TASKS)}, got {task!r}")
    loss_fn = getattr(code, "loss_fn", None)
    if loss_fn is not None and not callable(loss_fn):
        raise fail(path, "loss_fn is not a function")
    return LoadedModel(path.stem, module, _user_inputs(path, code.example_inputs), loss_fn, str(path), task)


def _user_inputs(path: Path, make: Callable[[int], Any]) -> Callable[[int], Inputs]:
    def example_inputs(batch_size: int) -> Inputs:
        try:
            value = make(batch_size)
        except BaseException as error:
            raise fail(path, f"example_inputs({batch_size}) failed: {describe_error(error)}") from None
        return normalise_inputs(value, path)

    return example_inputs


def normalise_inputs(value: Any, where: str | Path) -> Inputs:
    """A tuple/list is positional arguments, a dict keyword arguments, a lone tensor the only argument."""
    torch = import_torch(str(where))
    if isinstance(value, dict):
        return (), dict(value)
    if isinstance(value, tuple | list):
        return tuple(value), {}
    if isinstance(value, torch.Tensor):
        return (value,), {}
    raise fail(where, f"example_inputs must return a tuple, dict or tensor, got {type(value).__name__}")


# ---------------------------------------------------------------- FILE.pt2 (torch.export)


def load_exported(path: Path, trust_pickle: bool = False) -> LoadedModel:
    """torch.export.load unpickles parts of the archive: only a trusted file goes there (pt2_archive.py)."""
    from advisor.importers.pt2_archive import load_untrusted

    torch = import_torch(str(path))
    _require_zip(path, "a torch.export archive (.pt2)")
    try:
        with quiet_log(*EXPORT_LOGGERS, everything=True):  # it logs a traceback before raising; one line here
            program = torch.export.load(str(path)) if trust_pickle else load_untrusted(torch, path)
            module = program.module()
    except SpecError:
        raise
    except Exception as error:
        raise fail(path, f"not a loadable torch.export archive: {describe_error(error)}") from None
    args, kwargs = program.example_inputs or ((), {})
    tensors = [t for t in (*args, *kwargs.values()) if isinstance(t, torch.Tensor) and t.dim() > 0]
    if not tensors:
        raise fail(path, "the archive holds no example inputs; export with example inputs (torch.export.export)")
    batch = int(tensors[0].shape[0])

    def make(batch_size: int) -> Inputs:
        return (
            tuple(_resized(torch, a, batch, batch_size) for a in args),
            {k: _resized(torch, v, batch, batch_size) for k, v in kwargs.items()},
        )

    return LoadedModel(path.stem, module, ExampleInputs(make, batch), None, str(path), "classification")


def _resized(torch: Any, value: Any, old: int, new: int) -> Any:
    """The exported example input with its batch (first) dimension changed; zeros keep integer ids valid."""
    if not isinstance(value, torch.Tensor) or value.dim() == 0 or value.shape[0] != old or old == new:
        return value
    return torch.zeros((new, *value.shape[1:]), dtype=value.dtype)


# torch._logging gives several export loggers their own level (torch/_logging/_registrations.py, "export"), so
# silencing "torch.export" alone let a trusted .pt2's failure print a 73-line logged traceback (issue 29).
EXPORT_LOGGERS = ("torch.export", "torch._export", "torch.fx", "torch._dynamo")


@contextmanager
def quiet_log(*prefixes: str, everything: bool = False) -> Iterator[None]:
    """Silences torch loggers (these names and every logger under them) that print tracebacks for errors we
    report as one line anyway. `everything`: all logging below CRITICAL, while a model file loads (a logger
    torch configures during the load would otherwise get its own level back)."""
    disabled = logging.root.manager.disable
    if everything:
        logging.disable(logging.ERROR)
    known = [
        name
        for name in list(logging.Logger.manager.loggerDict)
        if any(name == p or name.startswith(p + ".") for p in prefixes)
    ]
    loggers = [logging.getLogger(name) for name in dict.fromkeys([*prefixes, *known])]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.setLevel(level)
        logging.disable(disabled)


def is_zip(path: Path) -> bool:
    try:
        return zipfile.is_zipfile(path)
    except Exception:  # damaged archives raise more than BadZipFile
        return False


def _require_zip(path: Path, what: str) -> None:
    if not is_zip(path):
        raise fail(path, f"not {what}: not a zip archive (truncated or another format)")


# ---------------------------------------------------------------- .pt / .pth / .bin


def load_archive(path: Path, trust_pickle: bool) -> LoadedModel:
    """TorchScript first (no pickled code runs); a torch.save pickle only when trusted."""
    from advisor.importers import state_dict

    torch = import_torch(str(path))
    if is_zip(path) and state_dict.is_torchscript(path):
        check_debug_info(path)
        if not trust_pickle:
            check_script_code(path)
        try:
            module = torch.jit.load(str(path), map_location="cpu")
        except Exception as error:
            raise fail(path, f"not a loadable TorchScript archive: {describe_error(error)}") from None
        return LoadedModel(
            path.stem, module, script_inputs(path, module, isolate=True), None, str(path), "classification"
        )
    if not trust_pickle:
        state_dict.load_weights(path)  # says what the file is: a state_dict, or pickled code
        raise fail(
            path,
            "holds only weights (a state_dict): no architecture to run; give a FILE.py whose build_model() builds it",
        )
    return _load_trusted(path, torch)


def _load_trusted(path: Path, torch: Any) -> LoadedModel:
    try:
        with quiet_log(*EXPORT_LOGGERS, everything=True):
            obj = torch.load(str(path), map_location="cpu", weights_only=False)  # the user trusts this file
    except Exception as error:
        raise fail(path, f"cannot be loaded: {describe_error(error)}") from None
    if not isinstance(obj, torch.nn.Module):
        raise fail(path, f"holds a {type(obj).__name__}, not a model (torch.nn.Module)")
    return LoadedModel(path.stem, obj, script_inputs(path, obj), None, str(path), "classification")


def script_inputs(path: Path, module: Any, isolate: bool = False) -> Callable[[int], Inputs]:
    """A saved model does not record its input shape: try an image batch, then token ids, and say so.
    `isolate`: the first run of an untrusted archive's code happens in a child process (probe.py)."""
    from advisor.importers.probe import probe_inputs

    return probe_inputs(path, module, isolate)
