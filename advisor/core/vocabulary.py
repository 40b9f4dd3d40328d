"""The words every layer shares about a workload, declared once as StrEnums whose text is what the command
line takes and the JSON prints: what a step does, its precision, optimizer, weight and cache formats,
fine-tuning, attention, offload, loss and runtime. Records take a member's text and make it the member
(as_member); core/workload.py's Workload holds them."""

from __future__ import annotations

from enum import StrEnum
from typing import Literal, TypeVar

from advisor.core.errors import SpecError


class Mode(StrEnum):
    """What a step does: a training step, an inference forward, or generation (prefill, then decode)."""

    TRAIN = "train"
    INFER = "infer"
    GENERATE = "generate"


class OptimizerName(StrEnum):
    """The optimizer a training step updates with: torch.optim's, bitsandbytes' 8-bit AdamW (paged or not),
    transformers' Adafactor and Lion (their state bytes: core/optimizers.py)."""

    SGD = "sgd"
    SGD_MOMENTUM = "sgd_momentum"
    ADAM = "adam"
    ADAMW = "adamw"
    ADAMW8BIT = "adamw8bit"
    PAGED_ADAMW8BIT = "paged_adamw8bit"
    ADAFACTOR = "adafactor"
    LION = "lion"


class WeightFormat(StrEnum):
    """How the weights are stored: plain floats, the transformers quantizers' formats (fp8, bitsandbytes int8
    and nf4, GPTQ/AWQ int4, gpt-oss's MXFP4 experts), then llama-quantize's file types (core/llm/gguf.py
    FILE_TYPES)."""

    FP32 = "fp32"
    BF16 = "bf16"
    FP16 = "fp16"
    FP8 = "fp8"
    INT8 = "int8"
    INT4 = "int4"
    NF4 = "nf4"
    MXFP4 = "mxfp4"
    Q2_K = "q2_k"
    Q3_K_S = "q3_k_s"
    Q3_K_M = "q3_k_m"
    Q3_K_L = "q3_k_l"
    Q4_0 = "q4_0"
    Q4_1 = "q4_1"
    Q4_K_S = "q4_k_s"
    Q4_K_M = "q4_k_m"
    Q5_0 = "q5_0"
    Q5_1 = "q5_1"
    Q5_K_S = "q5_k_s"
    Q5_K_M = "q5_k_m"
    Q6_K = "q6_k"
    Q8_0 = "q8_0"
    IQ1_S = "iq1_s"
    IQ1_M = "iq1_m"
    IQ2_XXS = "iq2_xxs"
    IQ2_XS = "iq2_xs"
    IQ2_S = "iq2_s"
    IQ2_M = "iq2_m"
    IQ3_XXS = "iq3_xxs"
    IQ3_XS = "iq3_xs"
    IQ3_S = "iq3_s"
    IQ3_M = "iq3_m"
    IQ4_NL = "iq4_nl"
    IQ4_XS = "iq4_xs"

    @property
    def gguf(self) -> bool:
        """A llama.cpp file type (it runs in llama.cpp; transformers and vLLM dequantize it on load)."""
        return self in GGUF_WEIGHTS

    @property
    def quantized(self) -> bool:
        """Below 16 bits per weight: frozen, trained only through adapters."""
        return self in QUANTIZED_WEIGHTS or self.gguf


class KVCacheFormat(StrEnum):
    """How the KV cache is stored (None on a Workload: the compute dtype)."""

    BF16 = "bf16"
    FP16 = "fp16"
    FP8 = "fp8"
    INT8 = "int8"


class Finetune(StrEnum):
    """Full fine-tuning, or PEFT LoRA adapters on a frozen base (QLoRA: the base in nf4)."""

    FULL = "full"
    LORA = "lora"
    QLORA = "qlora"


class AttentionImpl(StrEnum):
    """transformers' attn_implementation: eager materialises the scores and probabilities (batch x heads x
    seq^2); sdpa and flash_attention_2 run fused kernels that keep the output and the log-sum-exp."""

    EAGER = "eager"
    SDPA = "sdpa"
    FLASH = "flash"


class Offload(StrEnum):
    """Training state kept in system RAM (core/offload.py)."""

    OPTIMIZER = "optimizer"
    PARAMS = "params"


class AdapterDtype(StrEnum):
    """What LoRA adapters on a 16-bit base are stored and computed in. fp32: PEFT's get_peft_model
    (autocast_adapter_dtype=True, its default since 0.12) upcasts bf16 and fp16 adapters (peft/tuners/
    tuners_utils.py cast_adapter_dtype) and lora.Linear casts each input to them. base: the base's dtype, as
    torchtune's LoRALinear makes them, FSDP's MixedPrecision(param_dtype) casts them, or PEFT with
    autocast_adapter_dtype=False keeps them."""

    FP32 = "fp32"
    BASE = "base"


class VLLMRelease(StrEnum):
    """The vLLM releases whose startup allocates differently (core/llm/runtime.py), each named by the last
    release that behaves so. 0.16: V0 and V1 up to 0.16, whose profile samples max_num_seqs rows with top-k
    and top-p by sorting each row (v1/sample/ops/topk_topp_sampler.py apply_top_k_top_p, vllm 0.16.0). 0.19:
    0.17 to 0.19, which mask top-k/top-p in a Triton kernel from 8 rows up (topk_topp_triton.py, new in
    0.17.0) and capture the CUDA graphs and warm the sampler up after the KV pool fills the share."""

    V0_16 = "0.16"
    V0_19 = "0.19"


class TransformersRelease(StrEnum):
    """The transformers releases whose causal-LM loss allocates differently (core/ops/loss.py), each named by
    the last release that behaves so. 4.45: LlamaForCausalLM.forward (and its copies in every family)
    rebinds `logits = logits.float()` and returns those fp32 logits in its output, and slices a contiguous
    shifted copy for the loss (`shift_logits = logits[..., :-1, :].contiguous()`; v4.37-v4.45
    models/llama/modeling_llama.py). 5: the loss function upcasts a local copy (loss/loss_utils.py
    ForCausalLMLoss, which shifts the labels instead of the logits), so the output keeps the 16-bit logits."""

    V4_45 = "4.45"
    V5 = "5"


class LossImpl(StrEnum):
    """fused: chunked LM head + cross-entropy (core/llm/fused_loss.py)."""

    STANDARD = "standard"
    FUSED = "fused"


HalfDtype = Literal["bf16", "fp16"]
ComputeDtype = Literal["fp32", "bf16", "fp16"]


class Precision(StrEnum):
    """How a step computes and stores: fp32; autocast (amp_*: fp32 weights, half-precision matmuls and
    activations, torch.autocast); or pure half (the model cast with .to(dtype): weights, gradients and
    optimizer state in 16 bits). The facts every layer asks of it are answered here once."""

    FP32 = "fp32"
    AMP_BF16 = "amp_bf16"
    AMP_FP16 = "amp_fp16"
    BF16 = "bf16"
    FP16 = "fp16"

    @property
    def amp(self) -> bool:
        return self in (Precision.AMP_BF16, Precision.AMP_FP16)

    @property
    def pure_half(self) -> bool:
        """The model itself is cast to 16 bits (module.to(dtype)), not autocast."""
        return self in (Precision.BF16, Precision.FP16)

    @property
    def compute_dtype(self) -> ComputeDtype:
        """The dtype the matmuls and the activations run in."""
        if self is Precision.FP32:
            return "fp32"
        return "bf16" if self in (Precision.AMP_BF16, Precision.BF16) else "fp16"

    @property
    def activation_bytes(self) -> int:
        """Bytes per element of the compute dtype: 4 in fp32, 2 under autocast and in pure half."""
        return 4 if self is Precision.FP32 else 2


class Runtime(StrEnum):
    """What runs a generation workload: each allocates as its own code does (core/llm/runtime.py)."""

    TRANSFORMERS = "transformers"
    LLAMA_CPP = "llama.cpp"
    VLLM = "vllm"

    @property
    def pytorch(self) -> bool:
        """Allocates through PyTorch's caching allocator (transformers, vLLM), not its own buffers (llama.cpp)."""
        return self is not Runtime.LLAMA_CPP


PLAIN_WEIGHTS = (WeightFormat.FP32, WeightFormat.BF16, WeightFormat.FP16)
QUANTIZED_WEIGHTS = (WeightFormat.FP8, WeightFormat.INT8, WeightFormat.INT4, WeightFormat.NF4, WeightFormat.MXFP4)
# every member after the transformers formats: llama-quantize's file types
GGUF_WEIGHTS = tuple(f for f in WeightFormat if f not in (*PLAIN_WEIGHTS, *QUANTIZED_WEIGHTS))


E = TypeVar("E", bound=StrEnum)


def as_member(kind: type[E], field: str, value: object) -> E:
    """`value` (a member or its text, as the CLI, a JSON file or a test gives it) as a member of `kind`; any
    other value is a SpecError naming the field and the choices."""
    members = {member.value: member for member in kind}
    if isinstance(value, str) and value in members:
        return members[value]
    raise SpecError(f"{field}: must be one of {', '.join(members)}, got {value!r}")
