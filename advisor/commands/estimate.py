"""`advisor estimate SPEC`: memory and compute of one training step or inference pass."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from dataclasses import replace
from typing import TypeVar

from advisor.commands import types
from advisor.core import zoo
from advisor.core.errors import SpecError
from advisor.core.formatting import render_text, to_json
from advisor.core.workload import (
    LORA_EXTRA_TARGETS,
    LORA_TARGETS,
    AdapterDtype,
    AttentionImpl,
    Finetune,
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
    Workload,
    recipe_defaults,
)
from advisor.core.zoo import library
from advisor.importers.spec_estimate import METHODS, estimate_spec
from advisor.importers.torch_loader import TORCH_PREFIXES, TORCH_SUFFIXES

T = TypeVar("T")


def positive_int(text: str, high: int | None = None) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    if high is not None and value > high:  # --prompt-len 99999999999 printed 5e15 TFLOPs of prefill
        raise argparse.ArgumentTypeError(f"must be at most {high:,}, got {value:,}")
    return value


def _tokens(text: str) -> int:
    return positive_int(text, types.MAX_SEQ_LEN)


def _sequences(text: str) -> int:
    return positive_int(text, types.MAX_BATCH)


def add_workload_options(parser: argparse.ArgumentParser) -> None:
    """The options every command that estimates shares (estimate, recommend, report)."""
    parser.add_argument(
        "spec",
        nargs="?",
        # the forms themselves: DESIGN.md, named here before, is not in an installed package
        help="zoo:NAME (`advisor estimate --list` shows them), hf:CONFIG.json or hf:ORG/NAME, torchvision:NAME, "
        "timm:NAME, or a model file (.py, .pt2, .pt, .pth, .bin, .onnx, .safetensors, .json, .gguf); a FILE.py "
        "is Python code and runs, every other file is read as data",
    )
    parser.add_argument("--mode", choices=types.choices_of(Mode), default="train")
    parser.add_argument("--batch", type=types.batch_size, default=32, help="samples per step (per card)")
    parser.add_argument("--seq-len", type=types.sequence_length, default=None, help="tokens per sample")
    parser.add_argument(
        "--precision",
        choices=types.choices_of(Precision),
        default=None,
        help="default fp32; bf16 when generating (--weights fp32 keeps fp32)",
    )
    parser.add_argument(
        "--optimizer", choices=types.choices_of(OptimizerName), default=None, help="train: adam unless given"
    )
    parser.add_argument(
        "--checkpointing",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="gradient checkpointing per block (default: on for --finetune qlora, else off)",
    )
    parser.add_argument(
        "--tf32",
        action="store_true",
        help="fp32 matmuls on TF32 tensor cores "
        "(torch.backends.cuda.matmul.allow_tf32; convolutions use TF32 by default)",
    )
    _add_llm_options(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--method",
        choices=METHODS,
        default="auto",
        help="auto: simulate PyTorch modules (FILE.py, torchvision:, timm:, hf:), else analytic",
    )
    parser.add_argument(
        "--trust-pickle",
        action="store_true",
        help="let a model file run the code it carries: a whole pickled model (.pt/.pth), the "
        "pickled parts of a .pt2, TorchScript code that reaches files; only for files you trust",
    )


def lora_targets(text: str) -> tuple[str, ...]:
    names = tuple(name.strip() for name in text.split(",") if name.strip())
    unknown = [name for name in names if name not in (*LORA_TARGETS, *LORA_EXTRA_TARGETS)]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"unknown {', '.join(unknown) or 'empty list'}; "
            f"choose from {','.join((*LORA_TARGETS, *LORA_EXTRA_TARGETS))}"
        )
    return names


def _add_llm_options(parser: argparse.ArgumentParser) -> None:
    """Language models: generation with a KV cache, quantized storage, LoRA/QLoRA fine-tuning."""
    parser.add_argument("--prompt-len", type=_tokens, default=None, help="generate: prompt tokens (prefill; 512)")
    parser.add_argument(
        "--new-tokens", type=_tokens, default=None, help="generate: tokens generated per sequence (decode; 128)"
    )
    parser.add_argument(
        "--weights",
        choices=types.choices_of(WeightFormat),
        default=None,
        help="how the weights are stored (default: the precision's dtype)",
    )
    parser.add_argument(
        "--kv-cache",
        choices=types.choices_of(KVCacheFormat),
        default=None,
        help="generate: KV-cache storage (default: the compute dtype)",
    )
    parser.add_argument(
        "--finetune",
        choices=types.choices_of(Finetune),
        default="full",
        help="train all weights, or LoRA adapters on a frozen base (QLoRA: nf4 base)",
    )
    parser.add_argument(
        "--runtime",
        choices=types.choices_of(Runtime),
        default=None,
        help="generate: what runs it (default: llama.cpp for GGUF weights, else transformers)",
    )
    parser.add_argument(
        "--gpu-layers",
        "-ngl",
        type=types.layer_count,
        default=None,
        metavar="N",
        help="llama.cpp: repeating layers offloaded to the GPU (default: all and the output)",
    )
    parser.add_argument(
        "--gpu-memory-utilization",
        type=types.positive_number(1.0),
        default=None,
        metavar="F",
        help="vllm: the share of the card's memory the engine claims (vLLM's default 0.9)",
    )
    parser.add_argument(
        "--max-num-seqs",
        type=_sequences,
        default=None,
        metavar="N",
        help="vllm: sequences per step; its startup profile samples that many (vLLM's default 256, "
        "1024 for V1 on cards of 70 GiB or more other than the A100)",
    )
    parser.add_argument(
        "--max-num-batched-tokens",
        type=positive_int,
        default=None,
        metavar="N",
        help="vllm: tokens of its startup profile's forward (default 8192; vLLM before chunked prefill, "
        "0.2-0.5, used max(max_model_len, 2048))",
    )
    parser.add_argument(
        "--enforce-eager",
        action="store_true",
        default=None,
        help="vllm: run the model eagerly, capturing no CUDA graphs (no graph memory)",
    )
    parser.add_argument(
        "--vllm-version",
        choices=types.choices_of(VLLMRelease),
        default=None,
        help="vllm: the release whose startup to follow: 0.19 (0.17-0.19, the default: the sampler masks "
        "top-k/top-p without sorting; CUDA graphs and the sampler warm-up come after the share) or 0.16 "
        "(V0 and V1 up to 0.16: the profile sorts max_num_seqs vocabulary rows)",
    )
    parser.add_argument(
        "--transformers-version",
        choices=types.choices_of(TransformersRelease),
        default=None,
        help="train: the transformers release whose causal-LM loss to follow: 5 (the default: the loss "
        "upcasts a copy of the logits, the output keeps them in 16 bits) or 4.45 (up to 4.45: the output "
        "keeps fp32 logits, and the loss reads a shifted fp32 copy)",
    )
    parser.add_argument(
        "--expandable-segments",
        action="store_true",
        help="PyTorch's allocator runs with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True",
    )
    parser.add_argument(
        "--drop-logits",
        action="store_true",
        default=None,  # None: not given, so that refuse_inapplicable can tell it was
        help="train: the loop drops the model's output before backward, as transformers' Trainer and "
        "torchtune's recipes do (default: kept until the step ends, as a plain loop keeps it)",
    )
    parser.add_argument(
        "--attention",
        choices=types.choices_of(AttentionImpl),
        default=None,
        help="attention implementation (default: the model's, sdpa where it has it)",
    )
    parser.add_argument(
        "--offload",
        choices=types.choices_of(Offload),
        default=None,
        help="train: keep the optimizer state (params: also the weights) in system RAM, as "
        "DeepSpeed ZeRO-Offload / FSDP CPU offload do",
    )
    parser.add_argument(
        "--loss",
        choices=types.choices_of(LossImpl),
        default=None,
        help="train: fused computes the LM head and cross-entropy chunk by chunk (Liger, Cut "
        "Cross-Entropy): no full logits",
    )
    parser.add_argument("--lora-rank", type=positive_int, default=None, help="LoRA rank r (16)")
    parser.add_argument(
        "--lora-targets",
        type=lora_targets,
        default=None,
        help=f"comma-separated layers to adapt (default: all of {','.join(LORA_TARGETS)}; "
        "lm_head and embed_tokens when named)",
    )
    parser.add_argument(
        "--adapter-dtype",
        choices=types.choices_of(AdapterDtype),
        default=None,
        help="LoRA adapters on a 16-bit base: fp32 as PEFT upcasts them (default), or base: the base's dtype, "
        "as torchtune makes them and FSDP's mixed precision casts them",
    )


def _given(args: argparse.Namespace, dest: str, default: T) -> T:
    value = getattr(args, dest)
    return default if value is None else value


def _runtime(args: argparse.Namespace) -> Runtime | None:
    """The --runtime given; with -ngl on a .gguf file, llama.cpp, the file's own runtime. The workload only
    learns the file's format later (importers/stored_estimate.py), so `estimate model.gguf --mode generate
    -ngl 20` was refused as "-ngl is a llama.cpp option"."""
    if args.runtime:
        return Runtime(args.runtime)
    gguf = (args.spec or "").lower().endswith(".gguf")
    if gguf and args.gpu_layers is not None and args.weights is None and args.mode == "generate":
        return Runtime.LLAMA_CPP
    return None


def workload_from(args: argparse.Namespace) -> Workload:
    precision, checkpointing, defaulted = recipe_defaults(
        args.mode, args.weights, args.finetune, args.precision, args.checkpointing
    )
    base = Workload()  # the defaults of the options left unset are the Workload's own
    workload = Workload(
        args.mode,
        args.batch,
        precision,
        _given(args, "optimizer", base.optimizer),
        checkpointing,
        prompt_len=_given(args, "prompt_len", base.prompt_len),
        new_tokens=_given(args, "new_tokens", base.new_tokens),
        weights=args.weights,
        kv_cache=args.kv_cache,
        finetune=args.finetune,
        lora_rank=_given(args, "lora_rank", base.lora_rank),
        lora_targets=_given(args, "lora_targets", base.lora_targets),
        adapter_dtype=_given(args, "adapter_dtype", base.adapter_dtype),
        tf32=args.tf32,
        defaulted=defaulted,
        runtime=_runtime(args),
        gpu_layers=args.gpu_layers,
        attention=args.attention,
        loss=_given(args, "loss", base.loss),
        gpu_memory_utilization=_given(args, "gpu_memory_utilization", base.gpu_memory_utilization),
        max_num_seqs=_given(args, "max_num_seqs", base.max_num_seqs),
        max_num_batched_tokens=_given(args, "max_num_batched_tokens", base.max_num_batched_tokens),
        enforce_eager=_given(args, "enforce_eager", base.enforce_eager),
        vllm_version=_given(args, "vllm_version", base.vllm_version),
        transformers_version=_given(args, "transformers_version", base.transformers_version),
        expandable_segments=args.expandable_segments,
    )
    refuse_inapplicable(args, workload)
    # the training loop's options join once refused by flag: the Workload refuses them outside training too,
    # but by its field's name (drops_logits), which the user never typed
    return replace(workload, offload=args.offload, drops_logits=bool(args.drop_logits))


# (option, its dest, what it applies to, whether it does for this workload). Given where it does not apply, an
# option used to be dropped without a word: `--mode generate --seq-len 100` ran 512 + 128 tokens,
# `--finetune full --lora-rank 8` trained every weight, `--kv-cache fp8` on a training step changed nothing.
_APPLIES: tuple[tuple[str, str, str, Callable[[Workload], bool]], ...] = (
    (
        "--seq-len",
        "seq_len",
        "--mode train or infer; generation takes --prompt-len and --new-tokens",
        lambda w: not w.generating,
    ),
    ("--prompt-len", "prompt_len", "--mode generate; training and inference take --seq-len", lambda w: w.generating),
    ("--new-tokens", "new_tokens", "--mode generate", lambda w: w.generating),
    ("--kv-cache", "kv_cache", "--mode generate", lambda w: w.generating),
    ("--optimizer", "optimizer", "--mode train", lambda w: w.mode == Mode.TRAIN),
    ("--checkpointing", "checkpointing", "--mode train", lambda w: w.mode == Mode.TRAIN or not w.checkpointing),
    ("--loss", "loss", "--mode train", lambda w: w.mode == Mode.TRAIN),
    ("--drop-logits", "drop_logits", "--mode train", lambda w: w.mode == Mode.TRAIN),
    ("--offload", "offload", "--mode train", lambda w: w.mode == Mode.TRAIN),
    ("--finetune", "finetune", "--mode train", lambda w: w.mode == Mode.TRAIN or w.finetune == Finetune.FULL),
    ("--lora-rank", "lora_rank", "--finetune lora or qlora", lambda w: w.finetune != Finetune.FULL),
    ("--lora-targets", "lora_targets", "--finetune lora or qlora", lambda w: w.finetune != Finetune.FULL),
    ("--adapter-dtype", "adapter_dtype", "--finetune lora or qlora", lambda w: w.finetune != Finetune.FULL),
    ("--gpu-memory-utilization", "gpu_memory_utilization", "--runtime vllm", lambda w: w.runtime_used == Runtime.VLLM),
    ("--max-num-seqs", "max_num_seqs", "--runtime vllm", lambda w: w.runtime_used == Runtime.VLLM),
    ("--max-num-batched-tokens", "max_num_batched_tokens", "--runtime vllm", lambda w: w.runtime_used == Runtime.VLLM),
    ("--enforce-eager", "enforce_eager", "--runtime vllm", lambda w: w.runtime_used == Runtime.VLLM),
    ("--vllm-version", "vllm_version", "--runtime vllm", lambda w: w.runtime_used == Runtime.VLLM),
    ("--transformers-version", "transformers_version", "--mode train", lambda w: w.mode == Mode.TRAIN),
)


def refuse_inapplicable(args: argparse.Namespace, workload: Workload) -> None:
    """One line naming an option the user gave that this workload would ignore."""
    for flag, dest, scope, applies in _APPLIES:
        if getattr(args, dest, None) is not None and not applies(workload):
            raise SpecError(f"{flag}: applies only to {scope}")
    spec = args.spec or ""
    # a PyTorch file's example_inputs (or its exported or traced graph) fix the shapes: `estimate mlp.py
    # --seq-len 10` ran the file's own. The app passes its sequence box to every import, so the check is here.
    if args.seq_len is not None and spec.lower().endswith(TORCH_SUFFIXES) and not spec.startswith(TORCH_PREFIXES):
        raise SpecError(f"--seq-len: {spec} sets its own tokens per sample (its example inputs); leave --seq-len out")


def register(parser: argparse.ArgumentParser) -> None:
    """Configures the subcommand's parser, which advisor/cli.py made (with its one-line help)."""
    add_workload_options(parser)
    parser.add_argument(
        "--list",
        nargs="?",
        const="",
        default=None,
        metavar="QUERY",
        help="list the built-in zoo models; a QUERY keeps those matching every word: part of the "
        "name, family or Hub repository, moe/dense, or a size (8b, <10b, >=100b)",
    )
    parser.set_defaults(func=run)


def print_list(query: str) -> None:
    """One zoo:NAME a line; a library LLM adds its family, published size and Hub repository."""
    names = library.search(query, zoo.zoo_names())
    if not names:
        raise SpecError(f"--list: no zoo model matches {query!r}")
    for name in names:
        found = library.entry(name)
        print(f"zoo:{name}" if found is None else f"zoo:{name:<32} {found.family:<20} {found.size:>6}  {found.hf_repo}")


def run(args: argparse.Namespace) -> int:
    if args.list is not None:
        print_list(args.list)
        return 0
    if not args.spec:
        raise SpecError("a model SPEC is required (e.g. zoo:resnet50)")
    result = estimate_spec(
        args.spec, workload_from(args), seq_len=args.seq_len, trust_pickle=args.trust_pickle, method=args.method
    )
    if args.json:
        print(json.dumps(to_json(result), indent=1))
    else:
        print(render_text(result), end="")
    return 0
