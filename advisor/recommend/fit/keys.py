"""The one enumeration of make-it-fit changes and, per change, everything that is said or decided about it
by key alone: its label, its note (a str.format template, so the app can translate it; the fields are
numbers and names), whether the same model still trains the same way, and whether the app's workload
controls can apply it. The command line prints the English; the app and the PDF pass both through tr()."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class ChangeKey(StrEnum):
    CURRENT = "current"  # no change: the workload as set
    BATCH = "batch"
    ACCUMULATE = "accumulate"
    AMP_BF16 = "amp_bf16"
    AMP_FP16 = "amp_fp16"
    BF16 = "bf16"
    CHECKPOINTING = "checkpointing"
    INPLACE = "inplace"
    SGD_MOMENTUM = "sgd_momentum"
    SGD = "sgd"
    ADAM_8BIT = "adam_8bit"
    FREEZE_HALF = "freeze_half"
    FREEZE_HEAD = "freeze_head"
    SEQ_LEN = "seq_len"
    ZERO1 = "zero1"
    ZERO2 = "zero2"
    ZERO3 = "zero3"
    LORA = "lora"
    QLORA = "qlora"
    WEIGHTS_INT8 = "weights_int8"
    WEIGHTS_INT4 = "weights_int4"
    WEIGHTS_Q4_K_M = "weights_q4_k_m"
    WEIGHTS_Q8_0 = "weights_q8_0"
    KV_FP8 = "kv_fp8"
    CONTEXT = "context"
    TENSOR_PARALLEL = "tensor_parallel"
    LAYER_SPLIT = "layer_split"


@dataclass(frozen=True)
class ChangeKind:
    label: str
    note: str  # str.format template; its fields come with each measured option
    # the same model trains the same way (up to rounding); the others change what is learned (another
    # effective batch, optimizer, numerics, frozen layers, shorter context)
    same_training: bool = False
    # the app's workload controls can set it; the others belong in the training script (or more cards)
    app_control: bool = True
    # the words for inference and generation, where no backward pass runs and there are no gradients,
    # optimizer state or GradScaler (a user read "with a GradScaler" in `advisor fit --mode generate`);
    # None: the training words hold there too
    serving_label: str | None = None
    serving_note: str | None = None

    def words(self, training: bool) -> tuple[str, str]:
        """The label and the note template for a training workload, or for inference and generation."""
        if training:
            return self.label, self.note
        return self.serving_label or self.label, self.serving_note or self.note


K = ChangeKey
CHANGES: dict[ChangeKey, ChangeKind] = {
    K.CURRENT: ChangeKind("as it is", "the workload as set"),
    K.BATCH: ChangeKind(
        "smaller batch",
        "largest batch that fits: {batch} instead of {old}; fewer samples per "
        "step changes training (scale the learning rate, or accumulate gradients)",
        serving_note="largest batch that fits: {batch} instead of {old}; fewer samples at a time, "
        "each computed as before",
    ),
    K.ACCUMULATE: ChangeKind(
        "gradient accumulation",
        "{steps} steps of batch {batch} per optimizer step "
        "(effective batch {effective}); the gradients stay allocated between steps",
        same_training=True,
        serving_label="the batch in parts",
        serving_note="{steps} passes of batch {batch} one after another ({effective} in all): the same outputs",
    ),
    K.AMP_BF16: ChangeKind(
        "mixed precision (bf16 autocast)",
        "torch.autocast(dtype=torch.bfloat16): weights stay fp32, matmuls and convolutions run in bf16",
        same_training=True,
    ),
    K.AMP_FP16: ChangeKind(
        "mixed precision (fp16 autocast)",
        "torch.autocast(dtype=torch.float16) with a GradScaler: weights stay fp32",
        same_training=True,
        serving_note="torch.autocast(dtype=torch.float16): weights stay fp32, matmuls and convolutions run in fp16",
    ),
    K.BF16: ChangeKind(
        "pure bf16",
        "weights, gradients and optimizer state in bf16: watch the numerics (Kahan "
        "summation or stochastic rounding help)",
        serving_note="weights and activations in bf16 (model.to(torch.bfloat16)): check the outputs against fp32",
    ),
    K.CHECKPOINTING: ChangeKind(
        "gradient checkpointing",
        "recomputes each block in backward: {extra} more FLOPs per step ({share} of a forward)",
        same_training=True,
    ),
    K.INPLACE: ChangeKind(
        "in-place activations", "nn.ReLU(inplace=True) and friends write into their input", same_training=True
    ),
    K.SGD_MOMENTUM: ChangeKind(
        "SGD with momentum instead of Adam",
        "one momentum buffer instead of Adam's two states; may need a retuned learning rate",
    ),
    K.SGD: ChangeKind("plain SGD instead of Adam", "no optimizer state at all; may converge slower than Adam"),
    K.ADAM_8BIT: ChangeKind(
        "8-bit optimizer state",
        "bitsandbytes AdamW8bit: 1 byte per state element and an fp32 scale per 256, instead of {dtype} bytes",
        same_training=True,
    ),
    K.FREEZE_HALF: ChangeKind(
        "freeze the first half of the blocks",
        "fine-tuning: {frozen} parameters frozen (no gradients, optimizer state or saved activations for them)",
        app_control=False,
    ),
    K.FREEZE_HEAD: ChangeKind(
        "train only the last layer",
        "fine-tuning: {frozen} parameters frozen; only the last layer trains",
        app_control=False,
    ),
    K.SEQ_LEN: ChangeKind("shorter sequences", "{tokens} tokens per sample instead of {old}"),
    K.ZERO1: ChangeKind(
        "ZeRO-1 sharding",
        "on {count} cards: optimizer state sharded over them ({link})",
        same_training=True,
        app_control=False,
    ),
    K.ZERO2: ChangeKind(
        "ZeRO-2 sharding",
        "on {count} cards: optimizer state and gradients sharded over them ({link})",
        same_training=True,
        app_control=False,
    ),
    K.ZERO3: ChangeKind(
        "ZeRO-3 / FSDP sharding",
        "on {count} cards: parameters, gradients and optimizer state sharded over them ({link})",
        same_training=True,
        app_control=False,
    ),
    K.LORA: ChangeKind(
        "LoRA adapters on a frozen base",
        "fine-tuning: only rank-{rank} adapters train (gradients "
        "and optimizer state for them alone); activations are still saved through the frozen "
        "layers",
    ),
    K.QLORA: ChangeKind(
        "QLoRA (4-bit frozen base + LoRA adapters)",
        "the frozen base in 4-bit NF4 with double quantization (bitsandbytes), rank-{rank} adapters train",
    ),
    K.WEIGHTS_INT8: ChangeKind(
        "8-bit weights",
        "weights in 8 bits with per-channel scales: decode reads half the "
        "bytes of 16-bit; check the quality on your task",
    ),
    K.WEIGHTS_INT4: ChangeKind(
        "4-bit weights (GPTQ/AWQ)", "weights in 4 bits with a scale and zero per 128-weight group: some quality loss"
    ),
    K.WEIGHTS_Q4_K_M: ChangeKind(
        "4-bit weights (GGUF Q4_K_M)", "llama.cpp's 4-bit K-quant mix (about 4.8 bits per weight): some quality loss"
    ),
    K.WEIGHTS_Q8_0: ChangeKind(
        "8-bit weights (GGUF Q8_0)", "llama.cpp's 8-bit blocks (8.5 bits per weight): close to 16-bit quality"
    ),
    K.KV_FP8: ChangeKind("fp8 KV cache", "K and V cached in fp8 (vLLM --kv-cache-dtype fp8): half the cache of 16-bit"),
    K.CONTEXT: ChangeKind(
        "shorter context", "{prompt} prompt + {new} generated tokens instead of {old_prompt} + {old_new}"
    ),
    K.TENSOR_PARALLEL: ChangeKind(
        "tensor parallel",
        "on {count} cards: weights and KV cache split {count} ways, two all-reduces per layer ({link})",
        same_training=True,
        app_control=False,
    ),
    K.LAYER_SPLIT: ChangeKind(
        "layers split over cards",
        "on {count} cards: layers divided between them ({link}); "
        "a token passes each in turn, so decoding runs at about one card's speed",
        same_training=True,
        app_control=False,
    ),
}

# Changes that exclude each other: one precision, one optimizer, one way of freezing (adapters freeze the
# base), one weight format.
GROUPS: tuple[tuple[ChangeKey, ...], ...] = (
    (K.AMP_BF16, K.AMP_FP16, K.BF16),
    (K.CHECKPOINTING,),
    (K.INPLACE,),
    (K.SGD_MOMENTUM, K.SGD, K.ADAM_8BIT),
    (K.FREEZE_HALF, K.FREEZE_HEAD, K.LORA, K.QLORA),
    (K.SEQ_LEN,),
    (K.WEIGHTS_INT8, K.WEIGHTS_INT4, K.WEIGHTS_Q4_K_M, K.WEIGHTS_Q8_0),
    (K.KV_FP8,),
    (K.CONTEXT,),
)
SAME_TRAINING = frozenset(key for key, kind in CHANGES.items() if kind.same_training)
