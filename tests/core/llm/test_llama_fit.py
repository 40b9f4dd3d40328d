"""Does Llama 3 8B / 70B fit, at 16 and 4 bits, on 8-80 GB cards? The estimate's bytes against what people
measure and report:
- Hugging Face, "Llama 3.1 - 405B, 70B & 8B with multilinguality and long context" (blog, July 2024),
  inference memory table: 8B FP16 16 GB, 70B FP16 140 GB (weights alone).
- bartowski/Meta-Llama-3.1-8B-Instruct-GGUF and -70B-Instruct-GGUF file tables: Q4_K_M 4.92 GB and 42.52 GB,
  "pick a file 1-2 GB smaller than your VRAM": 8B Q4_K_M runs on 8 GB cards, 70B Q4_K_M needs 48 GB
  (one A6000, or two 24 GB cards split by layers), never one 24 GB card.
- 70B at 16 bit does not fit in 2 x 24 GB (its weights alone are 141 GB); two 80 GB cards hold it.
"""

import pytest

from advisor.core import zoo
from advisor.core.analytic import estimate
from advisor.core.estimate import Estimate
from advisor.core.overheads import device_total_bytes
from advisor.core.workload import Workload

GIB = 2**30


def generate(name: str, weights: str) -> Estimate:
    # a chat session: batch 1, a 4k prompt and 512 new tokens
    w = Workload("generate", 1, "bf16", prompt_len=4096, new_tokens=512, weights=weights)  # type: ignore[arg-type]
    return estimate(zoo.build(name, 16), w)


def needed_bytes(e: Estimate) -> int:
    """The allocator budget the run needs plus the CUDA context and driver reservation of the process."""
    return e.memory.required_bytes + device_total_bytes(0)


def test_published_16_bit_weights() -> None:
    assert generate("llama-3.1-8b", "bf16").memory.at_peak.weights / 1e9 == pytest.approx(16, rel=0.01)
    assert generate("llama-3.1-70b", "bf16").memory.at_peak.weights / 1e9 == pytest.approx(141, rel=0.01)


@pytest.mark.parametrize(
    "name, weights, card_gib, fits",
    [
        ("llama-3.1-8b", "bf16", 24, True),  # RTX 3090/4090
        ("llama-3.1-8b", "bf16", 16, False),  # 16 GB of weights leave no room on a 16 GB card
        ("llama-3.1-8b", "q4_k_m", 8, True),  # the usual 8 GB-card choice
        ("llama-3.1-70b", "q4_k_m", 24, False),
        ("llama-3.1-70b", "q4_k_m", 48, True),  # RTX A6000 / L40S
        ("llama-3.1-70b", "bf16", 80, False),  # one A100/H100 80 GB
    ],
)
def test_fit_on_one_card(name: str, weights: str, card_gib: int, fits: bool) -> None:
    assert (needed_bytes(generate(name, weights)) <= card_gib * GIB) is fits


def test_70b_across_two_cards() -> None:
    bf16, q4 = generate("llama-3.1-70b", "bf16"), generate("llama-3.1-70b", "q4_k_m")
    per_process = device_total_bytes(0)
    # split by layers, the model's bytes add up and each card pays its own context
    assert bf16.memory.required_bytes > 2 * (24 * GIB - per_process)  # not on 2 x 24 GB
    assert bf16.memory.required_bytes < 2 * (80 * GIB - per_process)  # on 2 x 80 GB
    assert q4.memory.required_bytes < 2 * (24 * GIB - per_process)  # 2 x 3090 run 70B Q4_K_M
