"""The bundled data checked against itself and against the arithmetic that defines its figures."""

from __future__ import annotations

import pytest

from advisor.catalog.bundled import BundledData
from advisor.catalog.records import CardSpec

GIB = 2**30
# Highest per-pin data rate (Gbps) of each memory type the bundled cards use; HBM per pin is slower.
# HBM2e reaches 3.6 Gbps in SK hynix's fastest stacks: Gaudi 3 runs 8 stacks at 3.67 TB/s x 8 / 8192 = 3.58 Gbps.
MAX_GBPS = {
    "GDDR5": 8.0,
    "GDDR5X": 11.5,
    "GDDR6": 20.1,
    "GDDR6X": 23.0,
    "GDDR7": 30.0,
    "HBM2": 2.5,
    "HBM2e": 3.6,
    "HBM3": 5.3,
    "HBM3e": 8.0,
    "LPDDR5X": 9.6,
}
# LPDDR5X of the unified-memory machines: GB10 273 GB/s x 8 / 256 bit = 8.53 Gbps (LPDDR5X-8533), Strix Halo 8.0.
NAMED_IN_ISSUE = [
    "GeForce GTX 980 Ti",
    "GeForce GTX Titan X",
    "Titan X (Pascal)",
    "Titan Xp",
    "GeForce GTX 1060 6GB",
    "GeForce GTX 1070",
    "GeForce GTX 1080",
    "GeForce GTX 1080 Ti",
    "Tesla K80",
    "Tesla P100 PCIe 16GB",
    "Tesla V100 SXM2 32GB",
    "Tesla T4",
    "A10",
    "A30",
    "A40",
    "A100 PCIe 40GB",
    "A100 SXM4 40GB",
    "A100 PCIe 80GB",
    "A100 SXM4 80GB",
    "L4",
    "L40",
    "L40S",
    "H100 PCIe",
    "H100 SXM5",
    "H100 NVL",
    "H200 SXM",
    "B200",
    "Instinct MI100",
    "Instinct MI325X",
    "Titan RTX",
    "Titan V",
    "GeForce RTX 5090",
    "Arc B580",
]
# The cards issue 13 asks for (the buying answer): each needs a row before it can have a price.
NAMED_IN_PRICE_ISSUE = [
    "H20",
    "L20",
    "B300",
    "GB200",
    "B100",
    "H800 SXM5",
    "A800 SXM4 80GB",
    "Instinct MI350X",
    "Instinct MI355X",
    "Gaudi 2",
    "Gaudi 3",
    "GeForce RTX 5050",
    "GeForce RTX 3050 6GB",
    "GeForce RTX 3060 8GB",
    "RTX PRO 6000 Blackwell Max-Q Workstation Edition",
    "RTX PRO 6000 Blackwell Server Edition",
    "RTX PRO 5000 Blackwell",
    "RTX PRO 4500 Blackwell",
    "RTX PRO 4000 Blackwell",
    "RTX PRO 2000 Blackwell",
    "Radeon RX 9060 XT 8GB",
    "Radeon RX 9070 GRE",
    "A10G",
    "A16",
    "Instinct MI50 32GB",
    "Instinct MI60",
    "Arc Pro B50",
    "Arc Pro B60",
    "GeForce RTX 2060 12GB",
]
# The cards issue 28 found missing (released 2024-2026) that have a source with clocks and power.
NAMED_IN_CARDS_ISSUE = [
    "Radeon AI PRO R9700",
    "GB10 (DGX Spark)",
    "GB300",
    "Arc Pro B70",
    "RTX PRO 5000 Blackwell 72GB",
    "RTX PRO 4000 Blackwell SFF",
    "Radeon 8060S (Ryzen AI Max+ 395)",
    "GH200",
    "RTX 5880 Ada Generation",
    "RTX A1000",
    "RTX A400",
    "Radeon RX 9060",
    "Gaudi 3 PCIe",
    "GeForce RTX 5090 D",
    "GeForce RTX 5090 D V2",
    "A800 PCIe 80GB",
    "H800 PCIe",
    "Instinct MI350P",
    "Radeon AI PRO R9700S",
    "Radeon AI PRO R9600D",
    "RTX 6000D",
    "Radeon PRO W7900D",
    "Radeon RX 7650 GRE",
]
# Shipping by 2026-12 and missing before (issue 28's December check).
NEW_BY_DECEMBER_2026 = ["Arc Pro B65", "Radeon RX 7700"]
# GP102/GP104/GP106/GP107 run FP16 arithmetic at 1/64 of FP32 (CUDA guide, compute capability 6.1).
PASCAL_CONSUMER_SILICON = {"GDDR5", "GDDR5X"}


def test_at_least_150_cards_and_the_named_ones(bundled: BundledData) -> None:
    names = {c.name for c in bundled.cards}
    assert len(names) == len(bundled.cards) >= 150
    named = NAMED_IN_ISSUE + NAMED_IN_PRICE_ISSUE + NAMED_IN_CARDS_ISSUE + NEW_BY_DECEMBER_2026
    assert [n for n in named if n not in names] == []
    for vendor, minimum in (("NVIDIA", 100), ("AMD", 25), ("Intel", 6)):
        assert sum(c.vendor == vendor for c in bundled.cards) >= minimum


def test_bandwidth_is_bus_width_times_a_plausible_data_rate(bundled: BundledData) -> None:
    wrong = []
    for card in bundled.cards:
        assert card.bus_width_bits, card.name
        gbps = card.bandwidth_gbs * 8 / card.bus_width_bits  # e.g. RTX 4090: 1008 x 8 / 384 = 21 Gbps
        if not 0.8 <= gbps <= MAX_GBPS[card.memory_type]:
            wrong.append((card.name, round(gbps, 2)))
    assert wrong == []


def test_memory_is_a_whole_number_of_gib_per_gpu(bundled: BundledData) -> None:
    for card in bundled.cards:
        assert card.memory_bytes % card.devices == 0
        assert (card.memory_bytes // card.devices) % GIB == 0, card.name


def _slow_fp16_pascal(card: CardSpec) -> bool:
    return card.architecture == "Pascal" and card.memory_type in PASCAL_CONSUMER_SILICON


def test_tensor_throughput_is_ordered_by_precision(bundled: BundledData) -> None:
    """Per card: FP32 <= TF32 <= FP16 <= FP8 where present (each halves the bits: never slower), except the
    Pascal chips whose FP16 is the slow native rate (checked below)."""
    for card in bundled.cards:
        if _slow_fp16_pascal(card):
            continue
        chain = [v for v in (card.fp32_tflops, card.tf32_tflops, card.fp16_tflops, card.fp8_tflops) if v]
        assert chain == sorted(chain), card.name
        if card.bf16_tflops and card.fp16_tflops and card.vendor != "AMD":  # MI100 BF16 is half its FP16
            assert card.bf16_tflops == card.fp16_tflops, card.name


def test_pascal_fp16_is_one_64th_of_fp32_except_gp100(bundled: BundledData) -> None:
    """GTX 1080 Ti: 11.3 / 64 = 0.177 TFLOPS FP16, so mixed precision is never predicted to be faster there;
    the HBM2 GP100 boards (P100, Quadro GP100) keep no fp16 figure (packed FP16 is FP16-accumulate only)."""
    pascal = [c for c in bundled.cards if c.architecture == "Pascal"]
    slow = [c for c in pascal if _slow_fp16_pascal(c)]
    assert len(slow) == 14
    for card in slow:
        assert card.fp16_tflops == pytest.approx(card.fp32_tflops / 64, abs=0.0006), card.name
    assert [c.name for c in pascal if c.memory_type == "HBM2" and c.fp16_tflops is not None] == []


def test_geforce_runs_fp32_accumulate_at_half_rate(bundled: BundledData) -> None:
    """RTX 4090: FP32 82.6, FP16 tensor with FP32 accumulate 165.2 = 2 x 82.6 (Ada whitepaper table). RTX 50
    the same: torch.matmul in BF16 (FP32 accumulate) reaches 0.9-1.15 x the halved rate on 5050-5090 as on the
    4090 (1.02; data README), where the full rate would put them at half of it; the 5090 D too (its AI TOPS
    cap does not bind BF16: 234 TFLOPS measured, against 240 on a 5090)."""
    geforce = {
        c.name: c
        for c in bundled.cards
        if c.segment == "consumer" and c.vendor == "NVIDIA" and c.architecture in ("Ada Lovelace", "Blackwell")
    }
    assert len(geforce) >= 20
    for card in geforce.values():
        assert card.fp16_tflops == pytest.approx(2 * card.fp32_tflops, abs=0.11), card.name
    ada = geforce
    rtx4090 = ada["GeForce RTX 4090"]
    assert (rtx4090.fp32_tflops, rtx4090.fp16_tflops, rtx4090.fp8_tflops, rtx4090.int8_tops) == (
        82.6,
        165.2,
        330.3,
        660.6,
    )


@pytest.mark.parametrize(
    ("name", "memory_gib", "bandwidth", "fp16", "tdp"),
    [
        ("A100 SXM4 80GB", 80, 2039, 312, 400),  # A100 datasheet
        ("H100 SXM5", 80, 3350, 989.5, 700),  # H100 datasheet: 1979 sparse / 2
        ("H100 PCIe", 80, 2039, 756, 350),  # 1513 sparse / 2
        ("H200 SXM", 141, 4800, 989.5, 700),
        ("Instinct MI300X", 192, 5300, 1307.4, 750),  # MI300X data sheet: 2614.9 sparse / 2
        ("Tesla V100 SXM2 32GB", 32, 900, 125, 300),
        ("GeForce GTX 1080 Ti", 11, 484, 0.177, 250),  # 352 bit / 8 x 11 Gbps = 484; FP16 11.3 / 64
        ("Instinct MI250X", 128, 3276.8, 383, 500),  # 500 W typical board power; 560 W is the peak
        ("Instinct MI355X", 288, 8000, 2516.6, 1400),  # AMD: 2.5 PFLOPS FP16 dense
        ("B300", 288, 8000, 2250, 1100),  # HGX B300: 36 PFLOPS FP16 sparse / 8 / 2
        ("H20", 96, 4000, 148, 400),
        ("A16", 64, 800, 71.8, 250),  # 4 GPUs x 17.95 TFLOPS (35.9 sparse / 2)
        ("Gaudi 3", 128, 3670, None, 900),  # BF16 1835, no FP16 matrix figure published
        ("Gaudi 2", 96, 2460, None, 600),  # Hot Chips 2024 generations table; 6 HBM2e stacks x 1024 bit
        ("B200", 180, 7672, 2250, 1000),  # driver: 7680 bit / 8 x 3996 MHz x 2 = 7672 GB/s (NVIDIA: 7.7 TB/s)
        ("GB300", 288, 8000, 2500, 1400),  # Verda's per-GPU dense table: FP16/BF16 2.5 PFLOPS
        ("GH200", 96, 4000, 989.5, 1000),  # the H100 of a GH200: 1979 sparse / 2; module power incl. CPU
        ("RTX PRO 5000 Blackwell", 48, 1344, 258, 300),  # 2064 sparse FP4 AI TOPS / 8 = 258
        ("Radeon RX 9060", 8, 288, 85.7, 132),  # 28 CUs x 1024 x 2.99 GHz = 85.7; 128 bit / 8 x 18 Gbps = 288
        ("Gaudi 3 PCIe", 128, 3670, None, 600),  # HL-338: the OAM part's memory at 600 W
        ("Instinct MI350P", 144, 4000, 1153.5, 600),  # half an MI350X: 2307 / 2; 4096 bit x 8 Gbps / 8 = 4096 ~ 4 TB/s
        ("Radeon AI PRO R9700S", 32, 640, 191.4, 300),  # the R9700's 64 CUs x 1024 x 2.92 GHz; 256 bit x 20 Gbps / 8
        ("Radeon AI PRO R9600D", 32, 640, 99.3, 150),  # AMD's 397 dense INT4 TOPS / 4 = 99.25
        ("RTX 6000D", 84, 1568, 148, 600),  # 448 bit x 28 Gbps / 8 = 1568; RoofLang's dense FP16 148
        ("Radeon PRO W7900D", 48, 864, 106.0, 295),  # RDNA 3 WMMA = 2 x 52.99 (6,144 x 2 x 2 x 2.156 GHz)
        ("Radeon RX 7650 GRE", 8, 288, 44.2, 165),  # 2 x 22.08 (2,048 x 2 x 2 x 2.695 GHz); 128 bit x 18 Gbps / 8
        ("Arc Pro B65", 32, 608, 98.5, 200),  # 197 INT8 TOPS / 2 (the B60's XMX rule); 256 bit x 19 Gbps / 8
    ],
)
def test_datacenter_and_classic_figures(
    bundled: BundledData, name: str, memory_gib: int, bandwidth: float, fp16: float | None, tdp: int
) -> None:
    card = next(c for c in bundled.cards if c.name == name)
    assert (card.memory_bytes, card.bandwidth_gbs, card.fp16_tflops, card.tdp_w) == (
        memory_gib * GIB,
        bandwidth,
        fp16,
        tdp,
    )


def test_every_card_has_a_source_with_a_url_and_msrps_have_dates(bundled: BundledData) -> None:
    for card in bundled.cards:
        assert "<https://" in card.source, card.name
        assert card.msrp_usd is None or card.launch_date is not None, card.name
    launch = {c.name: c.msrp_usd for c in bundled.cards}
    assert (
        launch["GeForce GTX 1080 Ti"],
        launch["GeForce GTX 1080"],
        launch["GeForce GTX 1070"],
        launch["GeForce GTX 1060 6GB"],
        launch["GeForce GTX 980 Ti"],
        launch["GeForce GTX Titan X"],
        launch["Titan X (Pascal)"],
        launch["Titan Xp"],
    ) == (699, 599, 379, 249, 649, 999, 1200, 1200)


def test_dual_gpu_boards_say_so(bundled: BundledData) -> None:
    two = sorted(c.name for c in bundled.cards if c.devices == 2)
    assert two == ["GeForce GTX Titan Z", "Instinct MI250", "Instinct MI250X", "Tesla K80"]
    assert sorted(c.name for c in bundled.cards if c.devices > 2) == ["A16"]  # 4 x 16 GB, 4 x 128 bit


def test_arc_battlemage_figures_use_the_boost_clock(bundled: BundledData) -> None:
    """Intel's 233 / 203 INT8 TOPS: Xe-cores x 4096 x boost clock (B580 20 x 4096 x 2.85 GHz = 233.5;
    B570 18 x 4096 x 2.75 GHz = 202.8); FP16 XMX is half of INT8."""
    arc = {c.name: c for c in bundled.cards if c.vendor == "Intel"}
    assert (arc["Arc B580"].int8_tops, arc["Arc B570"].int8_tops) == (233, 203)
    for name in ("Arc B580", "Arc B570"):
        assert arc[name].fp16_tflops == pytest.approx((arc[name].int8_tops or 0) / 2, abs=0.3), name


def test_gaudi_2_vector_fp32_follows_gaudi_3_per_tpc_and_clock(bundled: BundledData) -> None:
    """Intel publishes no Gaudi 2 FP32 figure. Its TPCs are the same 64-lane SIMD cores (TPC User Guide) and its
    MMEs the same engines: Gaudi 3's 8 MMEs give 1835 BF16 TFLOPS, Gaudi 2's 2 give 432, so Gaudi 3 clocks
    1835 / (4 x 432) = 1.062x higher. Gaudi 2 FP32 = 14.35 x 24 / 64 TPCs / 1.062 = 5.07 TFLOPS."""
    cards = {c.name: c for c in bundled.cards}
    g2, g3 = cards["Gaudi 2"], cards["Gaudi 3"]
    clock_ratio = (g3.bf16_tflops or 0) / (4 * (g2.bf16_tflops or 1))  # 1835 / 1728 = 1.062
    assert g2.fp32_tflops == pytest.approx(g3.fp32_tflops * 24 / 64 / clock_ratio, abs=0.01)


def test_unified_memory_machines_say_what_the_gpu_may_use(bundled: BundledData) -> None:
    """GB10 shares 128 GB with its CPU and may use all of it; Strix Halo's GPU gets at most 96 of 128 GB (AMD's
    variable graphics memory); GH200's Hopper has 96 GB HBM3 of its own and reaches the Grace CPU's 480 GB
    LPDDR5X coherently: 96 + 480 = 576. Discrete cards have no shared figure."""
    cards = {c.name: c for c in bundled.cards}
    unified = {
        n: (c.memory_bytes // GIB, (c.unified_memory_bytes or 0) // GIB)
        for n, c in cards.items()
        if c.unified_memory_bytes
    }
    gb10, strix = "GB10 (DGX Spark)", "Radeon 8060S (Ryzen AI Max+ 395)"
    assert unified == {gb10: (128, 128), strix: (96, 128), "GH200": (96, 576)}
    # LPDDR5X on a 256-bit bus: 273 GB/s x 8 / 256 = 8.53 Gbps (GB10), 256 x 8 / 256 = 8.0 Gbps (Strix Halo)
    assert (cards[gb10].bandwidth_gbs, cards[strix].bandwidth_gbs) == (273, 256)


def test_rtx_pro_blackwell_tensor_rates_follow_the_professional_ratios(bundled: BundledData) -> None:
    """RTX PRO 4500 / 4000: FP32 50.5 / 36.8 (10,496 and 8,960 cores at their own boost clocks, not the PRO
    6000's), FP16 = 4 x FP32 (202, 147.2), FP8 = 8 x FP32; the PRO 5000s take NVIDIA's 2,064 AI TOPS / 8."""
    cards = {c.name: c for c in bundled.cards}
    for name in ("RTX PRO 4500 Blackwell", "RTX PRO 4000 Blackwell", "RTX PRO 4000 Blackwell SFF"):
        card = cards[name]
        assert card.fp16_tflops == pytest.approx(4 * card.fp32_tflops, abs=0.2), name
        assert card.fp8_tflops == pytest.approx(8 * card.fp32_tflops, abs=0.4), name
    assert (cards["RTX PRO 4500 Blackwell"].fp32_tflops, cards["RTX PRO 4000 Blackwell"].fp32_tflops) == (50.5, 36.8)
    for name in ("RTX PRO 5000 Blackwell", "RTX PRO 5000 Blackwell 72GB"):
        assert (cards[name].fp32_tflops, cards[name].fp16_tflops, cards[name].fp8_tflops) == (65, 258, 516)


def test_ecc_memory_is_fifteen_sixteenths_on_every_datacenter_gddr5_gddr6_board(bundled: BundledData) -> None:
    """In-band ECC keeps its bits in the memory itself: 1/16 of it (NVIDIA's K40 board specification: 12 GB,
    ~11.25 GB with ECC on; T4 15,360 MiB = 16,384 x 15/16 in nvidia-smi). HBM's ECC is side-band and takes
    none, so only GDDR5/GDDR6 cards carry the figure, and every datacenter one of them does (ECC on)."""
    with_ecc = {c.name: c for c in bundled.cards if c.ecc_memory_bytes}
    for card in with_ecc.values():
        assert card.memory_type in ("GDDR5", "GDDR6"), card.name
        assert card.ecc_memory_bytes == card.memory_bytes * 15 // 16, card.name
    gddr_datacenter = {
        c.name
        for c in bundled.cards
        if c.segment == "datacenter" and c.vendor == "NVIDIA" and c.memory_type in ("GDDR5", "GDDR6")
    }
    assert gddr_datacenter <= set(with_ecc) and len(gddr_datacenter) == 15
    assert with_ecc["Tesla K40"].ecc_memory_bytes == 11.25 * GIB  # 12 x 15/16
    assert with_ecc["Tesla K80"].ecc_memory_bytes == 22.5 * GIB  # two GPUs: 2 x 11.25


def test_cards_without_a_published_tensor_rate_derive_it_from_the_published_one(bundled: BundledData) -> None:
    """R9600D: AMD publishes only 397 dense INT4 TOPS; RDNA 4 runs INT4 at 4 x, FP8/INT8 at 2 x its FP16 matrix
    rate and FP16 at 4 x dual-issue FP32 (R9700: 765.5 / 191.4 / 47.8), so FP16 = 397 / 4 = 99.25, FP8 = 198.5,
    FP32 = 99.25 / 4 = 24.8 (TechPowerUp's clock gives 24.82). RTX 6000D: its TF32 tensor rate (RoofLang 74,
    measured 71.5) is below its CUDA-core FP32 (19,968 x 2 x 2.43 GHz = 97.04), so TF32 is left empty and FP32
    math is timed on the CUDA cores (measured SGEMM 66.2)."""
    cards = {c.name: c for c in bundled.cards}
    r9600d = cards["Radeon AI PRO R9600D"]
    assert (r9600d.fp16_tflops, r9600d.fp8_tflops, r9600d.int8_tops) == (99.3, 198.5, 198.5)
    assert r9600d.fp32_tflops == pytest.approx(397 / 4 / 4, abs=0.05)
    rtx6000d = cards["RTX 6000D"]
    assert rtx6000d.fp32_tflops == pytest.approx(19968 * 2 * 2.43 / 1000, abs=0.05)
    assert (rtx6000d.tf32_tflops, rtx6000d.fp8_tflops, rtx6000d.int8_tops) == (None, 296, None)
