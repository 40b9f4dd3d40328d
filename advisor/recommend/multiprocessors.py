"""How many streaming multiprocessors (NVIDIA SMs, AMD compute units, Intel Xe cores) a card has, for the
wave model of advisor.recommend.kernels.

The catalog carries each card's peak FP32 rate but not its SM count or clock. Peak FP32 = SMs x FP32 lanes
per SM x 2 (a fused multiply-add) x boost clock, so SMs = peak / (2 x lanes x clock), with the lanes per SM
of the architecture (NVIDIA architecture whitepapers) and a typical boost clock of that architecture. The
clocks are of the flagship data-centre/consumer parts, so the count is within ~10-15% for the rest of a
generation: enough to tell a card that one GEMM fills from one it leaves half idle.
Checks against the whitepapers: H100/H200 SXM 67 TFLOPS / (2 x 128 x 1.98 GHz) = 132 SMs (132);
A100 19.5 / (2 x 64 x 1.41) = 108 (108); RTX 4090 82.6 / (2 x 128 x 2.52) = 128 (128);
RTX 3090 35.6 / (2 x 128 x 1.695) = 82 (82); V100 SXM2 15.7 / (2 x 64 x 1.53) = 80 (80).
"""

from __future__ import annotations

from advisor.catalog.records import CardRecord

# architecture -> (FP32 lanes per SM, typical boost clock in GHz)
_LANES_AND_CLOCK: dict[str, tuple[int, float]] = {
    "Kepler": (192, 0.88),
    "Maxwell": (128, 1.08),
    "Pascal": (128, 1.58),
    "Volta": (64, 1.53),
    "Turing": (64, 1.62),
    "Ampere": (128, 1.70),
    "Ada Lovelace": (128, 2.52),
    "Hopper": (128, 1.98),
    "Blackwell": (128, 2.41),
}
# Ampere's GA100 and Pascal's GP100 have 64 FP32 lanes per SM (A100, P100 whitepapers); the data-centre
# chips show it as a tensor/half rate far above FP32 (GA100: TF32 = 8 x FP32; GP100: FP16 = 2 x FP32).
_GA100 = (64, 1.41)
_GP100 = (64, 1.48)
# Blackwell's data-centre die (B100/B200/B300, HBM3e) clocks like the H100 SXM5, not like the GeForce GB202
# (2.41 GHz): B200 has 2 x 74 = 148 SMs "at clock speeds similar to the H100's SXM5" (Chips and Cheese,
# "Nvidia's B200: Keeping the CUDA Juggernaut Rolling", 2025-12-15): 75 TFLOPS / (2 x 128 x 1.98 GHz) = 148.
_GB100 = (128, 1.98)
# AMD CDNA/RDNA and Intel Xe: 64 FP32 lanes per compute unit at ~2 GHz (MI300X: 81.7 TFLOPS / (2 x 64 x
# 2.1 GHz) = 304 CUs, 304 in AMD's datasheet); dual-issue RDNA 3 parts come out at twice their CU count,
# which for the wave model means the same: more parallel lanes to fill.
_OTHER = (64, 2.0)


def lanes_and_clock(card: CardRecord) -> tuple[int, float]:
    if card.vendor != "NVIDIA":
        return _OTHER
    if card.architecture == "Ampere" and (card.tf32_tflops or 0) >= 4 * card.fp32_tflops:
        return _GA100
    if card.architecture == "Pascal" and (card.fp16_tflops or 0) >= 2 * card.fp32_tflops:
        return _GP100
    if card.architecture == "Blackwell" and card.memory_type.upper().startswith("HBM"):
        return _GB100
    return _LANES_AND_CLOCK.get(card.architecture, (128, 1.5))


def sm_count(card: CardRecord) -> int:
    """Multiprocessors of one GPU of the board (dual-GPU boards quote both GPUs' FP32 rate)."""
    lanes, clock_ghz = lanes_and_clock(card)
    per_gpu_flops = card.fp32_tflops * 1e12 / max(card.devices, 1)
    return max(1, round(per_gpu_flops / (2 * lanes * clock_ghz * 1e9)))


def sm_clock_hz(card: CardRecord) -> float:
    """The boost clock the card's own FP32 rate implies over its multiprocessors (sm_count rounds the
    architecture's typical clock away: an RTX A5000's 27.8 TFLOPS / (2 x 128 x 64) = 1.70 GHz)."""
    lanes = lanes_and_clock(card)[0]
    return card.fp32_tflops * 1e12 / max(card.devices, 1) / (2 * lanes * sm_count(card))
