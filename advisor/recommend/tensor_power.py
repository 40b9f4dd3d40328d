"""How far a die's tensor-core clock falls under its board's power limit (advisor.recommend.kernels'
tensor_ceiling): the energy a dense tensor-core FLOP costs differs by die, not only by board power.

A large GEMM reaches `maximum` of the datasheet peak where the board has power to spare, and
maximum x (board watts per dense TFLOPS / saturation_w_per_tflops) ^ POWER_EXPONENT below that point:
saturation_w_per_tflops is the board power per peak TFLOPS at which the die just holds its boost clock under a
tensor load, i.e. its energy per FLOP. Stable names: TensorPower, tensor_power, graphics, HOPPER.
"""

from __future__ import annotations

from dataclasses import dataclass

from advisor.catalog.records import CardRecord

# Dynamic power grows faster than the clock near the top of the voltage curve, so the clock falls off slowly
# with the power per operation: clock share = (power share) ^ 0.75 (fitted in an earlier revision and held:
# scanning 0.5-1.75 with the other constants refitted moved the public median by under 0.5 points).
POWER_EXPONENT = 0.75


@dataclass(frozen=True)
class TensorPower:
    maximum: float  # share of the boost-clock peak a large GEMM reaches with power to spare
    saturation_w_per_tflops: float  # board watts per peak dense TFLOPS at which the boost clock just holds

    def ceiling(self, rate_tflops: float, tdp_w: float) -> float:
        """Share of a tensor rate (dense TFLOPS) a large GEMM sustains on a board of tdp_w watts."""
        if rate_tflops <= 0 or tdp_w <= 0:
            return self.maximum
        return float(self.maximum * min(1.0, tdp_w / rate_tflops / self.saturation_w_per_tflops) ** POWER_EXPONENT)


def _through(maximum: float, watts: float, tflops: float, measured: float) -> TensorPower:
    """The saturation point that puts a measured share on a board of `watts` for `tflops` peak."""
    return TensorPower(maximum, watts / tflops / (measured / maximum) ** (1 / POWER_EXPONENT))


# Hopper (GH100): the H200 runs 989.5 dense TFLOPS on 700 W and its bf16 matmul sustains 782.7 / 989.5 = 0.79
# of that (shared/calibration/h200/environment.json "calibration"); the maximum 0.95 was fitted in an earlier
# revision and is held (scanning 0.85-1.0 moved the public median by under 0.5 points).
HOPPER = _through(0.95, 700, 989.5, 0.79)
# Measured maximum achievable matmul rates, bf16 (stas00/ml-engineering@744d01e18b79,
# compute/accelerator/README.md, "Maximum Achievable Matmul FLOPS comparison table"):
# - Ampere's data-centre die (GA100): A100 SXM (400 W, 312 TFLOPS) 271.2 = 0.869 of peak, power to spare (so
#   0.869 is its maximum); A100 PCIe (250 W) 252.9 = 0.811 below it.
GA100 = _through(0.869, 250, 312, 0.811)
# - Blackwell's data-centre die (B200/B300): B200 (1000 W, 2250 TFLOPS) 1745 = 0.776, B300 (more power, same
#   peak) 0.786: the B200 holds its clock at 0.44 W per TFLOPS, half of Hopper's energy per FLOP (tcgen05 reads
#   its operands from shared memory and keeps the accumulator in tensor memory, not the register file).
GB100 = TensorPower(0.776, 1000 / 2250)


# Turing (TU10x, 12 nm): a T4 (70 W, 65 TFLOPS fp16) sustains about 24 TFLOPS in a 4096^3 cuBLAS GEMM loop,
# 0.37 of peak, "due to power capping" (NVIDIA developer forum, "About GPU peak performance",
# forums.developer.nvidia.com/t/264462, NVIDIA's answer; read 2026-12-02): 3.8 W per TFLOPS to hold the boost
# clock, 4x Hopper's. Volta (GV100) is made on the same TSMC 12 nm node and takes the same figure: a V100 SXM2
# (300 W, 125 TFLOPS) measured at most 94.8 TFLOPS, 0.76 of peak, where Hopper's rule gave 0.95 (and this one
# 0.67; benchmarks/gemm_ceiling.py).
TURING = _through(0.95, 70, 65, 24 / 65)
# The graphics dies of Ampere, Ada and Blackwell (GA10x, AD10x, GB20x: GeForce, workstation and the GDDR data-
# centre boards A10, L4, L40S) spend more board power per tensor FLOP than the data-centre die of their
# generation (mma.sync operands through the register file, where Hopper's wgmma and Blackwell's tcgen05 read
# shared memory; GDDR and the board's fans inside the same limit): GRAPHICS_ENERGY_RATIO times its saturation
# point, Ada beside Hopper (both TSMC 4N).
# - maximum 1.0: their rated boost clock is below the one they hold with power to spare. On a GeForce RTX 4090
#   (165.2 TFLOPS fp16 with fp32 accumulate) tinygrad sets "165+ TFLOP ... FP16 with FP32 acc" as matching
#   torch (tinygrad/tinygrad PR #13623, 2025-12-09), and PR #6926 (2024-10-07, the table of its description)
#   ran 4096^3 1024 times at 166.3 TFLOPS, 1.007 of the peak.
#   Others measure GeForce boards above their rated peak (benchmarks/gemm_ceiling.py: RTX 3090 1.07, RTX 4090
#   1.03, RTX 5090 1.16: GPU Boost runs them past the rated boost clock), yet a maximum of 1.07 or 1.12, with
#   the energy ratio rescanned, left the RTX 4090 at 0.84-0.86 of its public rows' throughput (0.85 at 1.0):
#   the power-limited boards among those rows (A10, RTX A5000, A6000, 6000 Ada, PRO 6000 Max-Q) then fit a
#   higher saturation point (3.25-3.5), which puts the 450 W 4090 under its limit. Its shortfall is not its
#   GEMM clock, so 1.0 is kept.
# - GRAPHICS_ENERGY_RATIO: fitted, 3.0: benchmarks/time.py's scan (it prints each card held out) is best at 3.0,
#   with the FSDP/QLoRA rows and their communication (it was 3.25 while time.py left that out); every card of its 174
#   single-card rows has its median ratio in 0.85-1.15 from 2.4 to 3.3. That puts GA10x at 2.6, AD10x at 2.7
#   and GB20x at 1.3 W per TFLOPS: the 450 W RTX 4090 (2.7 W per TFLOPS) and RTX 5090 hold their clocks, the
#   150 W A10 (1.2), 300 W RTX 6000 Ada (0.82) and 300 W RTX PRO 6000 Max-Q (0.68) do not.
#   Measured large GEMMs that no constant was fitted on agree on the A40, RTX A6000 and L20 (predicted 0.98-1.00
#   of measured) and put the RTX PRO 6000 (600 W) at 1.11 (benchmarks/gemm_ceiling.py); the low-power Ada boards
#   run faster than the rule: the L4 (72 W) at 0.68, the L40S (350 W) at 0.62 of its best (burst) figure. So
#   does a 4090 with fp16 accumulation (tinygrad PR #6926: 339.8 of 330.3 TFLOPS at 1.36 W per TFLOPS); the
#   public rows time fp32 accumulation, which reads and writes twice the accumulator registers.
GRAPHICS_MAXIMUM = 1.0
GRAPHICS_ENERGY_RATIO = 3.0
_DATA_CENTRE_SIBLING = {"Ampere": GA100, "Ada Lovelace": HOPPER, "Blackwell": GB100}


def graphics(architecture: str) -> TensorPower:
    """The rule of a graphics die of this generation (module constants read at each call: benchmarks/time.py
    scans GRAPHICS_ENERGY_RATIO)."""
    sibling = _DATA_CENTRE_SIBLING[architecture]
    return TensorPower(GRAPHICS_MAXIMUM, GRAPHICS_ENERGY_RATIO * sibling.saturation_w_per_tflops)


def tensor_power(card: CardRecord) -> TensorPower:
    """The die's energy rule: NVIDIA's HBM data-centre dies and the 12 nm ones (Turing, Volta) from their measured
    matmul rates, the other Ampere, Ada and Blackwell dies by the graphics rule; AMD and Intel keep Hopper's."""
    if card.vendor != "NVIDIA":
        return HOPPER
    if card.architecture in ("Turing", "Volta"):
        return TURING
    if card.architecture not in _DATA_CENTRE_SIBLING:
        return HOPPER
    if card.memory_type.upper().startswith("HBM"):
        return _DATA_CENTRE_SIBLING[card.architecture]
    return graphics(card.architecture)
