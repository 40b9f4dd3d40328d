"""Predicted weight bytes of zoo LLMs in each storage format against published checkpoint and GGUF file sizes
(a GGUF file adds its metadata and tokenizer, a few MB). Prints the table, the median and largest error.

Run: .venv/bin/python benchmarks/llm_weights.py
"""

from __future__ import annotations

import statistics

from advisor.core.llm.quant import weight_bytes
from advisor.core.zoo.llm import preset_decoder

GB, GIB = 1e9, 2**30
# (zoo name, format, published size, unit, source)
PUBLISHED = [
    ("llama-3.1-8b", "bf16", 16.06, GB, "meta-llama/Llama-3.1-8B safetensors (8.03B params x 2 B)"),
    ("llama-3.1-8b", "q4_k_m", 4.92, GB, "bartowski/Meta-Llama-3.1-8B-Instruct-GGUF"),
    ("llama-3.1-8b", "q5_k_m", 5.73, GB, "bartowski/Meta-Llama-3.1-8B-Instruct-GGUF"),
    ("llama-3.1-8b", "q8_0", 8.54, GB, "bartowski/Meta-Llama-3.1-8B-Instruct-GGUF"),
    ("llama-3.1-70b", "q4_k_m", 42.52, GB, "bartowski/Meta-Llama-3.1-70B-Instruct-GGUF"),
    ("llama-3.1-70b", "q5_k_m", 49.95, GB, "bartowski/Meta-Llama-3.1-70B-Instruct-GGUF"),
    ("llama-3.1-70b", "q8_0", 74.98, GB, "bartowski/Meta-Llama-3.1-70B-Instruct-GGUF"),
    ("llama-3.1-8b", "q4_k_m", 4.57, GIB, "runyard.dev, 'Q4_K_M vs Q5_K_M vs Q6_K vs Q8_0' (sizes in GiB)"),
    ("qwen2.5-7b", "q4_k_m", 4.7, GB, "ollama qwen2.5:7b (q4_K_M)"),
    # 46.7B weights at Q8_0's 8.5 bits are 49.6e9 bytes, so these listed "GB" are GiB
    ("mixtral-8x7b", "q4_k_m", 26.49, GIB, "MaziyarPanahi/Mixtral-8x7B-Instruct-v0.1-GGUF via localmodel.run"),
    ("mixtral-8x7b", "q8_0", 46.22, GIB, "MaziyarPanahi/Mixtral-8x7B-Instruct-v0.1-GGUF via localmodel.run"),
]


def main() -> None:
    errors = []
    print(f"{'model':<16}{'format':<8}{'predicted':>11}{'published':>11}{'error':>8}  source")
    for name, fmt, size, unit, source in PUBLISHED:
        predicted = weight_bytes(preset_decoder(name), fmt) / unit
        error = predicted / size - 1
        errors.append(abs(error))
        label = "GiB" if unit == GIB else "GB"
        print(f"{name:<16}{fmt:<8}{predicted:>8.2f} {label}{size:>8.2f} {label}{error:>+8.1%}  {source}")
    print(f"median |error| {statistics.median(errors):.2%}, largest {max(errors):.2%} over {len(errors)} files")


if __name__ == "__main__":
    main()
