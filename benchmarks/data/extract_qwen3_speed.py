"""Rebuilds public_decode_speed_qwen3.csv from a git clone of QwenLM/Qwen2.5 (the repository Qwen3's docs live
in): docs/source/getting_started/speed_benchmark.md at its last version, the Qwen3 speed benchmark on one NVIDIA
H20 96GB (transformers 4.51.3 with flash-attention 2.7.4, GPTQModel 2.2.0, AutoAWQ 0.2.9; SGLang 0.4.6), batch 1,
2048 new tokens after prompts of 1 to 129,042 tokens.

Its Speed is (prompt + generated tokens) / time (the page's Notes), so each row's generated tokens/s is
Speed x 2048 / (prompt + 2048), the same quantity as public_decode_speed.csv's. SGLang is not a runtime the
advisor models, and the page says its transformers FP8 path is not optimised yet: those rows stay in the file,
marked excluded.
Run: python benchmarks/data/extract_qwen3_speed.py QWEN25_CLONE
"""

from __future__ import annotations

import csv
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
PATH = "docs/source/getting_started/speed_benchmark.md"
NEW_TOKENS = 2048
WEIGHTS = {
    "BF16": ("bf16", "bf16"),
    "FP8": ("fp8", "bf16"),
    "GPTQ-Int8": ("int8", "fp16"),
    "GPTQ-INT4": ("int4", "fp16"),
    "AWQ-INT4": ("int4", "fp16"),
}  # (weights, activations)
FIELDS = (
    "model",
    "source_model",
    "engine",
    "card",
    "count",
    "tensor_ways",
    "stages",
    "weights",
    "precision",
    "batch",
    "prompt_len",
    "new_tokens",
    "tokens_per_s",
    "notes",
    "excluded",
    "source",
)


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout


def _cells(row: str) -> list[str]:
    return [re.sub(r"<br>", " ", c).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", row)]


def rows(repo: Path) -> list[dict[str, object]]:
    """Every row of every table; a rowspan'd Model / Input Length cell continues in the rows below it."""
    commit = git(repo, "log", "-1", "--format=%H", "--", PATH).strip()
    text = git(repo, "show", f"{commit}:{PATH}")
    source = f"QwenLM/Qwen2.5@{commit[:12]}:{PATH} ({git(repo, 'log', '-1', '--format=%cs', commit).strip()})"
    out = []
    for title, engine, body in re.findall(r"### (\S+)\s\((SGLang|Transformers)\)(.*?)</table>", text, re.S):
        model, length = title, ""
        for row in re.findall(r"<tr>(.*?)</tr>", body, re.S):
            cells = _cells(row)
            if not cells:
                continue
            if len(cells) >= 6 and cells[0] == model:
                cells = cells[1:]
            if cells[0].isdigit():
                length, cells = cells[0], cells[1:]
            quantization, gpus, speed, *rest = cells
            out.append(
                _row(
                    title,
                    engine,
                    quantization,
                    gpus,
                    speed,
                    int(length),
                    " ".join(rest[-1:]),
                    f"{source} table '{title} ({engine})'",
                )
            )
    return out


def _row(
    title: str, engine: str, quantization: str, gpus: str, speed: str, prompt: int, note: str, source: str
) -> dict[str, object]:
    weights, precision = WEIGHTS[quantization]
    excluded = (
        "SGLang is not a runtime the advisor models"
        if engine == "SGLang"
        else "the page: transformers' FP8 path is not optimised yet"
        if weights == "fp8"
        else f"not run ({note})"
        if speed == "-"
        else ""
    )
    cards = int(gpus) if gpus.isdigit() else 1
    generated = float(speed) * NEW_TOKENS / (prompt + NEW_TOKENS) if speed != "-" else 0.0
    return dict(
        model=title.lower(),
        source_model=title,
        engine="transformers" if engine == "Transformers" else engine,
        card="H20",
        count=cards,
        tensor_ways=cards,
        stages=1,
        weights=weights,
        precision=precision,
        batch=1,
        prompt_len=prompt,
        new_tokens=NEW_TOKENS,
        tokens_per_s=round(generated, 3),
        notes=f"{quantization}; the page's Speed {speed} x 2048 / ({prompt} + 2048)"
        + (f"; {note}" if note.strip() else ""),
        excluded=excluded,
        source=source,
    )


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    found = rows(Path(argv[0]))
    with (HERE / "public_decode_speed_qwen3.csv").open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=FIELDS)
        writer.writeheader()
        writer.writerows(found)
    print(f"public_decode_speed_qwen3.csv: {len(found)} rows, {sum(1 for r in found if not r['excluded'])} expressible")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
