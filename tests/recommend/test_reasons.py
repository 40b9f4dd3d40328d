"""Reasons are data (codes and numbers); the views word them, the app and the PDF in the user's language."""

import string

from advisor.catalog.software import CONTEXT_NAMES, SOFTWARE_PATHS, context_name
from advisor.i18n.zh_CN import MESSAGES
from advisor.recommend.reasons import TEMPLATES, ReasonCode, reason, reason_text, reasons_text

GIB = 2**30


def fields(text: str) -> set[str]:
    return {name for _lit, name, _spec, _conv in string.Formatter().parse(text) if name}


def test_bytes_are_printed_as_bytes_and_the_rest_as_given() -> None:
    verdict = reason(
        ReasonCode.FITS,
        required_bytes=3 * GIB,
        batch=8,
        memory_bytes=24 * GIB,
        usable_bytes=22 * GIB + GIB // 2,
        context=context_name("CUDA"),
    )
    assert reason_text(verdict) == (
        "fits: needs 3.00 GiB per card at batch 8; 24.00 GiB card has 22.50 GiB usable after the CUDA context"
    )
    sharded = reason(ReasonCode.ONLY_SHARDED)
    assert reasons_text([verdict, sharded]).endswith("; fits only because model state is sharded")


def test_a_translation_function_words_the_same_numbers() -> None:
    split = reason(ReasonCode.ONLY_LAYER_SPLIT, count=2)
    assert reason_text(split, MESSAGES.__getitem__) == "只因各层被拆分到 2 张卡上才放得下"


def test_the_context_is_named_for_each_cards_runtime_in_english_and_chinese() -> None:
    verdict = reason(
        ReasonCode.DOES_NOT_FIT,
        required_bytes=30 * GIB,
        batch=4,
        memory_bytes=24 * GIB,
        usable_bytes=22 * GIB,
        context=context_name("ROCm"),
    )
    assert reason_text(verdict).endswith("24.00 GiB card has 22.00 GiB usable after the HIP context")
    assert reason_text(verdict, MESSAGES.__getitem__).endswith("24.00 GiB 的卡扣除 HIP 上下文后可用 22.00 GiB")
    assert context_name("XPU") == "the Level Zero context" and context_name("Gaudi") == "the driver's context"
    # every software path's name has a Chinese translation (they reach tr() as a value, not a literal)
    assert {context_name(s) for s in SOFTWARE_PATHS} == set(CONTEXT_NAMES)
    assert all(MESSAGES[name].strip().endswith("上下文") for name in CONTEXT_NAMES)


def test_every_code_has_a_template_with_a_chinese_translation_of_the_same_fields() -> None:
    assert set(TEMPLATES) == set(ReasonCode)
    for code, template in TEMPLATES.items():
        assert template in MESSAGES, code
        assert fields(MESSAGES[template]) == fields(template), code
