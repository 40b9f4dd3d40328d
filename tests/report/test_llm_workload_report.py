"""The PDF says what an LLM workload is: generation with its prompt, new tokens, weight and KV-cache formats;
QLoRA by name; split plans in words (it printed "Mode: Inference", "ZeRO-tensor_parallel", and no QLoRA)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from report_support import make_report, pdf_text, words

from advisor.cli import main
from advisor.core.units import format_bytes
from advisor.core.workload import Workload
from advisor.recommend.present import plan_label
from advisor.recommend.ranking import RankingOptions
from advisor.report.model_pages import plan_label as report_plan_label
from advisor.report.pdf import html_parts


def _text(html: list[str]) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", " ".join(html)))


def test_a_generation_report_names_the_mode_the_tokens_and_the_formats(catalog_path: Path) -> None:
    workload = Workload("generate", 4, "bf16", prompt_len=1000, new_tokens=256, weights="int4", kv_cache="fp8")
    report = make_report(catalog_path, "zoo:llama-3.2-1b", workload, options=RankingOptions(counts=(1, 2)), gpus=False)
    text = _text(html_parts(report, str))
    assert "Mode Generation" in text and "Mode Inference" not in text
    assert "Prompt length 1,000" in text and "New tokens 256" in text  # 1,000 prompt + 256 generated
    assert "Weights int4" in text and "KV cache fp8" in text
    assert "ZeRO-tensor" not in text and "ZeRO-layer" not in text


def test_every_plan_has_one_wording_in_the_app_and_the_pdf() -> None:
    # the PDF's own plan_label turned every plan but two into "ZeRO-" + the rest: "ZeRO-tensor_parallel"
    assert [plan_label(p) for p in ("single", "data_parallel", "zero1", "zero3", "tensor_parallel", "layer_split")] == [
        "one card",
        "data parallel",
        "ZeRO-1",
        "ZeRO-3",
        "tensor parallel",
        "layer split",
    ]
    assert report_plan_label is plan_label


def test_a_qlora_report_says_qlora(catalog_path: Path) -> None:
    workload = Workload("train", 2, "amp_bf16", "adamw", finetune="qlora", lora_rank=8)
    report = make_report(catalog_path, "zoo:llama-3.2-1b", workload, options=RankingOptions(counts=(1,)), gpus=False)
    text = _text(html_parts(report, str))
    # PEFT upcasts the adapters of a 16-bit or 4-bit base to fp32 (--adapter-dtype fp32, the default)
    assert "Fine-tuning QLoRA (4-bit frozen base + LoRA adapters), rank 8, adapters in fp32" in text


def test_the_pdf_names_the_adapter_dtype_and_needs_what_the_command_line_does(
    catalog_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--adapter-dtype base` on a pure-bf16 base: the PDF's workload says bf16 adapters (it said the rank
    only), and its required memory is `advisor estimate --json`'s for the same options."""
    options = ["zoo:llama-3.2-1b", "--finetune", "lora", "--precision", "bf16", "--adapter-dtype", "base"]
    options += ["--batch", "2", "--seq-len", "256"]
    assert main(["estimate", *options, "--json"]) == 0
    required = json.loads(capsys.readouterr().out)["memory"]["required_bytes"]
    out = tmp_path / "lora.pdf"
    report = ["report", *options, "--catalog", str(catalog_path), "--no-local-gpus", "--lang", "en"]
    assert main([*report, "--out", str(out)]) == 0
    text = words(pdf_text(out, 1))
    assert "LoRA adapters on a frozen base, rank 16, adapters in bf16" in text
    assert f"Required {format_bytes(required)}" in text


def test_an_inference_report_charts_the_layers_outputs_not_nothing(catalog_path: Path) -> None:
    from advisor.charts import ChartStyle
    from advisor.report.figures import chart_builders

    report = make_report(
        catalog_path,
        "zoo:resnet18",
        Workload("infer", 8),
        options=RankingOptions(counts=(1,)),
        gpus=False,
        seq_len=None,
    )
    text = _text(html_parts(report, str))
    assert "Bytes of each layer&#x27;s output" in text  # the markup escapes the apostrophe
    chart = chart_builders(report, ChartStyle())["layers_memory"]()
    assert not any(t.get_text() == "No layer uses any" for t in chart.texts)


def test_a_peak_at_the_runtimes_setup_is_named_without_an_empty_layer(catalog_path: Path) -> None:
    """llama.cpp peaks when its context is created, before any layer: the Chinese PDF printed
    "出现在context created阶段，层" (the phase untranslated, then "layer" and nothing); the app's summary alike."""
    from advisor.core.workload import Runtime
    from advisor.i18n import translator
    from advisor.report.model_pages import memory
    from advisor.ui.i18n import set_language, tr
    from advisor.ui.summary import summary_items

    workload = Workload("generate", 1, "bf16", runtime=Runtime.LLAMA_CPP)
    report = make_report(catalog_path, "zoo:llama-3.2-1b", workload, options=RankingOptions(counts=(1,)), gpus=False)
    assert report.estimate.memory.peak_layer == ""  # the premise: no layer at this peak
    assert "at context created" in _text([memory(report, str)]) and "layer" not in _text([memory(report, str)])
    zh = _text([memory(report, translator("zh_CN"))])
    assert "出现在创建上下文阶段" in zh and "context created" not in zh and "层" not in zh
    set_language("zh_CN")
    try:
        how = next(how for label, _value, how in summary_items(report.estimate) if label == tr("Peak allocated"))
    finally:
        set_language("en")
    assert "（创建上下文）" in how, how


def test_filters_that_leave_no_card_are_not_called_a_workload_that_does_not_fit(catalog_path: Path) -> None:
    # --vendor Foo: the headline said "No listed configuration fits; try a smaller batch" over an empty table
    from advisor.recommend.service import CardFilter
    from advisor.report.model_pages import summary

    report = make_report(
        catalog_path, "zoo:resnet18", Workload("train", 8), cards=CardFilter(vendor="Foo"), gpus=False, seq_len=None
    )
    assert not report.ranking.rows
    text = _text([summary(report, str)])
    assert "No card of the catalog matches the filters" in text and "smaller batch" not in text
