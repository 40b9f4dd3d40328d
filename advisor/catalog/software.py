"""Which PyTorch software path runs a card: CUDA (NVIDIA), ROCm (AMD), XPU (Intel GPUs) or Gaudi (Intel
Gaudi accelerators, through the Intel Gaudi software stack's HPU device rather than XPU).

Sources: PyTorch's install matrix lists CUDA and ROCm builds (https://pytorch.org/get-started/locally/);
Intel GPUs run as the `xpu` device (https://docs.pytorch.org/docs/stable/notes/get_start_xpu.html); Gaudi as
`hpu` (https://docs.habana.ai/en/latest/PyTorch/index.html).
"""

from __future__ import annotations

SOFTWARE_PATHS: tuple[str, ...] = ("CUDA", "ROCm", "XPU", "Gaudi")
_BY_VENDOR = {"nvidia": "CUDA", "amd": "ROCm", "intel": "XPU"}
# The context a process creates on the card before its allocator gets any memory, named after the runtime that
# creates it: PyTorch's ROCm build runs HIP (https://rocm.docs.amd.com/projects/HIP/en/latest/), its XPU device
# runs on Level Zero (https://docs.pytorch.org/docs/stable/notes/get_start_xpu.html); Gaudi's HPU stack
# gets the neutral name.
_CONTEXTS = {"CUDA": "the CUDA context", "ROCm": "the HIP context", "XPU": "the Level Zero context"}
DRIVER_CONTEXT = "the driver's context"
CONTEXT_NAMES: tuple[str, ...] = (*_CONTEXTS.values(), DRIVER_CONTEXT)


def software_path(vendor: str, architecture: str) -> str:
    """ "CUDA", "ROCm", "XPU" or "Gaudi" for a card's vendor and architecture."""
    if "gaudi" in architecture.lower():
        return "Gaudi"
    return _BY_VENDOR.get(vendor.lower(), "CUDA")


def context_name(software: str) -> str:
    """The English words for the runtime context that a card running `software` (a SOFTWARE_PATHS name) loses
    memory to: "the CUDA context" on NVIDIA, "the HIP context" on AMD, "the Level Zero context" on Intel."""
    return _CONTEXTS.get(software, DRIVER_CONTEXT)


def parse_software(text: str) -> str:
    """A --software value (any case) -> its canonical name; ValueError names the choices."""
    for name in SOFTWARE_PATHS:
        if text.lower() == name.lower():
            return name
    raise ValueError(f"{text!r} is not one of {', '.join(s.lower() for s in SOFTWARE_PATHS)}")
