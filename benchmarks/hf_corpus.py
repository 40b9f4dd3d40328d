"""The tiny transformers corpus (tests/importers/hf_corpus.py): simulated vs analytic peak per family.

For each family and workload, prints the simulated peak_bytes, the analytic peak_bytes of the traced layer
graph, and their difference in percent (issue 14 aims at 3%), then the median and the worst, and the time
each method took. Options: --only NAME, --batch N, --seq-len N, --precision P; --bundled NAME[,NAME] runs
the real-size configs of advisor/data/llm_configs instead (e.g. --bundled mixtral-8x7b --batch 1), to check
that what agrees on the tiny corpus still agrees at real sizes.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from advisor.core.workload import Workload  # noqa: E402
from advisor.importers.spec_estimate import estimate_spec  # noqa: E402
from tests.importers.hf_corpus import FAMILIES, write_config  # noqa: E402

BUNDLED = HERE.parent / "advisor" / "data" / "llm_configs"


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="")
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--seq-len", type=int, default=128)
    parser.add_argument("--precision", default="amp_bf16")
    parser.add_argument("--bundled", default="", help="comma-separated advisor/data/llm_configs names")
    return parser.parse_args()


def _specs(args: argparse.Namespace) -> list[tuple[str, str, str]]:
    """(name, kind, SPEC) of each model to compare."""
    if args.bundled:
        return [(n, "decoder", f"hf:{BUNDLED / n / 'config.json'}") for n in args.bundled.split(",")]
    folder = Path(tempfile.mkdtemp())
    return [(f.name, f.kind, f"hf:{write_config(f, folder)}") for f in FAMILIES if args.only in f.name]


def _summary(label: str, diffs: list[tuple[float, str]]) -> None:
    if diffs:
        worst = sorted(diffs, key=lambda d: -abs(d[0]))[:5]
        within = sum(abs(d) <= 3 for d, _ in diffs)
        print(
            f"{label}: {len(diffs)} runs, median |diff| {statistics.median(abs(d) for d, _ in diffs):.1f}%, "
            f"within 3%: {within}/{len(diffs)}; worst: " + ", ".join(f"{w[1]} {w[0]:+.1f}%" for w in worst)
        )


def main() -> None:
    args = _arguments()
    diffs: dict[str, list[tuple[float, str]]] = {}
    spent = {"simulated": 0.0, "analytic": 0.0}
    print(f"{'family':<14} {'mode':<6} {'simulated MiB':>14} {'analytic MiB':>13} {'diff %':>8}")
    for name, kind, spec in _specs(args):
        for mode in ("train", "infer"):
            workload = Workload(mode, args.batch, args.precision)  # type: ignore[arg-type]
            peaks = {}
            for method in spent:
                start = time.perf_counter()
                try:
                    peaks[method] = estimate_spec(spec, workload, seq_len=args.seq_len, method=method).memory.peak_bytes
                except Exception as error:  # a benchmark reports every family, failing or not
                    print(f"{name:<14} {mode:<6} {method} failed: {error}")
                spent[method] += time.perf_counter() - start
            if len(peaks) == 2:
                diff = 100 * (peaks["analytic"] - peaks["simulated"]) / peaks["simulated"]
                diffs.setdefault(kind, []).append((diff, f"{name} {mode}"))
                print(
                    f"{name:<14} {mode:<6} {peaks['simulated'] / 2**20:>14.2f} "
                    f"{peaks['analytic'] / 2**20:>13.2f} {diff:>+8.1f}"
                )
    print()
    _summary("all", [d for kind in diffs.values() for d in kind])
    for kind, kind_diffs in diffs.items():
        _summary(kind, kind_diffs)
    print(f"time: simulated {spent['simulated']:.1f} s, analytic {spent['analytic']:.1f} s")


if __name__ == "__main__":
    main()
