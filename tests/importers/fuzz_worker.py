"""Throws mutated model files at one importer and reports, as JSON, what happened to each.

Run as a script (python fuzz_worker.py KIND COUNT SEED DIR) so that a crash of a C++ parser (protobuf, the
zip reader) fails the test instead of killing pytest. Each file gets PER_FILE_SECONDS (SIGALRM); anything
other than a SpecError or a successful import is a failure.
"""

from __future__ import annotations

import io
import json
import random
import signal
import sys
import time
import zipfile
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from model_files import GPT2_TINY_CONFIG, gpt2_tiny_tensors, onnx_mlp_bytes, safetensors_bytes

from advisor.core.errors import SpecError
from advisor.specs import load_graph

PER_FILE_SECONDS = 10.0


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
            del buf[at:at + rng.randint(1, 64)]
        elif choice < 0.9:
            buf = buf[:at]
        else:
            buf[at:at + 8] = rng.choice([b"\xff" * 8, b"\x7f" + b"\xff" * 7, (2**40).to_bytes(8, "little")])
    return bytes(buf)


def mutate_json_header(rng: random.Random) -> bytes:
    """Structured safetensors mutations: shapes, dtypes and offsets changed to hostile values."""
    tensors = gpt2_tiny_tensors()
    data = bytearray(safetensors_bytes(tensors))
    length = int.from_bytes(data[:8], "little")
    header = json.loads(data[8:8 + length])
    name = rng.choice(list(header))
    field = rng.choice(["dtype", "shape", "data_offsets"])
    header[name][field] = rng.choice([[2**62, 2**62], [-5], "F32", "X", [0, 2**63], [10**30], None, {}, [1.5],
                                      [0] * 40, "BF16", [3, 0]])
    raw = json.dumps(header).encode()
    return len(raw).to_bytes(8, "little") + raw + bytes(data[8 + length:])


def zip_member_mutation(seed: bytes, rng: random.Random) -> bytes:
    """Valid zip, damaged member (the pickle or a tensor record), so the parser behind the zip is reached."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(seed)) as src, zipfile.ZipFile(out, "w") as dst:
        victim = rng.choice(src.namelist())
        for item in src.infolist():
            data = src.read(item.filename)
            dst.writestr(item, mutate(data, rng) if item.filename == victim else data)
    return out.getvalue()


def seed_file(kind: str, directory: Path) -> bytes:
    if kind == "onnx":
        return onnx_mlp_bytes()
    if kind == "safetensors":
        (directory / "config.json").write_text(json.dumps(GPT2_TINY_CONFIG))
        return safetensors_bytes(gpt2_tiny_tensors())
    import torch

    buffer = io.BytesIO()
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.ReLU(), torch.nn.Flatten(),
                                torch.nn.Linear(4 * 30 * 30, 2))
    if kind == "pth":
        torch.save(model.state_dict(), buffer)
    elif kind == "pt":
        torch.jit.save(torch.jit.script(model), buffer)
    else:
        torch.export.save(torch.export.export(model, (torch.randn(2, 3, 32, 32),)), buffer)
    return buffer.getvalue()


def _alarm(signum: int, frame: object) -> None:
    raise TimeoutError


def run(kind: str, count: int, seed: int, directory: Path) -> dict[str, object]:
    rng = random.Random(seed)
    original = seed_file(kind, directory)
    path = directory / f"fuzzed.{kind}"
    makers: list[Callable[[], bytes]] = [lambda: mutate(original, rng)]
    if kind == "safetensors":
        makers.append(lambda: mutate_json_header(rng))
    if kind in ("pth", "pt", "pt2"):
        makers.append(lambda: zip_member_mutation(original, rng))
    signal.signal(signal.SIGALRM, _alarm)
    outcomes = {"spec_error": 0, "imported": 0}
    failures: list[str] = []
    slowest, start = 0.0, time.perf_counter()
    for i in range(count):
        path.write_bytes(rng.choice(makers)())
        t0 = time.perf_counter()
        signal.setitimer(signal.ITIMER_REAL, PER_FILE_SECONDS)
        try:
            load_graph(str(path))
            outcomes["imported"] += 1
        except SpecError as error:
            outcomes["spec_error"] += 1
            if "\n" in str(error) or str(path) not in str(error):
                failures.append(f"file {i}: error is not one line naming the file: {str(error)[:200]!r}")
        except BaseException as error:
            failures.append(f"file {i}: {type(error).__name__}: {str(error)[:200]}")
            (directory / f"failure{i}.{kind}").write_bytes(path.read_bytes())
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        slowest = max(slowest, time.perf_counter() - t0)
        if time.perf_counter() - t0 > 1.0 and "--keep-slow" in sys.argv:
            (directory / f"slow{i}.{kind}").write_bytes(path.read_bytes())
    return {"kind": kind, "files": count, **outcomes, "failures": failures[:20], "failure_count": len(failures),
            "slowest_s": round(slowest, 3), "total_s": round(time.perf_counter() - start, 2)}


if __name__ == "__main__":
    import warnings

    warnings.simplefilter("ignore")
    print(json.dumps(run(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), Path(sys.argv[4]))))
