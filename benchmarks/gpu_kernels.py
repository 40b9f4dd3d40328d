"""Measures on a CUDA GPU what the time model (advisor/recommend/kernels.py, timing.py) assumes, and a few
model steps it was not fitted on; for a session that is lent a GPU (issue 17, item 4).

Writes under $OUT (default ./gpu_kernels_out):
- kernels.csv: one row per micro-benchmark: kind, dtype, m, n, k, detail, seconds_median, tflops, gbps.
  GEMMs against size and dtype, including tile counts just at and one past a whole wave on this card's SM
  count, and an odd (unaligned) dimension like GPT-2's 50,257-word vocabulary; convolutions (3x3, 1x1,
  depthwise) forward and backward; copy bandwidth; the launch cost of a tiny op (host wall time and device
  time per op); a foreach Adam step over many tensors.
- measurements.csv + log.txt: model steps in the calibration format, measured by the project's own
  shared/calibration/measure_gpu.py (run_config), for families and settings not in h200/measurements.csv.
Run: OUT=/some/dir python benchmarks/gpu_kernels.py   (needs torch with CUDA, torchvision, transformers;
GT_BUDGET_S bounds the model sweep, default 240 s). The whole script takes about 5 minutes on an H200.
"""

from __future__ import annotations

import csv
import importlib.util
import math
import os
import time
from collections.abc import Callable
from pathlib import Path

import torch

OUT = Path(os.environ.get("OUT", "gpu_kernels_out"))
SHARED = Path(os.environ.get("ADVISOR_SHARED", Path(__file__).resolve().parents[2] / "shared"))
FIELDS = ["kind", "dtype", "m", "n", "k", "detail", "seconds_median", "tflops", "gbps"]
DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}
# Families and settings that the calibration set lacks (leave-one-family-out needs new families).
NEW_CONFIGS = [
    {"model": f"tv:{arch}", "mode": mode, "precision": precision, "optimizer": optimizer, "batch": batch}
    for arch in ("resnet34", "densenet121", "efficientnet_b0", "convnext_tiny", "swin_t", "regnet_y_400mf")
    for mode, precision, optimizer, batch in (
        ("train", "amp_bf16", "adamw", 64),
        ("train", "fp32", "sgd_momentum", 32),
        ("infer", "fp16", "", 8),
    )
] + [
    {"model": "hf:bert-base@128", "mode": "train", "precision": "amp_bf16", "optimizer": "adamw", "batch": 128},
    {"model": "hf:gpt2@1024", "mode": "infer", "precision": "bf16", "optimizer": "", "batch": 1},
]


def timed(fn: Callable[[], object], reps: int = 20) -> float:
    """Median device seconds of fn over reps (CUDA events), after 3 warm-up calls."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) / 1e3)
    return sorted(times)[len(times) // 2]


def gemm_rows(sms: int) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    torch.backends.cuda.matmul.allow_tf32 = False
    wave = int(math.sqrt(sms)) * 128  # about one wave of 128 x 128 tiles
    shapes = [(s, s, s) for s in (256, 512, 1024, 2048, 4096, 8192)]
    shapes += [
        (128 * sms, 128, 4096),
        (128 * (sms + 1), 128, 4096),
        (wave, wave, 1024),
        (8192, 768, 768),
        (8192, 3072, 768),
        (8192, 768, 3072),
        (8192, 50257, 768),
        (8192, 50304, 768),
        (16, 4096, 4096),
    ]
    for name, dtype in DTYPES.items():
        for m, n, k in shapes:
            a = torch.randn(m, k, device="cuda", dtype=dtype)
            b = torch.randn(k, n, device="cuda", dtype=dtype)
            seconds = timed(lambda a=a, b=b: a @ b)
            moved = (m * k + k * n + m * n) * a.element_size()
            rows.append(
                {
                    "kind": "gemm",
                    "dtype": name,
                    "m": m,
                    "n": n,
                    "k": k,
                    "detail": f"sms={sms}",
                    "seconds_median": seconds,
                    "tflops": 2 * m * n * k / seconds / 1e12,
                    "gbps": moved / seconds / 1e9,
                }
            )
    return rows


def conv_rows() -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    cases = [(64, 64, 56, 3, 1), (256, 64, 56, 1, 1), (512, 512, 7, 3, 1), (96, 96, 112, 3, 96), (3, 64, 224, 7, 1)]
    for name, dtype in (("fp32", torch.float32), ("bf16", torch.bfloat16)):
        for cin, cout, size, kernel, groups in cases:
            conv = torch.nn.Conv2d(cin, cout, kernel, padding=kernel // 2, groups=groups, bias=False).cuda().to(dtype)
            x = torch.randn(64, cin, size, size, device="cuda", dtype=dtype, requires_grad=True)
            macs = 64 * cout * size * size * (cin // groups) * kernel * kernel
            m, n, k = 64 * size * size, cout, cin // groups * kernel * kernel
            fwd = timed(lambda conv=conv, x=x: conv(x))
            both = timed(lambda conv=conv, x=x: conv(x).sum().backward())
            for kind, seconds, flops in (("conv_fwd", fwd, 2 * macs), ("conv_fwd_bwd", both, 6 * macs)):
                rows.append(
                    {
                        "kind": kind,
                        "dtype": name,
                        "m": m,
                        "n": n,
                        "k": k,
                        "detail": f"{cin}->{cout} {size}x{size} k{kernel} g{groups} b64",
                        "seconds_median": seconds,
                        "tflops": flops / seconds / 1e12,
                        "gbps": "",
                    }
                )
    return rows


def stream_and_launch_rows() -> list[dict[str, object]]:
    n = 1 << 28
    x = torch.randn(n, device="cuda")
    y = torch.empty_like(x)
    copy = timed(lambda: y.copy_(x))
    rows: list[dict[str, object]] = [
        {
            "kind": "copy",
            "dtype": "fp32",
            "m": n,
            "n": 1,
            "k": 1,
            "detail": "1 GiB",
            "seconds_median": copy,
            "tflops": "",
            "gbps": 2 * n * 4 / copy / 1e9,
        }
    ]
    tiny = torch.ones(1, device="cuda")
    ops = 1000
    device_per_op = timed(lambda: [tiny.add_(1) for _ in range(ops)], reps=5) / ops
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(ops):
        tiny.add_(1)
    host_per_op = (time.perf_counter() - start) / ops
    torch.cuda.synchronize()
    rows.append(
        {
            "kind": "launch",
            "dtype": "fp32",
            "m": 1,
            "n": 1,
            "k": 1,
            "detail": f"host_s_per_op={host_per_op:.3e}",
            "seconds_median": device_per_op,
            "tflops": "",
            "gbps": "",
        }
    )
    params = [torch.randn(4096, 1024, device="cuda", requires_grad=True) for _ in range(64)]
    for p in params:
        p.grad = torch.randn_like(p)
    opt = torch.optim.AdamW(params, foreach=True)
    seconds = timed(opt.step, reps=10)
    rows.append(
        {
            "kind": "adamw_foreach",
            "dtype": "fp32",
            "m": 64 * 4096 * 1024,
            "n": 64,
            "k": 1,
            "detail": "64 tensors of 4096x1024",
            "seconds_median": seconds,
            "tflops": "",
            "gbps": 21 * 64 * 4096 * 1024 * 4 / seconds / 1e9,
        }
    )
    return rows


def model_steps() -> None:
    spec = importlib.util.spec_from_file_location("measure_gpu", SHARED / "calibration" / "measure_gpu.py")
    if spec is None or spec.loader is None:
        raise SystemExit(f"{SHARED}/calibration/measure_gpu.py not found: set ADVISOR_SHARED")
    os.environ["OUT"] = str(OUT)
    measure = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(measure)
    with (OUT / "measurements.csv").open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=measure.FIELDS, extrasaction="ignore")
        writer.writeheader()
        measure.SINK = (writer, handle)
        for cfg in NEW_CONFIGS:
            if time.time() > measure.DEADLINE:
                break
            measure.run_config(cfg, writer, handle)


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    with (OUT / "kernels.csv").open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=FIELDS)
        writer.writeheader()
        parts: tuple[Callable[[], list[dict[str, object]]], ...] = (
            lambda: gemm_rows(sms),
            conv_rows,
            stream_and_launch_rows,
        )
        for part in parts:  # one part at a time, flushed: a failure later keeps what was measured
            writer.writerows(part())
            handle.flush()
            torch.cuda.empty_cache()
    model_steps()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
