"""Throws mutated model files at every importer and counts crashes, hangs and side effects (issue 16).

    python benchmarks/fuzz_importers.py                    # 10,000 files per importer, every importer
    python benchmarks/fuzz_importers.py --count 500 pt pt2 # fewer files, some importers
Each importer runs in its own process (`--worker`), so a crash of a C++ parser (protobuf, the zip reader,
TorchScript) is counted instead of ending the run. Per file, anything but a successful import or a one-line
SpecError naming the file is a failure; a file taking over --hang-s seconds is a hang (SIGALRM stops it).
Side effects: the seeds include malicious files (a pickle whose __reduce__ creates a marker file, a .pt2 whose
weight or sample inputs are that pickle, TorchScript whose __setstate__ overwrites a canary file through
torch.from_file), mutated like the rest; after every file the marker must be absent and the canary unchanged.
The test run (tests/importers/test_fuzz.py) uses the same worker on a small seeded sample, without --hang-s.
`hostile` throws the attack classes of issue 29 (tests/importers/hostile_files.py: TorchScript call spellings,
.pt2 Python targets, zip bombs, ONNX external data and absurd dims, huge configs, unreadable files), intact and
mutated, with the worker's folder as working folder and on sys.path, and reports each class: refused in one
line, slowest seconds, the largest child's peak memory, side effects (a marker, the victim file, an import).
"""

from __future__ import annotations

import argparse
import io
import json
import pickle
import random
import signal
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "importers")]

from model_files import GPT2_TINY_CONFIG, gpt2_tiny_tensors, onnx_mlp_bytes, safetensors_bytes  # noqa: E402

from advisor.core.errors import SpecError  # noqa: E402
from advisor.importers.spec_graph import load_graph  # noqa: E402

KINDS = ("safetensors", "onnx", "pth", "pt2", "pt", "hostile")
MALICIOUS_SHARE = 0.1  # of the files of an importer that has code paths (pth, pt2, pt)
CANARY_TEXT = b"canary: untouched"  # the TorchScript seed overwrites its first 8 bytes
Maker = Callable[[random.Random], bytes]


def mutate(data: bytes, rng: random.Random) -> bytes:
    """One to four byte-level edits: flips, random bytes, inserted/deleted runs, truncation, big integers."""
    buf = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        choice = rng.random()
        at = rng.randrange(len(buf)) if buf else 0
        if choice < 0.3 and buf:
            buf[at] ^= 1 << rng.randrange(8)
        elif choice < 0.5 and buf:
            buf[at] = rng.randrange(256)
        elif choice < 0.65:
            buf[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 16)))
        elif choice < 0.8 and buf:
            del buf[at : at + rng.randint(1, 64)]
        elif choice < 0.9:
            buf = buf[:at]
        else:
            buf[at : at + 8] = rng.choice([b"\xff" * 8, b"\x7f" + b"\xff" * 7, (2**40).to_bytes(8, "little")])
    return bytes(buf)


def mutate_json_header(rng: random.Random) -> bytes:
    """Structured safetensors mutations: shapes, dtypes and offsets changed to hostile values."""
    data = bytearray(safetensors_bytes(gpt2_tiny_tensors()))
    length = int.from_bytes(data[:8], "little")
    header = json.loads(data[8 : 8 + length])
    name = rng.choice(list(header))
    field = rng.choice(["dtype", "shape", "data_offsets"])
    header[name][field] = rng.choice(
        [[2**62, 2**62], [-5], "F32", "X", [0, 2**63], [10**30], None, {}, [1.5], [0] * 40, "BF16", [3, 0]]
    )
    raw = json.dumps(header).encode()
    return len(raw).to_bytes(8, "little") + raw + bytes(data[8 + length :])


def replace_members(seed: bytes, change: Callable[[str, bytes], bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(seed)) as src, zipfile.ZipFile(out, "w") as dst:
        for item in src.infolist():
            dst.writestr(item, change(item.filename, src.read(item.filename)))
    return out.getvalue()


def zip_member_mutation(seed: bytes, rng: random.Random) -> bytes:
    """Valid zip, damaged member (the pickle or a tensor record), so the parser behind the zip is reached."""
    with zipfile.ZipFile(io.BytesIO(seed)) as archive:
        victim = rng.choice(archive.namelist())
    return replace_members(seed, lambda name, data: mutate(data, rng) if name == victim else data)


# ---------------------------------------------------------------- seeds, honest and malicious


class MarkerPayload:
    """Unpickling it calls open(marker, "w"): code running is visible as the marker file appearing."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str, str]]:
        return (open, (str(self.marker), "w"))


def _tiny_model() -> object:
    import torch

    return torch.nn.Sequential(
        torch.nn.Conv2d(3, 4, 3), torch.nn.ReLU(), torch.nn.Flatten(), torch.nn.Linear(4 * 30 * 30, 2)
    )


def honest_seed(kind: str, directory: Path) -> bytes:
    if kind == "onnx":
        return onnx_mlp_bytes()
    if kind == "safetensors":
        (directory / "config.json").write_text(json.dumps(GPT2_TINY_CONFIG))
        return safetensors_bytes(gpt2_tiny_tensors())
    import torch

    buffer, model = io.BytesIO(), _tiny_model()
    if kind == "pth":
        torch.save(model.state_dict(), buffer)  # type: ignore[attr-defined]
    elif kind == "pt":
        torch.jit.save(torch.jit.script(model), buffer)
    else:
        torch.export.save(torch.export.export(model, (torch.randn(2, 3, 32, 32),)), buffer)  # type: ignore[arg-type]
    return buffer.getvalue()


def malicious_seeds(kind: str, honest: bytes, directory: Path) -> list[bytes]:
    """Files that run code or touch files if an importer lets them: marker / canary show it."""
    payload = pickle.dumps(MarkerPayload(directory / "marker"), protocol=2)
    if kind == "pth":
        return [replace_members(honest, lambda n, d: payload if n.endswith("data.pkl") else d), payload]
    if kind == "pt":
        from malicious_files import overwriting_torchscript  # imports torch: only for the torch importers

        return [
            overwriting_torchscript(str(directory / "canary")),
            replace_members(honest, lambda n, d: payload if n.endswith("/data.pkl") else d),
        ]
    if kind == "pt2":

        def pickled_weight(name: str, data: bytes) -> bytes:
            if name.endswith("model_weights_config.json"):
                config = json.loads(data)
                for meta in config["config"].values():
                    meta["use_pickle"] = True
                return json.dumps(config).encode()
            return payload if "/data/weights/weight_" in name else data

        return [
            replace_members(honest, pickled_weight),
            replace_members(honest, lambda n, d: payload if n.endswith("sample_inputs/model.pt") else d),
        ]
    return []


def makers(kind: str, directory: Path, honest: bytes) -> list[tuple[float, Maker]]:
    """(share, maker) pairs: how the files of one importer are made from its honest seed."""
    found: list[tuple[float, Maker]] = [(1.0, lambda rng: mutate(honest, rng))]
    if kind == "safetensors":
        found.append((1.0, mutate_json_header))
    if kind in ("pth", "pt", "pt2"):
        found.append((1.0, lambda rng: zip_member_mutation(honest, rng)))
    evil = malicious_seeds(kind, honest, directory)
    if evil:
        found.append((MALICIOUS_SHARE * 2, lambda rng: rng.choice(evil)))  # intact, exactly as an attacker sends
        found.append((MALICIOUS_SHARE * 2, lambda rng: _mutated(rng.choice(evil), rng)))
    return found


def _mutated(data: bytes, rng: random.Random) -> bytes:
    return zip_member_mutation(data, rng) if zipfile.is_zipfile(io.BytesIO(data)) else mutate(data, rng)


# ---------------------------------------------------------------- one importer, in this process


def _alarm(signum: int, frame: object) -> None:
    raise TimeoutError


def _side_effects(directory: Path) -> list[str]:
    """What a malicious payload left behind; both are reset so the next file is judged on its own."""
    seen = []
    marker, canary = directory / "marker", directory / "canary"
    if marker.exists():
        seen.append("marker file created")
        marker.unlink()
    if canary.read_bytes() != CANARY_TEXT:
        seen.append("canary file overwritten")
        canary.write_bytes(CANARY_TEXT)
    return seen


def _one(path: Path, index: int, hang_s: float | None, spec: str | None = None) -> tuple[str, str | None]:
    """Load one file (or `spec`, which names it) -> (outcome, failure text or None)."""
    if hang_s:
        signal.setitimer(signal.ITIMER_REAL, hang_s)
    try:
        load_graph(spec or str(path))
        return "imported", None
    except SpecError as error:
        if "\n" in str(error) or str(path) not in str(error):
            return "spec_error", f"file {index}: error is not one line naming the file: {str(error)[:200]!r}"
        return "spec_error", None
    except TimeoutError:
        return "hang", f"file {index}: still running after {hang_s} s"
    except BaseException as error:  # everything else is what the fuzz looks for
        return "failure", f"file {index}: {type(error).__name__}: {str(error)[:200]}"
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def run(
    kind: str, count: int, seed: int, directory: Path, hang_s: float | None = None, progress: int = 0
) -> dict[str, object]:
    """Fuzz one importer in this process; -> the report (counts, the first failures, times)."""
    if kind == "hostile":
        return run_hostile(count, seed, directory, hang_s)
    rng = random.Random(seed)
    (directory / "canary").write_bytes(CANARY_TEXT)
    honest = honest_seed(kind, directory)  # once: a .pt2 seed is a torch.export run (1.5 s on 2 cores)
    table = makers(kind, directory, honest)
    shares, choices = [s for s, _ in table], [m for _, m in table]
    path = directory / f"fuzzed.{kind}"
    path.write_bytes(honest)
    load_graph(str(path))  # untimed: first-use imports (seconds) must not count as a hang, nor be cut by one
    signal.signal(signal.SIGALRM, _alarm)
    counts = {"imported": 0, "spec_error": 0, "hang": 0, "failure": 0, "side_effect": 0}
    failures: list[str] = []
    slowest, start = 0.0, time.perf_counter()
    for index in range(count):
        path.write_bytes(rng.choices(choices, shares)[0](rng))
        began = time.perf_counter()
        outcome, failure = _one(path, index, hang_s)
        slowest = max(slowest, time.perf_counter() - began)
        counts[outcome] += 1
        effects = _side_effects(directory)
        counts["side_effect"] += bool(effects)
        failures += [failure] if failure else []
        failures += [f"file {index}: {effect}" for effect in effects]
        if failure or effects:
            (directory / f"failure{index}.{kind}").write_bytes(path.read_bytes())
        if progress and (index + 1) % progress == 0:  # a long run shows how far it got on stderr
            print(
                json.dumps(
                    {"kind": kind, "done": index + 1, **counts, "elapsed_s": round(time.perf_counter() - start, 1)}
                ),
                file=sys.stderr,
                flush=True,
            )
    return {
        "kind": kind,
        "files": count,
        **counts,
        "failures": failures[:20],
        "failure_count": len(failures),
        "slowest_s": round(slowest, 3),
        "total_s": round(time.perf_counter() - start, 2),
    }


def _hostile_one(case: str, spec: str, folder: Path, hang_s: float | None, index: int) -> tuple[str, str | None, float]:
    """One hostile file -> (outcome, failure or None, seconds), its side effects checked and reset."""
    from hostile_files import SECRET_NUMBER, VICTIM_TEXT

    began = time.perf_counter()
    outcome, failure = _one(folder, index, hang_s, spec)  # the error names a file of the case's folder
    seconds = time.perf_counter() - began
    effects = [
        e
        for e, seen in (
            ("marker file created", (folder / "marker").exists()),
            ("victim file changed", (folder / "victim.txt").read_text() != VICTIM_TEXT),
            ("evil_helper imported", "evil_helper" in sys.modules),
        )
        if seen
    ]
    (folder / "marker").unlink(missing_ok=True)
    (folder / "victim.txt").write_text(VICTIM_TEXT)
    sys.modules.pop("evil_helper", None)
    if outcome == "imported" and case.startswith("onnx-external") and SECRET_NUMBER in str(load_graph(spec)):
        effects.append("a file of the working folder was read into a shape")
    failure = failure or (f"{case}: {', '.join(effects)}" if effects else None)
    return ("side_effect" if effects else outcome), failure, seconds


def run_hostile(count: int, seed: int, directory: Path, hang_s: float | None) -> dict[str, object]:
    """Every class of hostile_files.CASES, round-robin, intact first and then mutated; -> a report per class."""
    import os
    import resource

    from hostile_files import CASES, build

    rng = random.Random(seed)
    os.chdir(directory)
    sys.path.insert(0, str(directory))  # as `python -m advisor` run in the model's folder would have it
    signal.signal(signal.SIGALRM, _alarm)
    specs = {}
    for case in CASES:
        (directory / case).mkdir()
        specs[case] = build(case, directory / case)
    from advisor.importers import onnx_import, torch_loader

    torch_loader.warm_imports()  # first-use imports, untimed
    onnx_import.warm_imports(directory)
    classes: dict[str, dict[str, float]] = {
        case: {"files": 0, "refused": 0, "imported": 0, "slowest_s": 0.0} for case in CASES
    }
    failures: list[str] = []
    start = time.perf_counter()
    for index in range(count):
        case = list(CASES)[index % len(CASES)]
        spec, folder = specs[case], directory / case
        path = Path(spec.removeprefix("hf:"))
        small = path.is_file() and not path.is_symlink() and path.stat().st_size < 64 << 20
        original = path.read_bytes() if small else None  # the sparse 2 GiB files stay as they are
        if original is not None and index >= len(CASES) and not spec.startswith("hf:"):  # round 1 intact
            # a bomb's bytes are mutated as they are: unpacking its member to mutate it would cost the gigabyte
            path.write_bytes(mutate(original, rng) if "bomb" in case else _mutated(original, rng))
        outcome, failure, seconds = _hostile_one(case, spec, folder, hang_s, index)
        if original is not None:
            path.write_bytes(original)
        row = classes[case]
        key = {"spec_error": "refused", "imported": "imported"}.get(outcome, outcome)
        row["files"] += 1
        row[key] = row.get(key, 0) + 1
        row["slowest_s"] = round(max(row["slowest_s"], seconds), 2)
        if outcome == "imported" and (index < len(CASES)) and not case.startswith("onnx-external"):
            failure = failure or f"{case}: the intact file imported instead of being refused"
        failures += [failure] if failure else []
    peak_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return {
        "kind": "hostile",
        "files": count,
        "classes": classes,
        "failures": failures[:20],
        "failure_count": len(failures),
        "largest_child_peak_mib": round(peak_mib),
        "total_s": round(time.perf_counter() - start, 2),
    }


# ---------------------------------------------------------------- every importer, one process each


def fuzz_in_child(kind: str, count: int, seed: int, hang_s: float | None, progress: int = 0) -> dict[str, object]:
    """Run one importer's fuzz in a fresh process; a crash of that process is reported, not raised."""
    with tempfile.TemporaryDirectory(prefix=f"fuzz-{kind}-") as folder:
        argv = [
            sys.executable,
            __file__,
            "--worker",
            kind,
            str(count),
            str(seed),
            folder,
            "--hang-s",
            str(hang_s or 0),
            "--progress",
            str(progress),
        ]
        result = subprocess.run(argv, stdout=subprocess.PIPE, text=True, cwd=ROOT)  # progress: straight to stderr
    lines = result.stdout.strip().splitlines()
    if result.returncode != 0 or not lines:
        return {"kind": kind, "files": count, "crashed": True, "returncode": result.returncode}
    report: dict[str, object] = json.loads(lines[-1])
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("kinds", nargs="*", metavar="KIND", help=f"some of {', '.join(KINDS)} (default: all)")
    parser.add_argument("--count", type=int, default=10_000, help="files per importer (default 10,000)")
    parser.add_argument("--seed", type=int, default=20240611)
    parser.add_argument("--hang-s", type=float, default=10.0, help="a file taking longer is a hang (0: no limit)")
    parser.add_argument("--progress", type=int, default=0, metavar="N", help="a progress line every N files")
    parser.add_argument("--worker", nargs=4, metavar=("KINDS", "COUNTS", "SEED", "DIR"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        import warnings

        warnings.simplefilter("ignore")
        kinds, counts, seed, folder = args.worker
        # several importers ("pt,pt2" "60,40"), each in a folder of its own, share one process: the test's
        # sample imports torch once rather than once an importer; every file is still read in a forked,
        # capped child (advisor/importers/sandbox.py), so a parser's crash stays one file's failure
        several = "," in kinds
        for kind, count in zip(kinds.split(","), counts.split(","), strict=True):
            where = Path(folder) / kind if several else Path(folder)
            where.mkdir(exist_ok=True)
            print(json.dumps(run(kind, int(count), int(seed), where, args.hang_s or None, args.progress)), flush=True)
        return 0
    unknown = [kind for kind in args.kinds if kind not in KINDS]
    if unknown:
        parser.error(f"unknown importer {unknown[0]!r}; choose from {', '.join(KINDS)}")
    bad = 0
    for kind in args.kinds or KINDS:
        report = fuzz_in_child(kind, args.count, args.seed, args.hang_s, args.progress)
        bad += int(bool(report.get("crashed") or report.get("failure_count")))
        print(json.dumps(report), flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
