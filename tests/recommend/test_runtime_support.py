"""Which cards each generation runtime runs on, and in which dtype (recommend/runtime_support.py): the rules,
and `advisor recommend --json` never counting a refused card as fitting."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from advisor.core.vocabulary import Runtime
from advisor.i18n.zh_CN import MESSAGES
from advisor.recommend.reasons import ReasonCode, reason_text
from advisor.recommend.runtime_support import runtime_refusal

VLLM, LLAMA, HF = Runtime.VLLM, Runtime.LLAMA_CPP, Runtime.TRANSFORMERS


@pytest.mark.parametrize(
    ("runtime", "dtype", "vendor", "architecture", "code"),
    [
        # vLLM's GPU requirements: "compute capability 7.0 or higher": Pascal (GTX 1080 Ti, 6.1) and Kepler refused
        (VLLM, "bf16", "NVIDIA", "Pascal", ReasonCode.RUNTIME_CAPABILITY),
        (VLLM, "fp16", "NVIDIA", "Pascal", ReasonCode.RUNTIME_CAPABILITY),
        (VLLM, "fp16", "NVIDIA", "Kepler", ReasonCode.RUNTIME_CAPABILITY),
        # vllm/platforms/cuda.py: bf16 only from capability 8.0; Turing (RTX 2080 Ti, GTX 1660, 7.5) and Volta
        # (7.0) run fp16 and fp32 only
        (VLLM, "bf16", "NVIDIA", "Turing", ReasonCode.RUNTIME_BF16),
        (VLLM, "fp16", "NVIDIA", "Turing", None),
        (VLLM, "fp32", "NVIDIA", "Turing", None),
        (VLLM, "bf16", "NVIDIA", "Volta", ReasonCode.RUNTIME_BF16),
        (VLLM, "fp16", "NVIDIA", "Volta", None),
        # Ampere (RTX 3090, 8.6) and newer run both
        (VLLM, "bf16", "NVIDIA", "Ampere", None),
        (VLLM, "fp16", "NVIDIA", "Ampere", None),
        (VLLM, "bf16", "NVIDIA", "Blackwell", None),
        # an architecture the table does not know runs (no refusal is a guess)
        (VLLM, "bf16", "NVIDIA", "Rubin", None),
        # vLLM's ROCm list: MI200/MI300/MI350, RX 7900 and RX 9000, Ryzen AI MAX; not RDNA 2, CDNA 1, GCN 5
        (VLLM, "bf16", "AMD", "CDNA 3", None),
        (VLLM, "bf16", "AMD", "RDNA 3", None),
        (VLLM, "bf16", "AMD", "RDNA 4", None),
        (VLLM, "fp16", "AMD", "RDNA 2", ReasonCode.RUNTIME_UNLISTED),
        (VLLM, "fp16", "AMD", "CDNA 1", ReasonCode.RUNTIME_UNLISTED),
        (VLLM, "fp16", "AMD", "GCN 5 (Vega 20)", ReasonCode.RUNTIME_UNLISTED),
        # vLLM on Intel: "Intel Data Center GPU, Intel ARC GPU"; and its Gaudi pages
        (VLLM, "bf16", "Intel", "Xe2-HPG (Battlemage)", None),
        (VLLM, "bf16", "Intel", "Gaudi 3", None),
        # llama.cpp's CUDA backend builds from Maxwell (5.0) up: the 1080 Ti runs, in either dtype
        (LLAMA, "bf16", "NVIDIA", "Pascal", None),
        (LLAMA, "fp16", "NVIDIA", "Pascal", None),
        (LLAMA, "fp16", "NVIDIA", "Kepler", None),  # doubt (CUDA 12 has no sm_3x): not refused
        (LLAMA, "fp16", "AMD", "RDNA 2", None),  # HIP or Vulkan
        (LLAMA, "fp16", "Intel", "Xe-HPG (Alchemist)", None),  # SYCL
        # none of llama.cpp's backends targets Gaudi's HPU
        (LLAMA, "bf16", "Intel", "Gaudi 2", ReasonCode.RUNTIME_NO_BACKEND),
        # transformers runs wherever PyTorch runs
        (HF, "bf16", "NVIDIA", "Pascal", None),
        (HF, "bf16", "Intel", "Gaudi 2", None),
    ],
)
def test_each_rule(runtime: Runtime, dtype: str, vendor: str, architecture: str, code: ReasonCode | None) -> None:
    found = runtime_refusal(runtime, dtype, vendor, architecture)  # type: ignore[arg-type]
    assert (found.code if found else None) == code


def test_the_refusal_names_the_runtime_the_architecture_and_the_need_in_both_languages() -> None:
    pascal = runtime_refusal(VLLM, "bf16", "NVIDIA", "Pascal")
    turing = runtime_refusal(VLLM, "bf16", "NVIDIA", "Turing")
    assert pascal is not None and turing is not None
    assert reason_text(pascal) == "does not run: vLLM needs compute capability 7.0 or newer; Pascal is 6.x"
    assert reason_text(turing) == (
        "does not run: vLLM runs bf16 only from compute capability 8.0 (Ampere); Turing is 7.5: choose precision fp16"
    )
    assert reason_text(turing, MESSAGES.__getitem__).startswith("无法运行：vLLM 只在计算能力 8.0（Ampere）")


COMMAND = (sys.executable, "-m", "advisor", "recommend", "zoo:llama-3.2-1b", "--mode", "generate", "--batch", "8")


def run(tmp_path: Path, *args: str) -> dict[str, list[dict[str, object]]]:
    result = subprocess.run(
        [*COMMAND, *args, "--json", "--catalog", str(tmp_path / "c.sqlite3")],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def by_card(entries: list[dict[str, object]], card: str) -> list[dict[str, object]]:
    return [e for e in entries if e["card"] == card]


def test_the_cli_never_counts_a_card_vllm_cannot_run_as_fitting(tmp_path: Path) -> None:
    bf16 = run(tmp_path, "--precision", "bf16", "--runtime", "vllm")["recommendations"]
    # GTX 1080 Ti (Pascal): below vLLM's 7.0, at every card count and plan
    pascal = by_card(bf16, "GeForce GTX 1080 Ti")
    assert pascal and not any(e["fits"] for e in pascal)
    assert all("runtime_capability" in e["reason_codes"] and e["max_batch"] == 0 for e in pascal)  # type: ignore[operator]
    assert "vLLM needs compute capability 7.0 or newer; Pascal is 6.x" in str(pascal[0]["reason"])
    # the 2080 Ti (Turing) in bf16 is refused; 2 of them hold the 1B model's 10 GiB at batch 8 in memory
    turing = by_card(bf16, "GeForce RTX 2080 Ti")
    assert not any(e["fits"] for e in turing) and any("would_fit" in e["reason_codes"] for e in turing)  # type: ignore[operator]
    assert all(e["reason_codes"][0] == "runtime_bf16" for e in turing)  # type: ignore[index]
    assert any(e["fits"] for e in by_card(bf16, "GeForce RTX 3090"))  # Ampere runs bf16
    # every fitting configuration is on a card vLLM runs in bf16; the first is one of them
    assert bf16[0]["fits"] and not any(
        str(c).startswith("runtime_") for e in bf16 if e["fits"] for c in e["reason_codes"]
    )  # type: ignore[attr-defined]
    fp16 = run(tmp_path, "--precision", "fp16", "--runtime", "vllm")["recommendations"]
    assert any(e["fits"] for e in by_card(fp16, "GeForce RTX 2080 Ti"))  # Turing runs fp16
    assert not any(e["fits"] for e in by_card(fp16, "GeForce GTX 1080 Ti"))  # Pascal still below 7.0
    llama = run(tmp_path, "--precision", "bf16", "--runtime", "llama.cpp")["recommendations"]
    assert any(e["fits"] for e in by_card(llama, "GeForce GTX 1080 Ti"))  # llama.cpp's CUDA backend: Maxwell up


def test_advisor_fit_says_no_change_makes_vllm_run_a_pascal_card(tmp_path: Path) -> None:
    """`advisor fit` names one card and lists no others; on a card vLLM refuses it says so above its changes."""

    def fit(card: str) -> dict[str, object]:
        args = ["fit", "zoo:llama-3.2-1b", "--gpu", card, "--mode", "generate", "--precision", "bf16"]
        args += ["--batch", "8", "--runtime", "vllm", "--json", "--catalog", str(tmp_path / "c.sqlite3")]
        done = subprocess.run([sys.executable, "-m", "advisor", *args], capture_output=True, text=True, check=True)
        return json.loads(done.stdout)  # type: ignore[no-any-return]

    pascal = fit("GTX 1080 Ti")["runtime_refusal"]
    assert pascal == {
        "code": "runtime_capability",
        "reason": "does not run: vLLM needs compute capability 7.0 or newer; Pascal is 6.x",
    }
    assert fit("RTX 3090")["runtime_refusal"] is None  # Ampere: 8.6 >= 8.0
