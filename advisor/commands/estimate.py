"""`advisor estimate SPEC`: memory and compute of one training step or inference pass."""

from __future__ import annotations

import argparse
import json

from advisor.commands import types
from advisor.core import zoo
from advisor.core.errors import SpecError
from advisor.core.formatting import render_text, to_json
from advisor.core.workload import (
    LORA_EXTRA_TARGETS,
    LORA_TARGETS,
    AttentionImpl,
    Finetune,
    KVCacheFormat,
    LossImpl,
    Mode,
    Offload,
    OptimizerName,
    Precision,
    Runtime,
    WeightFormat,
    Workload,
    recipe_defaults,
)
from advisor.core.zoo import library
from advisor.importers.spec_estimate import METHODS, estimate_spec


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def add_workload_options(parser: argparse.ArgumentParser) -> None:
    """The options every command that estimates shares (estimate, recommend, report)."""
    parser.add_argument(
        "spec",
        nargs="?",
        help="zoo:NAME, or a model file (see DESIGN.md); a FILE.py is Python "
        "code and runs, every other file is read as data",
    )
    parser.add_argument("--mode", choices=[m.value for m in Mode], default="train")
    parser.add_argument("--batch", type=types.batch_size, default=32, help="samples per step (per card)")
    parser.add_argument("--seq-len", type=types.sequence_length, default=None, help="tokens per sample")
    parser.add_argument(
        "--precision",
        choices=[m.value for m in Precision],
        default=None,
        help="default fp32; bf16 when generating from quantized weights",
    )
    parser.add_argument("--optimizer", choices=[m.value for m in OptimizerName], default="adam")
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
    parser.add_argument("--prompt-len", type=positive_int, default=512, help="generate: prompt tokens (prefill)")
    parser.add_argument(
        "--new-tokens", type=positive_int, default=128, help="generate: tokens generated per sequence (decode)"
    )
    parser.add_argument(
        "--weights",
        choices=[m.value for m in WeightFormat],
        default=None,
        help="how the weights are stored (default: the precision's dtype)",
    )
    parser.add_argument(
        "--kv-cache",
        choices=[k.value for k in KVCacheFormat],
        default=None,
        help="generate: KV-cache storage (default: the compute dtype)",
    )
    parser.add_argument(
        "--finetune",
        choices=[m.value for m in Finetune],
        default="full",
        help="train all weights, or LoRA adapters on a frozen base (QLoRA: nf4 base)",
    )
    parser.add_argument(
        "--runtime",
        choices=[r.value for r in Runtime],
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
        default=0.9,
        metavar="F",
        help="vllm: the share of the card's memory the engine claims (vLLM's default 0.9)",
    )
    parser.add_argument(
        "--max-num-seqs",
        type=positive_int,
        default=256,
        metavar="N",
        help="vllm: sequences per step; its startup profile samples that many (vLLM's default 256, "
        "1024 for V1 on cards of 70 GiB or more other than the A100)",
    )
    parser.add_argument(
        "--max-num-batched-tokens",
        type=positive_int,
        default=8192,
        metavar="N",
        help="vllm: tokens of its startup profile's forward (default 8192; vLLM before chunked prefill, "
        "0.2-0.5, used max(max_model_len, 2048))",
    )
    parser.add_argument(
        "--expandable-segments",
        action="store_true",
        help="PyTorch's allocator runs with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True",
    )
    parser.add_argument(
        "--drop-logits",
        action="store_true",
        help="train: the loop drops the model's output before backward, as transformers' Trainer and "
        "torchtune's recipes do (default: kept until the step ends, as a plain loop keeps it)",
    )
    parser.add_argument(
        "--attention",
        choices=[a.value for a in AttentionImpl],
        default=None,
        help="attention implementation (default: the model's, sdpa where it has it)",
    )
    parser.add_argument(
        "--offload",
        choices=[o.value for o in Offload],
        default=None,
        help="train: keep the optimizer state (params: also the weights) in system RAM, as "
        "DeepSpeed ZeRO-Offload / FSDP CPU offload do",
    )
    parser.add_argument(
        "--loss",
        choices=[loss.value for loss in LossImpl],
        default="standard",
        help="train: fused computes the LM head and cross-entropy chunk by chunk (Liger, Cut "
        "Cross-Entropy): no full logits",
    )
    parser.add_argument("--lora-rank", type=positive_int, default=16, help="LoRA rank r")
    parser.add_argument(
        "--lora-targets",
        type=lora_targets,
        default=(),
        help=f"comma-separated layers to adapt (default: all of {','.join(LORA_TARGETS)}; "
        "lm_head and embed_tokens when named)",
    )


def workload_from(args: argparse.Namespace) -> Workload:
    precision, checkpointing, defaulted = recipe_defaults(
        args.mode, args.weights, args.finetune, args.precision, args.checkpointing
    )
    return Workload(
        args.mode,
        args.batch,
        precision,
        args.optimizer,
        checkpointing,
        prompt_len=args.prompt_len,
        new_tokens=args.new_tokens,
        weights=args.weights,
        kv_cache=args.kv_cache,
        finetune=args.finetune,
        lora_rank=args.lora_rank,
        lora_targets=args.lora_targets,
        tf32=args.tf32,
        defaulted=defaulted,
        runtime=Runtime(args.runtime) if args.runtime else None,
        gpu_layers=args.gpu_layers,
        attention=args.attention,
        offload=args.offload,
        loss=args.loss,
        gpu_memory_utilization=args.gpu_memory_utilization,
        max_num_seqs=args.max_num_seqs,
        max_num_batched_tokens=args.max_num_batched_tokens,
        expandable_segments=args.expandable_segments,
        drops_logits=args.drop_logits,
    )


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
