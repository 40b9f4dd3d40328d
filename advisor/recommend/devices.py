"""What the recommendation needs to know about one GPU: usable memory and peak rates per precision."""

from __future__ import annotations

from dataclasses import dataclass

from advisor.catalog.records import CardRecord, model_memory_bytes
from advisor.core.overheads import HOPPER_MEASURED
from advisor.core.workload import Precision, Workload
from advisor.recommend.multiprocessors import lanes_and_clock, sm_clock_hz, sm_count
from advisor.recommend.tensor_power import HOPPER, TensorPower, tensor_power

# The driver's own reservation scales with the card's memory (page tables, ECC): measured 644,939,776 B
# used on an idle H200 (143,771 MiB) -> 0.43% of the memory. CUDA context, cuBLAS/cuDNN and their
# workspaces are taken as measured on the H200 (CUDA 13, lazy loading) for every card: an assumption.
H200_NVML_TOTAL_BYTES = 143_771 * 2**20
DRIVER_RESERVED_FRACTION = HOPPER_MEASURED.driver_reserved_bytes / H200_NVML_TOTAL_BYTES
PROCESS_OVERHEAD_BYTES = HOPPER_MEASURED.context_bytes + HOPPER_MEASURED.workspace_bytes

# PCIe bandwidth per direction for an x16 link, decimal GB/s (PCI-SIG: 8, 16, 32, 64 GT/s per lane).
PCIE_X16_GBS = {2: 8.0, 3: 15.75, 4: 31.5, 5: 63.0, 6: 121.0}
BRIDGED_BOARDS = 2  # boards one NVLink bridge joins (Device.ring_gbs)
# What NCCL takes a link to carry for its rings, below the line rate (packet headers, flow control):
# PCIe x16: width * speed / 80 GB/s, speed in 100 Mbps per lane: 5 GT/s 30, 8 GT/s 60, 16 GT/s 120, 32 GT/s 240,
# 64 GT/s 480 (NVIDIA/nccl@069a3d4 src/graph/topo.cc kvDictPciGen and its PCI links: 16 x 120 / 80 = 24 GB/s at
# PCIe 4.0, 0.76 of PCIE_X16_GBS's 31.5). RCCL has the same PCI links (ROCm/rccl@0cbce2a src/graph/topo.cc).
NCCL_PCIE_X16_GBS = {2: 6.0, 3: 12.0, 4: 24.0, 5: 48.0, 6: 96.0}
# NVLink: 20 GB/s a link whose line carries 25 each way (src/graph/topo.h SM70_NVLINK_BW, SM80_NVLINK_BW; SM90
# 20.6 of 25, SM100 40.1 of 50, the GA102 bridge's SM86 12 of 14.06: 0.80-0.85). NCCL's maintainer on H100:
# "450GB/s is the line rate. With the protocol overhead (~20%) NCCL can get an effective NVLink bandwidth of
# 370GB/s" (NVIDIA/nccl-tests#212, 2024-05-06).
NVLINK_COLLECTIVE_SHARE = 20.0 / 25.0
# Infinity Fabric: RCCL's GFX94X_XGMI_WIDTH, 48 GB/s a link whose line carries 64 each way (MI300X: 7 links,
# 896 GB/s both ways; ROCm/rccl@0cbce2a src/graph/topo.h); its MI200 figure is 36 of 50, its older parts' 24 of
# 46, lower still. Xe Link keeps its quoted rate: no such figure.
INFINITY_FABRIC_COLLECTIVE_SHARE = 48.0 / 64.0
LINK_COLLECTIVE_SHARES = {"nvlink": NVLINK_COLLECTIVE_SHARE, "infinity_fabric": INFINITY_FABRIC_COLLECTIVE_SHARE}


@dataclass(frozen=True, kw_only=True)
class Device:
    name: str
    vendor: str
    memory_bytes: int  # per GPU
    usable_bytes: int  # allocator budget once the driver and the process's context took theirs
    bandwidth_gbs: float
    matmul_tflops: float  # linear/attention rate in the workload's precision
    conv_tflops: float  # convolution rate (TF32 for fp32 convolutions where the card has it)
    fp32_tflops: float
    tdp_w: float  # per GPU
    link_gbs: float  # per-direction bandwidth between cards (NVLink / Infinity Fabric, else PCIe)
    link_name: str
    sm_count: int = 1  # streaming multiprocessors per GPU (advisor.recommend.multiprocessors)
    sm_clock_hz: float = 1.5e9  # their boost clock (multiprocessors.sm_clock_hz; a made-up card's: 1.5 GHz)
    tensor_cores: bool = False  # matmuls of this precision run on tensor/matrix units (tile shape, rate)
    # fp32 convolutions / matmuls run on TF32 tensor cores (cuDNN's default / the workload's tf32): on GeForce
    # Ampere, Ada and Blackwell the TF32 rate equals the FP32 one, yet the tensor path is the one that runs
    tf32_conv: bool = False
    tf32_matmul: bool = False
    tensor_power: TensorPower = HOPPER  # how the die's tensor clock falls under tdp_w (advisor.recommend.tensor_power)
    bridge_pcie_gbs: float = 0.0  # a bridged board's PCIe rate, which rings over more than two boards fall to
    link_share: float = 1.0  # share of link_gbs a ring collective carries (collective_shares)
    pcie_share: float = 1.0  # the same over the board's PCIe, where a bridged board's ring falls to it

    def ring_gbs(self, count: int) -> float:
        """Per-direction bandwidth of a ring collective over `count` cards: an NVLink bridge joins two boards
        (NVIDIA's GA102 whitepaper, "Third-Generation NVLink": four x4 links, 56.25 GB/s each way "between two
        GPUs"), so a ring over more of them runs its other hops, and so its pace, over PCIe."""
        return self.bridge_pcie_gbs if self.bridge_pcie_gbs and count > BRIDGED_BOARDS else self.link_gbs

    def collective_gbs(self, count: int) -> float:
        """What a ring collective moves per direction over `count` cards: the ring's link rate at NCCL's share
        of it (NCCL_PCIE_X16_GBS, LINK_COLLECTIVE_SHARES)."""
        over_pcie = self.ring_gbs(count) != self.link_gbs
        return self.ring_gbs(count) * (self.pcie_share if over_pcie else self.link_share)

    def comm_seconds(self, comm_bytes: float, count: int) -> float:
        """A plan's communication per step over `count` of these cards (plans.py: no overlap with compute).
        Serial is how Answer.AI's FSDP QLoRA runs it: each LoRA A and B is an FSDP unit of its own
        (AnswerDotAI/fsdp_qlora@7242daa train.py get_wrapping_policy), and limit_all_gathers=True holds the CPU
        until the unit two all-gathers back is freed (pytorch/pytorch@e6401a2 torch/distributed/fsdp/
        _limiter_utils.py _FreeEventQueue), so the next block's all-gather is issued as its 12 adapters finish."""
        return comm_bytes / (self.collective_gbs(count) * 1e9)

    def ring_name(self, count: int) -> str:
        return f"PCIe ({self.link_name} pairs two boards)" if self.ring_gbs(count) != self.link_gbs else self.link_name


def matmul_rate(card: CardRecord, workload: Workload) -> float:
    """Peak dense rate for the multiply-adds of this precision, per board.

    fp32 training as PyTorch runs it by default: convolutions use TF32 (torch.backends.cudnn.allow_tf32 is
    True), matmuls do not (torch.backends.cuda.matmul.allow_tf32 is False) unless the workload turns TF32 on;
    half precisions use tensor cores
    with FP32 accumulate. Cards without tensor/matrix units fall back to their FP32 rate, and never run
    half-precision matmuls slower than that: where the chip's own FP16 rate is a fraction of FP32 (Pascal
    GP102/GP104: 1/64), cuBLAS computes half inputs in FP32 (cublasGemmEx with CUBLAS_COMPUTE_32F), so mixed
    precision saves memory there, not time.
    """
    if workload.precision is Precision.FP32:
        return (card.tf32_tflops or card.fp32_tflops) if workload.tf32 else card.fp32_tflops
    half = card.bf16_tflops if workload.compute_dtype == "bf16" else card.fp16_tflops
    return max(half or card.bf16_tflops or card.fp16_tflops or 0.0, card.fp32_tflops)


def conv_rate(card: CardRecord, workload: Workload) -> float:
    if workload.precision is Precision.FP32:
        return card.tf32_tflops or card.fp32_tflops
    return matmul_rate(card, workload)


def fp16_accumulate_rate(card: CardRecord) -> float:
    """Tensor rate of FP16 multiplies with FP16 accumulation, which llama.cpp's cuBLAS path uses
    (CUBLAS_COMPUTE_16F). GeForce cards run it at twice their FP32-accumulate rate (the catalog's
    fp16_tflops, see advisor/data/README.md); on every NVIDIA tensor-core part it equals half the INT8 rate
    (e.g. RTX 4090: 660.6 / 2 = 330.3 TFLOPS, A100: 624 / 2 = 312), so it is read from there. Cards with
    no half-precision tensor path (Pascal and older: FP16 at 1/64 rate) run the FP32 GEMM instead."""
    half = card.fp16_tflops or card.bf16_tflops or 0.0
    if half <= card.fp32_tflops:
        return card.fp32_tflops
    return max(half, (card.int8_tops or 0.0) / 2) if card.vendor == "NVIDIA" else half


@dataclass(frozen=True)
class GenerationRates:
    """What generation speed (advisor.recommend.generation_speed) needs of one GPU."""

    bandwidth_gbs: float
    fp16_accumulate_tflops: float  # dense FP16 tensor rate with FP16 accumulation (llama.cpp's GEMMs)
    hbm: bool  # stacked memory: wider and slower, so a single mat-vec stream reaches less of its peak
    half_tflops: float  # dense BF16/FP16 rate with FP32 accumulation (PyTorch's and vLLM's GEMMs)
    tdp_w: float  # board power, which caps the clock a tensor-core load holds (kernels.tensor_ceiling)
    sm_cycles_per_s: float  # multiprocessors x boost clock (peak FP32 / 2 FLOPs / FP32 lanes per SM)
    tensor_power: TensorPower  # the die's energy rule, as training's GEMMs use it (advisor.recommend.tensor_power)


def generation_rates(card: CardRecord) -> GenerationRates:
    per_gpu = max(card.devices, 1)
    half = max(card.bf16_tflops or card.fp16_tflops or 0.0, card.fp32_tflops)
    lanes = lanes_and_clock(card)[0]
    return GenerationRates(
        card.bandwidth_gbs / per_gpu,
        fp16_accumulate_rate(card) / per_gpu,
        card.memory_type.upper().startswith("HBM"),
        half / per_gpu,
        card.tdp_w / per_gpu,
        card.fp32_tflops * 1e12 / per_gpu / (2 * lanes),
        tensor_power(card),
    )


def usable_bytes(memory_bytes: int) -> int:
    return int(memory_bytes * (1 - DRIVER_RESERVED_FRACTION)) - PROCESS_OVERHEAD_BYTES


def local_need_bytes(required_bytes: int) -> int:
    """What a local card's free memory (NVML, which counts the process's context) must hold for the step:
    the allocator budget plus the CUDA context and library workspaces (DESIGN.md: that decides a fit).
    The app's Live GPUs tab and the PDF's local GPUs page compare the same figure."""
    return required_bytes + PROCESS_OVERHEAD_BYTES


def _pcie_gen(card: CardRecord) -> int:
    """The card's PCIe generation, taken as 3.0 where the catalog has none or one outside PCIE_X16_GBS."""
    gen = card.pcie_gen or 3
    return gen if gen in PCIE_X16_GBS else 3


def _pcie_gbs(card: CardRecord) -> float:
    return PCIE_X16_GBS[_pcie_gen(card)]


def _pcie_share(card: CardRecord) -> float:
    return NCCL_PCIE_X16_GBS[_pcie_gen(card)] / PCIE_X16_GBS[_pcie_gen(card)]


def collective_shares(card: CardRecord) -> tuple[float, float]:
    """The shares of its own link's rate and of its PCIe rate that a ring collective over this card carries."""
    pcie = _pcie_share(card)
    if card.link_kind in ("nvlink", "infinity_fabric", "xe_link") and card.link_bandwidth_gbs:
        return LINK_COLLECTIVE_SHARES.get(card.link_kind, 1.0), pcie
    return pcie, pcie


def bridge_pcie_gbs(card: CardRecord) -> float:
    """The PCIe rate of a board whose NVLink is a bridge (link_detail says so), else 0 (SXM boards reach every
    peer through NVLink or NVSwitch)."""
    bridged = card.link_kind == "nvlink" and "bridge" in (card.link_detail or "").lower()
    return _pcie_gbs(card) if bridged else 0.0


def link(card: CardRecord) -> tuple[float, str]:
    if card.link_kind in ("nvlink", "infinity_fabric", "xe_link") and card.link_bandwidth_gbs:
        # vendors quote NVLink as both directions together
        return card.link_bandwidth_gbs / 2, card.link_detail or card.link_kind
    return _pcie_gbs(card), f"PCIe {card.pcie_gen or 3}.0 x16" + (
        " (SLI bridge carries no compute data)" if card.link_kind == "sli" else ""
    )


def most_cards(card: CardRecord) -> int | None:
    """How many of this card one plan may use (None: no limit of its own). A unified-memory machine's GPU is
    part of its processor (GB10, Strix Halo), so a box holds one; with no GPU link between machines in the
    catalog, "4 x Radeon 8060S tensor parallel over PCIe" was ranked first for DeepSeek-V3. GH200 names its
    NVLink and scales like any data-centre GPU."""
    return 1 if card.unified_memory_bytes and card.link_kind == "none" else None


def device(card: CardRecord, workload: Workload) -> Device:
    per_gpu = max(card.devices, 1)
    memory = model_memory_bytes(card) // per_gpu  # with ECC on where the card ships with it (records.py)
    link_gbs, link_name = link(card)
    tf32 = workload.precision is Precision.FP32 and (card.tf32_tflops or 0.0) >= card.fp32_tflops > 0
    matmul = matmul_rate(card, workload)
    link_share, pcie_share = collective_shares(card)
    return Device(
        name=card.name,
        vendor=card.vendor,
        memory_bytes=memory,
        usable_bytes=usable_bytes(memory),
        bandwidth_gbs=card.bandwidth_gbs / per_gpu,
        matmul_tflops=matmul / per_gpu,
        conv_tflops=conv_rate(card, workload) / per_gpu,
        fp32_tflops=card.fp32_tflops / per_gpu,
        tdp_w=card.tdp_w / per_gpu,
        link_gbs=link_gbs,
        link_name=link_name,
        sm_count=sm_count(card),
        sm_clock_hz=sm_clock_hz(card),
        tensor_cores=workload.precision is not Precision.FP32 and matmul > card.fp32_tflops,
        tf32_conv=tf32,
        tf32_matmul=tf32 and workload.tf32,
        tensor_power=tensor_power(card),
        bridge_pcie_gbs=bridge_pcie_gbs(card),
        link_share=link_share,
        pcie_share=pcie_share,
    )
