"""What the user runs: training, inference or generation; batch, precision, optimizer, checkpointing; how the
weights and the KV cache are stored; full fine-tuning or LoRA/QLoRA adapters."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from advisor.core.errors import SpecError

# The shared words live in core/vocabulary.py; they are named here too, as every layer imports them with the
# Workload that holds them.
from advisor.core.vocabulary import (
    GGUF_WEIGHTS,
    PLAIN_WEIGHTS,
    QUANTIZED_WEIGHTS,
    AdapterDtype,
    AttentionImpl,
    ComputeDtype,
    Finetune,
    HalfDtype,
    KVCacheFormat,
    LossImpl,
    Mode,
    Offload,
    OptimizerName,
    Precision,
    Runtime,
    TransformersRelease,
    VLLMRelease,
    WeightFormat,
    as_member,
)

__all__ = [
    "GGUF_WEIGHTS",
    "LORA_EXTRA_TARGETS",
    "LORA_TARGETS",
    "MAX_LORA_RANK",
    "OPTIMIZER_STATE_SLOTS",
    "OPTIMIZER_STEP_TEMPORARIES",
    "QUANTIZED_WEIGHTS",
    "AdapterDtype",
    "AttentionImpl",
    "ComputeDtype",
    "Finetune",
    "HalfDtype",
    "KVCacheFormat",
    "LossImpl",
    "Mode",
    "Offload",
    "OptimizerName",
    "Precision",
    "Runtime",
    "TransformersRelease",
    "VLLMRelease",
    "WeightFormat",
    "Workload",
    "as_member",
    "default_notes",
    "recipe_defaults",
    "runtime_for",
]

# The linear layers of a decoder block that LoRA can adapt (PEFT's target_modules names, Llama spelling).
LORA_TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
# Outside the blocks, adapted only when named (PEFT target_modules=[..., "lm_head", "embed_tokens"]): the LM head
# as a LoRA Linear, the token embedding as PEFT's lora.Embedding
LORA_EXTRA_TARGETS = ("lm_head", "embed_tokens")

# Per-parameter state tensors (torch.optim): momentum keeps momentum_buffer; Adam/AdamW exp_avg and exp_avg_sq.
# bitsandbytes' 8-bit AdamW (paged or not) two quantized states, Lion one, Adafactor one factored second
# moment: their bytes are in core/optimizers.py
OPTIMIZER_STATE_SLOTS: dict[str, int] = {
    "sgd": 0,
    "sgd_momentum": 1,
    "adam": 2,
    "adamw": 2,
    "adamw8bit": 2,
    "paged_adamw8bit": 2,
    "adafactor": 1,
    "lion": 1,
}
# Parameter-sized temporaries of the foreach step (torch/optim/adam.py _multi_tensor_adam:
# exp_avg_sq_sqrt = torch._foreach_sqrt(exp_avg_sq)); SGD updates in place.
# bitsandbytes updates in one fused kernel per tensor; Adafactor's per-tensor temporaries: core/optimizers.py
OPTIMIZER_STEP_TEMPORARIES: dict[str, int] = {
    "sgd": 0,
    "sgd_momentum": 0,
    "adam": 1,
    "adamw": 1,
    "adamw8bit": 0,
    "paged_adamw8bit": 0,
    "adafactor": 0,
    "lion": 0,
}


MAX_LORA_RANK = 4096  # the app's LoRA rank box stops here too (ui/workload_llm.py)


@dataclass(frozen=True)
class Workload:
    mode: Mode = Mode.TRAIN  # like every vocabulary field: its text is accepted and made the member
    batch: int = 32
    precision: Precision = Precision.FP32  # a plain string is accepted and made the enum (__post_init__)
    optimizer: OptimizerName = OptimizerName.ADAM
    checkpointing: bool = False
    prompt_len: int = 512  # generate: tokens of the prompt (prefill)
    new_tokens: int = 128  # generate: tokens generated per sequence (decode)
    weights: WeightFormat | None = None  # None: stored in the precision's dtype
    kv_cache: KVCacheFormat | None = None  # None: the compute dtype
    finetune: Finetune = Finetune.FULL
    lora_rank: int = 16
    lora_targets: tuple[str, ...] = ()  # () = every linear layer of the blocks (LORA_TARGETS)
    adapter_dtype: AdapterDtype = AdapterDtype.FP32  # LoRA adapters on a 16-bit base: PEFT's fp32, or the base's
    # fp32 matmuls on TF32 tensor cores (torch.backends.cuda.matmul.allow_tf32 = True, or
    # torch.set_float32_matmul_precision("high"); NVIDIA's NGC containers set it): a speed setting, memory is
    # fp32's. PyTorch's own default is off for matmuls and on for cuDNN convolutions.
    tf32: bool = False
    # fields the user left unset that took the common recipes' default (recipe_defaults), named in assumptions
    defaulted: tuple[str, ...] = ()
    runtime: Runtime | None = None  # generate: None = what the weight format runs in (runtime_used)
    gpu_layers: int | None = None  # llama.cpp -ngl: repeating layers on the GPU (None: all and the output)
    attention: AttentionImpl | None = None  # None: the model's default (sdpa, or eager where it has no sdpa)
    offload: Offload | None = None  # train: optimizer state (and with "params" the weights) in system RAM
    loss: LossImpl = LossImpl.STANDARD
    gpu_memory_utilization: float = 0.9  # vLLM: the share of the card's memory the engine claims
    max_num_seqs: int = 256  # vLLM --max-num-seqs: sequences its profile samples for (core/llm/runtime.py)
    # vLLM --max-num-batched-tokens: the tokens of its profiling forward (V1 profile_run's _dummy_run(
    # max_num_tokens)); engines before chunked prefill (0.2-0.5) took max(max_model_len, 2048)
    max_num_batched_tokens: int = 8192
    # vLLM --enforce-eager (LLM(enforce_eager=True)): no CUDA graphs are captured, so the engine holds no graph
    # pool (vllm/worker/worker.py warm_up_model, V0, and vllm/v1/worker/gpu_worker.py compile_or_warm_up_model:
    # `if not self.model_config.enforce_eager: ... capture_model()`)
    enforce_eager: bool = False
    # vLLM --vllm-version: the release's startup (core/vocabulary.py VLLMRelease); the newest by default
    vllm_version: VLLMRelease = VLLMRelease.V0_19
    # train: the transformers release whose causal-LM loss the step runs (core/vocabulary.py
    # TransformersRelease); the newest by default
    transformers_version: TransformersRelease = TransformersRelease.V5
    expandable_segments: bool = False  # PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (core/budget.py)
    # train: the loop lets go of the model's output (the logits) before backward, keeping only the loss:
    # transformers' Trainer.compute_loss returns the loss alone, torchtune's recipes `del logits` in
    # _loss_step. False: a plain loop's `out = model(x)` keeps them referenced until the step ends.
    drops_logits: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "mode", as_member(Mode, "mode", self.mode))
        object.__setattr__(self, "precision", as_member(Precision, "precision", self.precision))
        object.__setattr__(self, "optimizer", as_member(OptimizerName, "optimizer", self.optimizer))
        if self.batch < 1:
            raise SpecError(f"batch: must be at least 1, got {self.batch}")
        self._check_llm_fields()

    def _check_llm_fields(self) -> None:
        for name in ("prompt_len", "new_tokens", "lora_rank", "max_num_seqs", "max_num_batched_tokens"):
            if getattr(self, name) < 1:
                raise SpecError(f"{name}: must be at least 1, got {getattr(self, name)}")
        if self.lora_rank > MAX_LORA_RANK:  # 10**12 was accepted (issue 29); published adapters use 4 to 256
            raise SpecError(
                f"lora_rank: at most {MAX_LORA_RANK:,} (an adapter's rank is below the layer's "
                f"width), got {self.lora_rank:,}"
            )
        _set_member(self, "weights", WeightFormat)
        _set_member(self, "kv_cache", KVCacheFormat)
        _set_member(self, "finetune", Finetune)
        _set_member(self, "attention", AttentionImpl)
        _set_member(self, "offload", Offload)
        _set_member(self, "loss", LossImpl)
        _set_member(self, "adapter_dtype", AdapterDtype)
        _set_member(self, "vllm_version", VLLMRelease)
        _set_member(self, "transformers_version", TransformersRelease)
        if not 0 < self.gpu_memory_utilization <= 1:
            raise SpecError(f"gpu_memory_utilization: must be above 0 and at most 1, got {self.gpu_memory_utilization}")
        if self.offload is not None and self.mode != Mode.TRAIN:
            raise SpecError(f"offload: {self.offload} offload is a training option (--mode train)")
        if self.drops_logits and self.mode != Mode.TRAIN:
            raise SpecError("drops_logits: the training loop's option (--mode train)")
        unknown = [t for t in self.lora_targets if t not in (*LORA_TARGETS, *LORA_EXTRA_TARGETS)]
        if unknown:
            raise SpecError(
                f"lora_targets: unknown {', '.join(unknown)}; choose from "
                f"{', '.join((*LORA_TARGETS, *LORA_EXTRA_TARGETS))}"
            )
        if self.finetune == Finetune.QLORA and self.weights not in (None, WeightFormat.NF4):
            raise SpecError(f"weights: QLoRA keeps the frozen base in nf4, got '{self.weights}'")
        if self.weights in GGUF_WEIGHTS and self.mode == Mode.TRAIN:
            raise SpecError(f"weights: {self.weights} is a llama.cpp format for inference; use --mode generate")
        self._check_runtime()
        if self.weights in QUANTIZED_WEIGHTS and self.mode == Mode.TRAIN and self.finetune == Finetune.FULL:
            raise SpecError(
                f"weights: {self.weights} weights are frozen; train adapters on them with "
                "--finetune lora (or qlora), or train in bf16/fp32"
            )

    def _check_runtime(self) -> None:
        if self.runtime is not None:
            object.__setattr__(self, "runtime", as_member(Runtime, "runtime", self.runtime))
            if self.mode != Mode.GENERATE:
                raise SpecError(f"runtime: {self.runtime} is a choice for --mode generate")
        used = self.runtime_used
        if used == Runtime.LLAMA_CPP and self.weights not in (*GGUF_WEIGHTS, None, *PLAIN_WEIGHTS):
            raise SpecError(f"runtime: llama.cpp runs GGUF files (q4_k_m ... q8_0, f16), not {self.weights} weights")
        if used != Runtime.LLAMA_CPP and self.weights in GGUF_WEIGHTS and self.generating:
            raise SpecError(
                f"runtime: {self.weights} is a llama.cpp format; transformers and vLLM dequantize "
                "GGUF files on load (use --runtime llama.cpp or a transformers format)"
            )
        if used == Runtime.LLAMA_CPP and self.generating and self.kv_cache == KVCacheFormat.FP8:
            raise SpecError(
                "kv_cache: llama.cpp has no fp8 cache type (--cache-type-k/v f32, f16, bf16, q8_0, q4_0, q4_1, "
                "iq4_nl, q5_0, q5_1); use --kv-cache int8 (its q8_0) or fp16"
            )
        if self.gpu_layers is not None and (used != Runtime.LLAMA_CPP or self.gpu_layers < 0):
            raise SpecError(f"gpu_layers: -ngl is a llama.cpp option (0 or more layers), got {self.gpu_layers}")

    @property
    def runtime_used(self) -> Runtime:
        return runtime_for(self.runtime, self.weights)

    @property
    def generating(self) -> bool:
        return self.mode == Mode.GENERATE

    @property
    def weight_format(self) -> WeightFormat:
        """How the weights are stored: the explicit format, nf4 under QLoRA, else the precision's dtype."""
        if self.weights is not None:
            return self.weights
        if self.finetune == Finetune.QLORA:
            return WeightFormat.NF4
        return WeightFormat(self.compute_dtype) if self.pure_half else WeightFormat.FP32

    @property
    def kv_cache_dtype(self) -> str:
        """The KV cache's storage: the explicit format, else the dtype the attention computes in (fp32
        models cache fp32; autocast and half models cache half)."""
        llama_cpp = self.generating and self.runtime_used == Runtime.LLAMA_CPP
        if llama_cpp and self.kv_cache == KVCacheFormat.INT8:
            return "q8_0"  # llama.cpp's 8-bit cache type (core/llm/kv_cache.py: 34 bytes per 32 values)
        if self.kv_cache is not None:
            return self.kv_cache
        if llama_cpp:
            return "fp16"  # llama.cpp's cache types default to f16 (common.h cache_type_k/v)
        return self.compute_dtype

    @property
    def adapters(self) -> tuple[str, ...]:
        """The LoRA-adapted linear layers (empty for full fine-tuning, and outside training: inference of a
        LoRA workload, as advisor fit measures it, runs the base model)."""
        if self.finetune == Finetune.FULL or self.mode != Mode.TRAIN:
            return ()
        return self.lora_targets or LORA_TARGETS

    @property
    def training(self) -> bool:
        return self.mode == Mode.TRAIN

    @property
    def amp(self) -> bool:
        return self.precision.amp

    @property
    def pure_half(self) -> bool:
        return self.precision.pure_half

    @property
    def compute_dtype(self) -> ComputeDtype:
        return self.precision.compute_dtype

    @property
    def activation_bytes(self) -> int:
        """Bytes per element of activations (and of a half-precision copy of the weights): Precision."""
        return self.precision.activation_bytes

    @property
    def param_dtype_bytes(self) -> int:
        """Weights (and so gradients and optimizer state) are fp32 except in pure bf16/fp16."""
        return 2 if self.pure_half else 4

    @property
    def kbit_prepared(self) -> bool:
        """QLoRA, or LoRA on LLM.int8 weights, under autocast as PEFT/TRL recipes run it:
        prepare_model_for_kbit_training has cast the unquantized weights to fp32 (pure-bf16 QLoRA, where that
        cast also makes the residual stream fp32, is not modelled so). TRL's SFTTrainer has called it for
        8-bit models since its first release (trl 5fb5af7, 2023-05-24: prepare_model_for_int8_training when
        is_loaded_in_8bit), as PEFT's own int8 recipes do."""
        lora_on_int8 = self.finetune == Finetune.LORA and self.weights == WeightFormat.INT8
        return (self.finetune == Finetune.QLORA or lora_on_int8) and self.amp and self.training

    @property
    def trainable_dtype_bytes(self) -> int:
        """Bytes per trained weight (and its gradient and optimizer state): LoRA adapters are fp32 on any
        base, as PEFT's get_peft_model(autocast_adapter_dtype=True), its default since 0.12, upcasts bf16 and
        fp16 adapters (peft/tuners/tuners_utils.py cast_adapter_dtype), unless they keep the base's dtype
        (AdapterDtype.BASE); full training in the parameters'."""
        if self.finetune != Finetune.FULL and self.adapter_dtype == AdapterDtype.FP32:
            return 4
        return self.param_dtype_bytes


def runtime_for(runtime: Runtime | None, weights: WeightFormat | None) -> Runtime:
    """The explicit runtime, else the one the weights are made for: GGUF formats run in llama.cpp, the rest
    (GPTQ/AWQ int4, bitsandbytes nf4/int8, fp8, 16-bit) in transformers."""
    if runtime is not None:
        return runtime
    return Runtime.LLAMA_CPP if weights in GGUF_WEIGHTS else Runtime.TRANSFORMERS


def recipe_defaults(
    mode: Mode,
    weights: WeightFormat | None,
    finetune: Finetune,
    precision: Precision | None,
    checkpointing: bool | None,
) -> tuple[Precision, bool, tuple[str, ...]]:
    """Precision and checkpointing where the user gave neither, as the common recipes set them, and the
    names of the fields so chosen:
    - generation computes in half precision (bf16 on cards that have it, fp16 on the others: the same
      bytes) unless its weights are fp32: GGUF runtimes, GPTQ/AWQ kernels and bitsandbytes all run 16-bit
      activations, and unquantized checkpoints are loaded in their 16-bit dtype;
    - QLoRA checkpoints, as PEFT's prepare_model_for_kbit_training(use_gradient_checkpointing=True) does by
      default (peft/utils/other.py)."""
    defaulted: list[str] = []
    if precision is None:
        # every generation recipe loads 16-bit weights (transformers' torch_dtype, vLLM's dtype "auto" takes the
        # checkpoint's bf16/fp16; llama.cpp computes in f16/f32 from its own format): fp32 only when asked for
        precision = Precision.BF16 if mode == Mode.GENERATE and weights != WeightFormat.FP32 else Precision.FP32
        if precision is not Precision.FP32:
            defaulted.append("precision")
    if checkpointing is None:
        checkpointing = mode == Mode.TRAIN and finetune == Finetune.QLORA
        if checkpointing:
            defaulted.append("checkpointing")
    return precision, checkpointing, tuple(defaulted)


def default_notes(w: Workload) -> list[str]:
    """One assumption line per field that took a recipe default."""
    precision = (
        f"Precision {w.precision} by default: generation from {w.weights} weights computes in "
        "bf16 (fp16 on cards without bf16, the same bytes); --precision overrides it."
        if w.weights is not None
        else f"Precision {w.precision} by default: generation loads 16-bit weights, as transformers' torch_dtype, "
        "vLLM's dtype auto and llama.cpp do (fp16 on cards without bf16, the same bytes); --precision overrides it."
    )
    notes = {
        "precision": precision,
        "checkpointing": "Gradient checkpointing on by default for QLoRA, as PEFT's "
        "prepare_model_for_kbit_training does; --no-checkpointing turns it off.",
    }
    return [notes[name] for name in w.defaulted if name in notes]


def _set_member(workload: Workload, field: str, kind: type[StrEnum]) -> None:
    """The field's text made the member of `kind` (None stays None: the field's default rule)."""
    value = getattr(workload, field)
    if value is not None:
        object.__setattr__(workload, field, as_member(kind, field, value))
