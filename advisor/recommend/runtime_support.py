"""Which cards each generation runtime (core.workload.Runtime) runs on, and in which compute dtype, from the
catalog's vendor and architecture: a refusal is a Reason the ranking puts on a configuration that cannot run.

Each rule cites the runtime's own documentation or code. Where no source was found, or a source leaves a card
in doubt, the card runs (a refusal is never a guess) and the doubt is named beside the rule.

NVIDIA compute capabilities by architecture: NVIDIA's "CUDA GPUs - Compute Capability" table
(https://developer.nvidia.com/cuda-gpus) and the CUDA C++ Programming Guide's list of compute capabilities:
Kepler 3.x, Maxwell 5.x, Pascal 6.x, Volta 7.0, Turing 7.5, Ampere 8.0/8.6/8.7, Ada Lovelace 8.9, Hopper 9.0,
Blackwell 10.x/12.x. Each architecture is held at its lowest member's capability, which is what every rule
below compares with (no rule falls between two members of one architecture).
"""

from __future__ import annotations

from advisor.catalog.records import CardRecord
from advisor.catalog.software import software_path
from advisor.core.vocabulary import ComputeDtype, Runtime
from advisor.core.workload import Workload
from advisor.recommend.reasons import Reason, ReasonCode, reason

# architecture -> (lowest compute capability as (major, minor), as the reason prints it)
NVIDIA_CAPABILITY: dict[str, tuple[tuple[int, int], str]] = {
    "Kepler": ((3, 0), "3.x"),
    "Maxwell": ((5, 0), "5.x"),
    "Pascal": ((6, 0), "6.x"),
    "Volta": ((7, 0), "7.0"),
    "Turing": ((7, 5), "7.5"),
    "Ampere": ((8, 0), "8.x"),
    "Ada Lovelace": ((8, 9), "8.9"),
    "Hopper": ((9, 0), "9.0"),
    "Blackwell": ((10, 0), "10.x or 12.x"),
}

RUNTIME_NAMES = {Runtime.VLLM: "vLLM", Runtime.LLAMA_CPP: "llama.cpp", Runtime.TRANSFORMERS: "transformers"}

# vLLM on CUDA. Its GPU installation page, "Requirements": "GPU: compute capability 7.0 or higher (e.g., V100,
# T4, RTX20xx, A100, L4, H100, etc.)" (docs.vllm.ai v0.3.3 to v0.14.0, getting_started/installation). Pascal
# builds from source were reported to work (vllm-project/vllm issue 963), but the published wheels are not
# built for sm_6x: the rule is the documented one. Doubt: later pages (docs.vllm.ai v0.31.0, latest) raise it
# to "compute capability 7.5 or higher (e.g., T4, RTX20xx, A100, L4, H100, B200...)"; the releases this
# advisor models (core.vocabulary.VLLMRelease, up to 0.19) are held to 7.0, so a V100 is not refused.
VLLM_MIN_CAPABILITY = ((7, 0), "7.0")
# vLLM's bf16 check: vllm/platforms/cuda.py supported_dtypes ("if self.has_device_capability(80): ...
# [torch.bfloat16, torch.float16, torch.float32]"; "Pascal, Volta and Turing NVIDIA GPUs, BF16 is not
# supported") and its check_if_supports_dtype, which raises "Bfloat16 is only supported on GPUs with compute
# capability of at least 8.0 ... You can use float16 instead ... --dtype=half" (also vllm/worker/worker.py
# _check_if_gpu_supports_dtype in the V0 engine).
VLLM_BF16_CAPABILITY = (8, 0)
# vLLM on ROCm. Its GPU installation page, ROCm "Requirements": "GPU: MI200s (gfx90a), MI300 (gfx942), MI350
# (gfx950), Radeon RX 7900 series (gfx1100/1101), Radeon RX 9000 series (gfx1200/1201), Ryzen AI MAX / AI 300
# Series (gfx1151/1150)" (docs.vllm.ai v0.14.0; docs/getting_started/installation/gpu.rocm.inc.md on main);
# v0.4 to v0.6 listed MI200s, MI300 and the RX 7900 alone. So CDNA 2 to 4, RDNA 3, 3.5 and 4 run; CDNA 1
# (MI100, gfx908), GCN 5 (Vega 20, gfx906), RDNA 1 and RDNA 2 are on no release's list. Doubt: the list names
# the RX 7900 series (gfx1100/1101), not the RX 7600 (gfx1102); the rule is per architecture, so RDNA 3 runs.
# bf16 on ROCm: vllm/platforms/rocm.py derives the capability from the gfx name (gfx90a -> 9.0, gfx1100 ->
# 11.0), so every listed card passes its check_if_supports_dtype (capability 8.0).
VLLM_ROCM_ARCHITECTURES = ("CDNA 2", "CDNA 3", "CDNA 4", "RDNA 3", "RDNA 3.5", "RDNA 4")
VLLM_ROCM_UNLISTED = ("CDNA 1", "GCN 5", "RDNA 1", "RDNA 2")
VLLM_ROCM_LIST = "MI200, MI300 and MI350 (CDNA 2-4), Radeon RX 7900 and RX 9000 (RDNA 3, 4), Ryzen AI MAX"
# vLLM on Intel GPUs (XPU): "Supported Hardware: Intel Data Center GPU, Intel ARC GPU" (docs.vllm.ai v0.6.5
# xpu-installation; gpu.xpu.inc.md on main): Xe-HPG (Alchemist) and Xe2-HPG (Battlemage) are Arc. Doubt: the
# v0.5-0.6 pages said "FP16 is the default data type in the current XPU backend. The BF16 data type will be
# supported in the future"; later pages drop the note, so bf16 is not refused.
# vLLM on Gaudi: "Intel Gaudi" is among its AI-accelerator installation pages (docs.vllm.ai v0.7-v0.9;
# vllm/platforms/hpu.py): Gaudi 2 and 3 run, in either dtype (no dtype check found).

# llama.cpp (docs/build.md lists its backends: CPU, BLAS, Metal, SYCL, CUDA, MUSA, HIP, Vulkan, CANN, ZenDNN,
# KleidiAI, OpenCL, OpenVINO, Hexagon): NVIDIA through CUDA, AMD through HIP or Vulkan, Intel GPUs through SYCL
# or Vulkan; none targets Gaudi's HPU, so Gaudi is refused. CUDA: ggml/src/ggml-cuda/CMakeLists.txt builds
# "50 == Maxwell, lowest CUDA 12 standard" upward, so Maxwell and newer run. Doubt: Kepler (3.x) is below what
# CUDA 12 builds; a CUDA 11 build or the Vulkan backend may still run it, so Kepler is not refused. llama.cpp
# has no dtype refusal: its f16 and bf16 tensors run on every backend it builds for (no check found).
LLAMA_CPP_NO_BACKEND = ("Gaudi",)

# transformers runs wherever PyTorch runs (catalog/software.py: CUDA, ROCm, XPU, Gaudi's HPU), so no card is
# refused. Doubts, not refused: PyTorch's CUDA 12 wheels are not built for Kepler (CUDA 12 has no sm_3x
# target), and bf16 before Ampere runs emulated, slowly (torch.cuda.is_bf16_supported(including_emulation)).


def runtime_refusal(runtime: Runtime, dtype: ComputeDtype, vendor: str, architecture: str) -> Reason | None:
    """Why `runtime` cannot run a card of `vendor` and `architecture` computing in `dtype`; None: it runs (or
    no source says it does not)."""
    software = software_path(vendor, architecture)
    name = RUNTIME_NAMES[runtime]
    if runtime is Runtime.VLLM:
        return _vllm_refusal(name, dtype, software, architecture)
    if runtime is Runtime.LLAMA_CPP and software in LLAMA_CPP_NO_BACKEND:
        return reason(ReasonCode.RUNTIME_NO_BACKEND, runtime=name, architecture=architecture, software=software)
    return None


def _vllm_refusal(name: str, dtype: ComputeDtype, software: str, architecture: str) -> Reason | None:
    if software == "ROCm":
        if any(architecture.startswith(a) for a in VLLM_ROCM_UNLISTED):
            return reason(ReasonCode.RUNTIME_UNLISTED, runtime=name, architecture=architecture, listed=VLLM_ROCM_LIST)
        return None
    if software != "CUDA" or architecture not in NVIDIA_CAPABILITY:  # an unknown NVIDIA architecture runs
        return None
    capability, shown = NVIDIA_CAPABILITY[architecture]
    if capability < VLLM_MIN_CAPABILITY[0]:
        return reason(
            ReasonCode.RUNTIME_CAPABILITY,
            runtime=name,
            needed=VLLM_MIN_CAPABILITY[1],
            architecture=architecture,
            capability=shown,
        )
    if dtype == "bf16" and capability < VLLM_BF16_CAPABILITY:
        return reason(ReasonCode.RUNTIME_BF16, runtime=name, architecture=architecture, capability=shown)
    return None


def workload_refusal(w: Workload, card: CardRecord) -> Reason | None:
    """Why the workload's generation runtime cannot run `card` in its compute dtype; None in training and
    inference, which run in PyTorch (the software path names it). The ranking and make-it-fit both ask this."""
    if not w.generating:
        return None
    return runtime_refusal(w.runtime_used, w.compute_dtype, card.vendor, card.architecture)


def refused(reasons: tuple[Reason, ...]) -> bool:
    """A configuration whose runtime cannot run its card (the ranking's refusal is among its reasons)."""
    return any(r.code in REFUSALS for r in reasons)


REFUSALS = frozenset(
    {ReasonCode.RUNTIME_CAPABILITY, ReasonCode.RUNTIME_BF16, ReasonCode.RUNTIME_UNLISTED, ReasonCode.RUNTIME_NO_BACKEND}
)
