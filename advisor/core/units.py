"""Human-readable formatting of bytes, counts and FLOPs."""

from __future__ import annotations

GIB = 1024**3
MIB = 1024**2


def format_bytes(n: float) -> str:
    """Binary units, as nvidia-smi and PyTorch's memory summary print them."""
    for unit, size in (("GiB", GIB), ("MiB", MIB), ("KiB", 1024)):
        if abs(n) >= size:
            return f"{n / size:.2f} {unit}"
    return f"{int(n)} B"


def format_count(n: float) -> str:
    """Decimal prefixes for parameter, MAC and FLOP counts (as torchvision's docs print them)."""
    for unit, size in (("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(n) >= size:
            return f"{n / size:.2f}{unit}"
    return f"{int(n)}"


def format_shape(shape: tuple[int, ...]) -> str:
    return "x".join(str(d) for d in shape) if shape else "scalar"
