"""Rebuilds public_vision_speed.csv and public_training_speed.csv from git clones of their sources, so every row
can be traced and re-derived (benchmarks/public_speed.py reads them).

- timm (huggingface/pytorch-image-models): every results/benchmark-*-cu*.csv at HEAD, and every deleted one at
  its last commit; the rows of the timm models that are zoo graphs (same parameter count), every input size,
  layout and torch.compile variant, with `excluded` saying why a row cannot be expressed.
- Lambda (lambdal/deeplearning-benchmark): pytorch/pytorch-train-throughput-{fp16,fp32}.csv 1-GPU rows (batch
  from pytorch-train-bs-*.csv) and the v2 1-GPU systems of pytorch-train-throughput-v2-*.csv (batch from the
  config_v2 file each system sources), columns resnet50, bert_base_squad, bert_large_squad.
- Qwen (QwenLM/Qwen2.5): docs/source/benchmark/speed_benchmark.rst at its last version, every table row
  (transformers and vLLM, batch 1, 2048 new tokens, BF16 / GPTQ-Int8 / GPTQ-Int4 / AWQ, 1-4 A100 80GB), and
  gpt-fast's README tables (typed in below from pytorch-labs/gpt-fast@c9f683ed) -> public_decode_speed.csv.
- torchtune's README speed tables (typed in below from pytorch/torchtune) -> public_finetune_speed.csv.
Run: python benchmarks/data/extract_public_speed.py TIMM_CLONE LAMBDA_CLONE QWEN25_CLONE
"""

from __future__ import annotations

import csv
import io
import re
import shlex
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
# timm name -> (zoo name, family, the zoo graph's input size, parameters in millions as timm prints them)
TIMM = {
    "resnet18": ("resnet18", "resnet", 224, 11.69),
    "resnet34": ("resnet34", "resnet", 224, 21.80),
    "resnet50": ("resnet50", "resnet", 224, 25.56),
    "resnet101": ("resnet101", "resnet", 224, 44.55),
    "resnet152": ("resnet152", "resnet", 224, 60.19),
    "vgg11": ("vgg11", "vgg", 224, 132.86),
    "vgg16": ("vgg16", "vgg", 224, 138.36),
    "vgg19": ("vgg19", "vgg", 224, 143.67),
    "densenet121": ("densenet121", "densenet", 224, 7.98),
    "efficientnet_b0": ("efficientnet_b0", "efficientnet", 224, 5.29),
    "mobilenetv2_100": ("mobilenet_v2", "mobilenet", 224, 3.50),
    "mobilenetv3_large_100": ("mobilenet_v3_large", "mobilenet", 224, 5.48),
    "mobilenetv3_small_100": ("mobilenet_v3_small", "mobilenet", 224, 2.54),
    "regnety_004": ("regnet_y_400mf", "regnet", 224, 4.34),
    "inception_v3": ("inception_v3", "inception", 299, 23.83),  # timm drops the aux head: zoo 27.16M with it
    "convnext_tiny": ("convnext_tiny", "convnext", 224, 28.59),
    "swin_tiny_patch4_window7_224": ("swin_t", "swin", 224, 28.29),
    "vit_base_patch16_224": ("vit_b_16", "vit", 224, 86.57),
    "vit_large_patch16_224": ("vit_l_16", "vit", 224, 304.33),
}
TIMM_CARDS = {
    "rtx3090": "GeForce RTX 3090",
    "rtx4090": "GeForce RTX 4090",
    "4090": "GeForce RTX 4090",
    "5090": "GeForce RTX 5090",
    "pro6000maxq": "RTX PRO 6000 Blackwell Max-Q Workstation Edition",
}
TIMM_FILE = re.compile(
    r"results/benchmark-(infer|train)-(amp|amp_bf16|bf16|fp32)-(nchw|nhwc)-pt(\d+)-(cu\d+)-"
    r"(.+?)(-dynamo)?\.csv$"
)
LAMBDA_TASKS = {
    "resnet50": ("resnet50", "", "resnet", "sgd_momentum"),
    "bert_base_squad": ("bert-base", "384", "bert", "adamw"),
    "bert_large_squad": ("bert-large", "384", "bert", "adamw"),
}
# DeepLearningExamples' BERT (PyTorch/LanguageModeling/BERT/modeling.py, BertSelfAttention.forward) computes
# attention explicitly; public_speed.py runs these rows with the workload's attention="eager"
LAMBDA_BERT_NOTE = (
    "eager attention: DeepLearningExamples' modeling.py BertSelfAttention runs matmul, scale, "
    "mask add, softmax, dropout, matmul (no SDPA)"
)
LAMBDA_V1 = {
    "Quadro RTX 8000": "Quadro RTX 8000",
    "LambdaCloud V100 16GB": "Tesla V100 SXM2 16GB",
    "RTX 3090": "GeForce RTX 3090",
    "LambdaCloud A10": "A10",
    "LambdaCloud A100 40GB PCIe": "A100 PCIe 40GB",
    "A100 80GB PCIe": "A100 PCIe 80GB",
    "A100 80GB SXM4": "A100 SXM4 80GB",
    "RTX 6000 Ada": "RTX 6000 Ada Generation",
    "RTX A6000": "RTX A6000",
    "RTX 4090": "GeForce RTX 4090",
    "H100 80GB PCIe Gen5": "H100 PCIe",
    "H100 80GB SXM5": "H100 SXM5",
}
# the same card as a row above in another host's or vendor's system: one row per card, Lambda's own
LAMBDA_V1_SAME = {
    "LambdaCloud H100 80GB PCIe Gen5",
    "Dell H100 80GB SXM5",
    "DellTexas H100 80GB SXM5",
    "SMC H100 80GB SXM5",
    "1CC H100 80GB SXM5",
    "RAIDZ1 H100 80GB SXM5",
}
# v2 (NGC pytorch:24.10-py3, pytorch/README.md): one system per card, and the config it sources
LAMBDA_V2 = {
    "LambdaOD_test_1xB200_192GB_129-213-83-251_v2": ("B200", "192GB"),
    "LambdaOD_1x_1xH100_80GB_SXM5_192-222-52-83_v2": ("H100 SXM5", "80GB"),
    "LambdaBM_ENG04_1xH200_140GB_SXM_h200_v2": ("H200 SXM", "140GB"),
}


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout


def last_commit(repo: Path, path: str, rev: str = "HEAD") -> str:
    return git(repo, "log", "-1", "--format=%H", rev, "--", path).strip()


def timm_files(repo: Path) -> list[tuple[str, str]]:
    """(path, commit) of every GPU benchmark CSV at HEAD and of every deleted one at its last commit."""
    out = [
        (p, last_commit(repo, p))
        for p in git(repo, "ls-tree", "--name-only", "HEAD", "results/").split()
        if TIMM_FILE.match(p)
    ]
    deleter = ""
    for line in git(repo, "log", "--diff-filter=D", "--format=C %H", "--name-only", "--", "results/").splitlines():
        if line.startswith("C "):
            deleter = line[2:]
        elif TIMM_FILE.match(line.strip()):
            out.append((line.strip(), last_commit(repo, line.strip(), f"{deleter}^")))
    return out


def timm_reasons(r: dict[str, str], mode: str, spec: tuple[str, str, int, float], name: re.Match[str]) -> str:
    _, prec, layout, _, _, _, dynamo = name.groups()
    zoo, _, size, params = spec
    img = int(float(r[f"{mode}_img_size"]))
    reasons = [
        f"param_count {r['param_count']}M != zoo {params}M" if abs(float(r["param_count"]) - params) > 0.01 else "",
        f"image {img}px: the zoo graph is built at {size}px" if img != size else "",
        "torch.compile (dynamo): the time model describes eager PyTorch" if dynamo else "",
        "channels_last: the workload has no memory-format setting" if layout == "nhwc" else "",
        f"{prec} weights (no autocast): not an amp run" if prec not in ("amp", "amp_bf16") else "",
        "timm inception_v3 has no aux head (zoo's runs it in training)"
        if mode == "train" and zoo == "inception_v3"
        else "",
    ]
    return "; ".join(x for x in reasons if x)


def timm_rows(repo: Path) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for path, commit in timm_files(repo):
        name = TIMM_FILE.match(path)
        assert name is not None
        mode, prec, layout, pt, cu, card, dynamo = name.groups()
        date = git(repo, "log", "-1", "--format=%cs", commit).strip()
        for r in csv.DictReader(io.StringIO(git(repo, "show", f"{commit}:{path}"))):
            if r["model"] not in TIMM:
                continue
            zoo, family, _, _ = TIMM[r["model"]]
            rows.append(
                dict(
                    model=zoo,
                    family=family,
                    mode=mode,
                    card=TIMM_CARDS[card],
                    precision={"amp_bf16": "amp_bf16", "bf16": "bf16"}.get(prec, "amp_fp16"),
                    optimizer="sgd_momentum" if mode == "train" else "",
                    batch=int(float(r[f"{mode}_batch_size"])),
                    img_size=int(float(r[f"{mode}_img_size"])),
                    samples_per_s=r[f"{mode}_samples_per_sec"],
                    step_ms=r[f"{mode}_step_time"],
                    torch=f"1.{pt[1:]}" if pt.startswith("1") else f"{pt[0]}.{pt[1]}.{pt[2:]}",
                    cuda=f"{cu[2:4]}.{cu[4:]}",
                    layout=layout,
                    compiled="yes" if dynamo else "no",
                    source_model=r["model"],
                    excluded=timm_reasons(r, mode, TIMM[r["model"]], name),
                    source=f"huggingface/pytorch-image-models@{commit[:12]}:{path} ({date})",
                )
            )
    return sorted(
        rows,
        key=lambda r: tuple(
            str(r[k])
            for k in ("mode", "card", "torch", "layout", "compiled", "precision", "family", "model", "img_size")
        ),
    )


def lambda_row(
    task: str, card: str, prec: str, batch: int, value: float, version: str, source: str, excluded: str = ""
) -> dict[str, object]:
    model, seq, family, optimizer = LAMBDA_TASKS[task]
    return dict(
        model=model,
        seq_len=seq,
        family=family,
        mode="train",
        card=card,
        precision="amp_fp16" if prec == "fp16" else "fp32",
        optimizer=optimizer,
        batch=batch,
        samples_per_s=value,
        torch=version,
        source_model=f"DeepLearningExamples {task}",
        notes="; ".join(
            n
            for n in (
                "fp32 runs in an NGC container: TF32 tensor cores on Ampere and newer" if prec == "fp32" else "",
                LAMBDA_BERT_NOTE if family == "bert" else "",
            )
            if n
        ),
        excluded=excluded,
        source=source,
    )


def lambda_v1(repo: Path, prec: str) -> list[dict[str, object]]:
    tp, bp = f"pytorch/pytorch-train-throughput-{prec}.csv", f"pytorch/pytorch-train-bs-{prec}.csv"
    tc, bc = last_commit(repo, tp), last_commit(repo, bp)
    date = git(repo, "log", "-1", "--format=%cs", tc).strip()
    batches = {r["name_gpu"]: r for r in csv.DictReader(io.StringIO(git(repo, "show", f"{bc}:{bp}")))}
    rows = []
    for r in csv.DictReader(io.StringIO(git(repo, "show", f"{tc}:{tp}"))):
        if float(r["num_gpu"]) != 1:
            continue
        gpu = r["name_gpu"]
        reason = (
            "same card as another row (another host's or vendor's system)"
            if gpu in LAMBDA_V1_SAME
            else ""
            if gpu in LAMBDA_V1
            else "card not in the catalog"
        )
        for task in LAMBDA_TASKS:
            source = (
                f"lambdal/deeplearning-benchmark@{tc[:12]}:{tp} ({date}) row '{gpu}' column {task}; "
                f"batch from {bp}@{bc[:12]}"
            )
            rows.append(
                lambda_row(
                    task,
                    LAMBDA_V1.get(gpu, gpu),
                    prec,
                    int(float(batches[gpu][task])),
                    float(r[task]),
                    "v1",
                    source,
                    reason or ("no measurement (0)" if float(r[task]) <= 0 else ""),
                )
            )
    return rows


def v2_batch(repo: Path, memory: str, task: str, prec: str) -> tuple[int, str]:
    """The batch a v2 config gives a task: --batch-size for ResNet-50, the 5th array item for BERT's script."""
    path = f"pytorch/scripts/config_v2/config_pytorch_{memory}.sh"
    commit = last_commit(repo, path)
    label = ("AMP" if task == "resnet50" else "FP16") if prec == "fp16" else "FP32"
    found = re.search(rf"PyTorch_{task}_{label}_PARAMS=\((.*?)\n\s*\)", git(repo, "show", f"{commit}:{path}"), re.S)
    assert found is not None
    items = shlex.split(found.group(1), comments=True)
    batch = items[items.index("--batch-size") + 1] if task == "resnet50" else items[4]
    return int(batch), f"{path}@{commit[:12]}"


def lambda_v2(repo: Path, prec: str) -> list[dict[str, object]]:
    tp = f"pytorch/pytorch-train-throughput-v2-{prec}.csv"
    tc = last_commit(repo, tp)
    date = git(repo, "log", "-1", "--format=%cs", tc).strip()
    rows = []
    for r in csv.DictReader(io.StringIO(git(repo, "show", f"{tc}:{tp}"))):
        system = r[""]
        if not re.search(r"_1x(B200|H100|H200|GH200)", system):
            continue  # multi-GPU systems: the figures are per card
        for task in LAMBDA_TASKS:
            source = f"lambdal/deeplearning-benchmark@{tc[:12]}:{tp} ({date}) row '{system}' column {task}"
            if system in LAMBDA_V2:
                card, memory = LAMBDA_V2[system]
                batch, config = v2_batch(repo, memory, task, prec)
                rows.append(lambda_row(task, card, prec, batch, float(r[task]), "v2", f"{source}; batch from {config}"))
            else:
                reason = (
                    "card not in the catalog" if "GH200" in system else "same card as another v2 row (another host)"
                )
                rows.append(
                    lambda_row(
                        task, "GH200" if "GH200" in system else system, prec, 0, float(r[task]), "v2", source, reason
                    )
                )
    return rows


GPT_FAST_SOURCE = "pytorch-labs/gpt-fast@c9f683edd4f8:README.md (2024-09-13) section '{}'"
GPT_FAST_NOTE = (
    "generate.py --compile, batch 1, 5-token prompt, 200 new tokens (max_new_tokens default); "
    "A100 80GB SXM power-limited to 330 W, hybrid cube mesh NVLink"
)
NOT_ZOO = "Llama-2-70B is not a zoo graph (llama-3.1-70b has another vocabulary)"
# (section, model as the README names it, card, cards, weights, tokens/s); tensor parallel across the cards
GPT_FAST = [
    ("Benchmarks", "Llama-2-7B", "A100 SXM4 80GB", 1, "bf16", 104.9),
    ("Benchmarks", "Llama-2-7B", "A100 SXM4 80GB", 1, "int8", 155.58),
    ("Benchmarks", "Llama-2-7B", "A100 SXM4 80GB", 1, "int4", 196.80),
    ("Benchmarks", "Llama-2-70B", "A100 SXM4 80GB", 1, "int8", 19.13),
    ("Benchmarks", "Llama-2-70B", "A100 SXM4 80GB", 1, "int4", 25.25),
    ("Benchmarks", "Llama-3.1-8B", "A100 SXM4 80GB", 1, "bf16", 93.89),
    ("Benchmarks", "Llama-3.1-8B", "A100 SXM4 80GB", 1, "int8", 137.64),
    ("Benchmarks", "Llama-3.1-70B", "A100 SXM4 80GB", 1, "int8", 18.04),
    *[
        ("Tensor Parallelism", m, "A100 SXM4 80GB", n, "bf16", v)
        for m, n, v in (
            ("Llama-2-7B", 2, 168.84),
            ("Llama-2-7B", 4, 254.02),
            ("Llama-2-7B", 8, 328.43),
            ("Llama-2-70B", 2, 21.32),
            ("Llama-2-70B", 4, 38.01),
            ("Llama-2-70B", 8, 62.50),
            ("Llama-3.1-8B", 2, 149.10),
            ("Llama-3.1-8B", 4, 217.21),
            ("Llama-3.1-8B", 8, 276.01),
            ("Llama-3.1-70B", 2, 16.03),
            ("Llama-3.1-70B", 4, 37.45),
            ("Llama-3.1-70B", 8, 58.78),
        )
    ],
    *[
        ("Tensor Parallelism + Quantization", m, "A100 SXM4 80GB", 8, w, v)
        for m, w, v in (
            ("Llama-2-70B", "int8", 80.44),
            ("Llama-2-70B", "int4", 90.77),
            ("Llama-3.1-70B", "int8", 75.58),
            ("Llama-3.1-405B", "int8", 15.60),
        )
    ],
    ("Mixtral 8x7B", "Mixtral-8x7B", "A100 SXM4 80GB", 1, "int8", 97.92),
    *[
        ("Mixtral 8x7B", "Mixtral-8x7B", "A100 SXM4 80GB", n, w, v)
        for w, n, v in (
            ("bf16", 2, 96.67),
            ("bf16", 4, 155.35),
            ("bf16", 8, 227.82),
            ("int8", 2, 155.03),
            ("int8", 4, 216.87),
            ("int8", 8, 279.35),
        )
    ],
    ("AMD", "Llama-2-7B", "Instinct MI250X", 1, "bf16", 76.33),
    ("AMD", "Llama-2-7B", "Instinct MI250X", 1, "int8", 101.86),
]
GPT_FAST_ZOO = {
    "Llama-2-7B": "llama-7b",
    "Llama-3.1-8B": "llama-3.1-8b",
    "Llama-3.1-70B": "llama-3.1-70b",
    "Llama-3.1-405B": "llama-3.1-405b",
    "Mixtral-8x7B": "mixtral-8x7b",
}
QWEN_PATH = "docs/source/benchmark/speed_benchmark.rst"
QWEN_WEIGHTS = {
    "BF16": ("bf16", "bf16"),
    "GPTQ-Int8": ("int8", "fp16"),
    "GPTQ-Int4": ("int4", "fp16"),
    "AWQ": ("int4", "fp16"),
}  # (weights, activations): AutoGPTQ / AutoAWQ kernels run fp16


def decode_row(
    model: str,
    source_model: str,
    engine: str,
    card: str,
    cards: int,
    parallel: str,
    weights: str,
    precision: str,
    prompt: int,
    new: int,
    tokens_per_s: float,
    notes: str,
    source: str,
    excluded: str = "",
) -> dict[str, object]:
    """tokens_per_s is new tokens over the whole generate() call, prefill included (both sources' scripts)."""
    return dict(
        model=model,
        source_model=source_model,
        engine=engine,
        card=card,
        count=cards,
        tensor_ways=cards if parallel == "tensor" else 1,
        stages=cards if parallel == "layers" else 1,
        weights=weights,
        precision=precision,
        batch=1,
        prompt_len=prompt,
        new_tokens=new,
        tokens_per_s=tokens_per_s,
        notes=notes,
        excluded=excluded,
        source=source,
    )


def gpt_fast_rows() -> list[dict[str, object]]:
    return [
        decode_row(
            GPT_FAST_ZOO.get(model, ""),
            model,
            "gpt-fast",
            card,
            n,
            "tensor",
            weights,
            "bf16",
            5,
            200,
            value,
            GPT_FAST_NOTE if card.startswith("A100") else "one GCD of an MI250X",
            GPT_FAST_SOURCE.format(section),
            "" if model in GPT_FAST_ZOO else NOT_ZOO,
        )
        for section, model, card, n, weights, value in GPT_FAST
    ]


def qwen_rows(repo: Path) -> list[dict[str, object]]:
    """Every row of the Qwen2.5 speed tables; blank Model / Input Length cells continue the row above."""
    commit = git(repo, "log", "-1", "--format=%H", "--diff-filter=AM", "--", QWEN_PATH).strip()
    source = f"QwenLM/Qwen2.5@{commit[:12]}:{QWEN_PATH} ({git(repo, 'log', '-1', '--format=%cs', commit).strip()})"
    rows, table, header, model, length = [], "", [], "", ""
    settings = dict(
        re.findall(
            r"\[(Setting[- ]?\w*|Default Setting|new sample config)\]=?:?\s*(.+)",
            git(repo, "show", f"{commit}:{QWEN_PATH}"),
        )
    )
    for line in git(repo, "show", f"{commit}:{QWEN_PATH}").splitlines():
        title = re.match(r"^-\s+(\S+) \((Transformer|vLLM)\)", line)
        if title:
            table, model, length = f"{title.group(1)} ({title.group(2)})", "", ""
        if not line.startswith("|"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells[0] == "Model":
            header = cells
            continue
        r = dict(zip(header, cells, strict=True))
        model, length = r["Model"] or model, r["Input Length"] or length
        weights, precision = QWEN_WEIGHTS[r["Quantization"]]
        engine = "vLLM" if "vLLM" in table else "transformers"
        note = r.get("Note", "")
        setting = next(
            (v for k, v in settings.items() if note and note.lower().replace(" ", "-") in k.lower().replace(" ", "-")),
            "",
        )
        rows.append(
            decode_row(
                model.removesuffix("-Instruct").lower(),
                model,
                engine,
                "A100 SXM4 80GB",
                int(r["GPU Num"]),
                "tensor" if engine == "vLLM" else "layers",
                weights,
                precision,
                int(length),
                2048,
                float(r["Speed(tokens/s)"]),
                "; ".join(x for x in ("NVIDIA A100 80GB (form factor not stated: SXM4 taken)", note, setting) if x),
                f"{source} table '{table}'",
            )
        )
    return rows


TT_OLD = (
    "pytorch/torchtune@ca0a6de40c17:README.md (2024-09-03; table since 0217d44c2, 2024-05-09) "
    "'peak memory usage and training speed', row {}"
)
TT_EPOCH = (
    "pytorch/torchtune@30b8519e86d2:README.md (2024-09-24; unchanged at bd2a0fc7c314, 2026-04-23) "
    "'Tokens/sec' table, row {}"
)
UNPACKED = "tokens/s over one epoch of unpacked alpaca: per-step sequence lengths are not published"
TT_FLAGS = "pytorch/torchtune@1814feb17a90:README.md (2024-11-18) 'Optimization flags', row {}"
LLAMA2_LORA = ("lora", 8, "q_proj;v_proj")  # recipes/configs/llama2/7B_lora_single_device.yaml at 0217d44c2
# (source, row, model, seq, card, cards, batch, finetune, checkpointing, tokens/s, note, excluded)
TORCHTUNE = [
    (
        TT_OLD,
        "1 x RTX 4090 LoRA",
        "llama-7b",
        2048,
        "GeForce RTX 4090",
        1,
        4,
        LLAMA2_LORA,
        True,
        2582,
        "Llama2-7B, batch 4, seq 2048, bf16, AdamW, activation checkpointing (the config's default)",
        "",
    ),
    (
        TT_OLD,
        "1 x RTX 4090 QLoRA",
        "llama-7b",
        2048,
        "GeForce RTX 4090",
        1,
        4,
        ("qlora", 8, "q_proj;v_proj"),
        True,
        3155,
        "",
        "torch.compile (the table's note **): the time model describes eager PyTorch",
    ),
    (
        TT_OLD,
        "1 x RTX 4090 Full finetune",
        "llama-7b",
        2048,
        "GeForce RTX 4090",
        1,
        4,
        ("full", 0, ""),
        True,
        702,
        "7B_full_low_memory.yaml: optimizer_in_bwd",
        "bitsandbytes PagedAdamW (the table's note *): its state pages to "
        "host memory when the card is full (24.1 GB peak on a 24 GB card), and the workload has no such optimizer",
    ),
    (
        TT_OLD,
        "2 x RTX 4090 LoRA",
        "llama-7b",
        2048,
        "GeForce RTX 4090",
        2,
        4,
        LLAMA2_LORA,
        True,
        2768,
        "",
        "FSDP over 2 cards: the stable API times one card",
    ),
    (
        TT_OLD,
        "4 x RTX 4090 Full finetune",
        "llama-7b",
        2048,
        "GeForce RTX 4090",
        4,
        4,
        ("full", 0, ""),
        True,
        1388,
        "",
        "FSDP over 4 cards: the stable API times one card",
    ),
    (
        TT_OLD,
        "8 x A100 LoRA",
        "",
        4096,
        "A100 SXM4 80GB",
        8,
        4,
        ("lora", 0, ""),
        True,
        3384,
        "",
        "Llama2-70B is not a zoo graph; FSDP over 8 cards",
    ),
    (
        TT_OLD,
        "8 x A100 Full Finetune",
        "",
        4096,
        "A100 SXM4 80GB",
        8,
        4,
        ("full", 0, ""),
        True,
        2032,
        "",
        "Llama2-70B is not a zoo graph; FSDP over 8 cards",
    ),
    (
        TT_FLAGS,
        "+ Packed Dataset",
        "llama-3.2-3b",
        4096,
        "A100 SXM4 80GB",
        1,
        2,
        ("full", 0, ""),
        False,
        7075,
        "Llama 3.2 3B full_finetune_single_device, batch 2, packed to 4096, bf16, AdamW; A100 (80GB: 60 GiB peak; "
        "form factor not stated, SXM4 taken)",
        "",
    ),
    *[
        (
            TT_FLAGS,
            row,
            "llama-3.2-3b",
            4096,
            "A100 SXM4 80GB",
            1,
            2,
            ft,
            ckpt,
            value,
            "",
            "torch.compile (on from the '+ Compile' row down): the time model describes eager PyTorch",
        )
        for row, ft, ckpt, value in (
            ("+ Compile", ("full", 0, ""), False, 8998),
            ("+ Chunked Cross Entropy", ("full", 0, ""), False, 9174),
            ("+ Activation Checkpointing", ("full", 0, ""), True, 7210),
            ("LoRA", ("lora", 64, "q_proj;v_proj;o_proj;gate_proj;up_proj;down_proj"), True, 8210),
            ("QLoRA", ("qlora", 64, "q_proj;v_proj;o_proj;gate_proj;up_proj;down_proj"), True, 8035),
        )
    ],
    *[
        (
            TT_EPOCH,
            row,
            model,
            0,
            card,
            cards,
            2,
            (ft, 0, ""),
            True,
            value,
            "",
            UNPACKED + ("" if cards == 1 else f"; FSDP over {cards} cards"),
        )
        for row, model, card, cards, ft, value in (
            ("Llama 3.1 8B Full finetune 1x 4090", "llama-3.1-8b", "GeForce RTX 4090", 1, "full", 1650),
            ("Llama 3.1 8B Full finetune 1x A6000", "llama-3.1-8b", "RTX A6000", 1, "full", 2579),
            ("Llama 3.1 8B LoRA 1x 4090", "llama-3.1-8b", "GeForce RTX 4090", 1, "lora", 3083),
            ("Llama 3.1 8B LoRA 1x A6000", "llama-3.1-8b", "RTX A6000", 1, "lora", 4699),
            ("Llama 3.1 8B QLoRA 1x 4090", "llama-3.1-8b", "GeForce RTX 4090", 1, "qlora", 2413),
            ("Llama 3.1 70B Full finetune 8x A100", "llama-3.1-70b", "A100 SXM4 80GB", 8, "full", 1568),
            ("Llama 3.1 70B LoRA 8x A100", "llama-3.1-70b", "A100 SXM4 80GB", 8, "lora", 3497),
            ("Llama 3.1 405B QLoRA 8x A100", "llama-3.1-405b", "A100 SXM4 80GB", 8, "qlora", 653),
        )
    ],
    (
        TT_FLAGS,
        "Baseline",
        "llama-3.2-3b",
        4096,
        "A100 SXM4 80GB",
        1,
        2,
        ("full", 0, ""),
        False,
        2091,
        "",
        "unpacked alpaca: per-step sequence lengths vary below the 4096 maximum and are not published",
    ),
]


def torchtune_rows() -> list[dict[str, object]]:
    """tokens/s as published; samples_per_s = tokens/s / seq (every sequence is seq tokens long)."""
    rows: list[dict[str, object]] = []
    for source, row, model, seq, card, cards, batch, (
        finetune,
        rank,
        targets,
    ), checkpointing, tps, note, why in TORCHTUNE:
        rows.append(
            dict(
                model=model,
                seq_len=seq or "",
                family="llama",
                mode="train",
                card=card,
                precision="bf16",
                optimizer="adamw",
                batch=batch,
                checkpointing="yes" if checkpointing else "",
                finetune=finetune,
                lora_rank=rank or "",
                lora_targets=targets,
                tokens_per_s=tps,
                samples_per_s=round(tps / seq, 4) if seq else "",
                torch="",
                source_model=row,
                notes=note,
                excluded=why or ("" if cards == 1 else f"{cards} cards"),
                source=source.format(repr(row)),
            )
        )
    return rows


def write(name: str, rows: list[dict[str, object]]) -> None:
    with (HERE / name).open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    print(f"{name}: {len(rows)} rows, {sum(1 for r in rows if not r['excluded'])} expressible")


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    timm, lambdal, qwen = Path(argv[0]), Path(argv[1]), Path(argv[2])
    write("public_vision_speed.csv", timm_rows(timm))
    write(
        "public_training_speed.csv",
        [row for prec in ("fp16", "fp32") for row in lambda_v1(lambdal, prec)]
        + [row for prec in ("fp16", "fp32") for row in lambda_v2(lambdal, prec)],
    )
    write("public_decode_speed.csv", gpt_fast_rows() + qwen_rows(qwen))
    write("public_finetune_speed.csv", torchtune_rows())
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
