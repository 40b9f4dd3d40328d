"""Make-it-fit for language models: quantized weights, fp8 KV cache, shorter context, LoRA/QLoRA offers."""

from __future__ import annotations

from dataclasses import replace

import pytest

from advisor.catalog import CardRecord, find_card, open_catalog
from advisor.core import zoo
from advisor.core.workload import Workload
from advisor.recommend.fit.llm import llm_changes
from advisor.recommend.fit.measure import Measurer, Subject, Target, Variant, target
from advisor.recommend.fit.present import render_text
from advisor.recommend.fit.search import make_it_fit

GIB = 2**30


@pytest.fixture(scope="module")
def cards(tmp_path_factory: pytest.TempPathFactory) -> dict[str, CardRecord]:
    catalog = open_catalog(tmp_path_factory.mktemp("catalog") / "catalog.sqlite3")
    with catalog.read() as session:
        found = {name: find_card(session, name) for name in ("RTX 4060 Ti 16GB", "RTX 4090")}
    catalog.close()
    return found


def llama8b(prompt: int = 4096, new: int = 512, batch: int = 1, weights: str | None = None) -> Subject:
    workload = Workload(
        "generate",
        batch,
        "bf16",
        weights=weights,
        prompt_len=prompt,  # type: ignore[arg-type]
        new_tokens=new,
    )
    return Subject(zoo.build("llama-3.1-8b", prompt + new), workload)


def test_8b_bf16_on_16_gb_fits_with_4_bit_weights_measured(cards: dict[str, CardRecord]) -> None:
    card = target(cards["RTX 4060 Ti 16GB"])
    report = make_it_fit(llama8b(), card)
    assert not report.current.fits
    singles = {o.changes[0]: o for o in report.singles}
    int4 = singles["weights_int4"]
    # 4-bit weights: about a quarter of the 16.06e9 bf16 bytes, so the cache and the rest fit beside them
    assert int4.fits and int4.measured.estimate.workload.weights == "int4"
    saved = report.current.measured.required_bytes - int4.measured.required_bytes
    assert 16.06e9 * 0.6 < saved < 16.06e9 * 0.75
    assert int4.slowdown < 0  # fewer bytes per decode step: faster
    # fp8 KV cache halves the cache at the peak, the prefill's: transformers holds the 4,096 prompt tokens
    # then, 4,096 x 131,072 B = 0.5 GiB of bf16 cache
    kv = singles["kv_fp8"]
    assert report.current.measured.required_bytes - kv.measured.required_bytes == pytest.approx(
        4096 * 131_072 / 2, rel=0.05
    )
    assert "context" in singles and singles["context"].measured.estimate.workload.prompt_len < 4096
    assert report.recommended is not None and report.recommended.fits


def test_llama_cpp_is_not_offered_an_fp8_cache_it_does_not_have(cards: dict[str, CardRecord]) -> None:
    # llama.cpp's cache types are f32, f16, bf16, q8_0, q4_0, q4_1, iq4_nl, q5_0, q5_1: the note "K and V
    # cached in fp8 (vLLM --kv-cache-dtype fp8)" was offered to a GGUF generation all the same
    report = make_it_fit(llama8b(weights="q8_0"), target(cards["RTX 4060 Ti 16GB"]))
    assert report.current.measured.estimate.workload.runtime_used == "llama.cpp"
    assert "kv_fp8" not in {o.changes[0] for o in report.singles}
    assert "weights_q4_k_m" in {o.changes[0] for o in report.singles}  # the GGUF step down is still offered


def test_a_generation_that_fits_says_so_and_keeps_only_changes_that_help(cards: dict[str, CardRecord]) -> None:
    report = make_it_fit(llama8b(prompt=512, new=128, weights="q4_k_m"), target(cards["RTX 4090"]))
    assert report.current.fits and not report.needs_help
    assert "fits with" in render_text(report).splitlines()[1] and "to spare" in render_text(report)
    base = report.current.measured
    assert all(o.measured.peak_bytes < base.peak_bytes or o.slowdown < 0 for o in report.singles)


def test_shorter_context_halves_prompt_and_new_tokens_until_it_fits(cards: dict[str, CardRecord]) -> None:
    card: Target = target(cards["RTX 4060 Ti 16GB"])
    subject = llama8b(prompt=4096, new=512, weights="int8", batch=16)
    assert not Measurer(subject, card).measure(Variant(subject.workload)).fits(card.usable_bytes)
    m = Measurer(subject, card)
    v = Variant(subject.workload)
    change = next(c for c in llm_changes(m, v, card.usable_bytes) if c.key == "context")
    shorter = change.apply(v).workload
    # halved together: 4096 + 512 -> 2048 + 256 -> ... ; the first that fits, not shorter
    assert shorter.prompt_len * 512 == shorter.new_tokens * 4096
    assert m.measure(change.apply(v)).fits(card.usable_bytes)
    doubled = replace(shorter, prompt_len=shorter.prompt_len * 2, new_tokens=shorter.new_tokens * 2)
    assert not m.measure(replace(v, workload=doubled)).fits(card.usable_bytes)


def test_training_a_decoder_offers_lora_and_qlora_and_other_models_do_not(cards: dict[str, CardRecord]) -> None:
    card = target(cards["RTX 4090"])
    decoder = Subject(zoo.build("llama-3.2-1b", 256), Workload("train", 1, "bf16"))
    offered = llm_changes(Measurer(decoder, card), Variant(decoder.workload), card.usable_bytes)
    assert [c.key for c in offered] == ["lora", "qlora"]
    assert offered[1].apply(Variant(decoder.workload)).workload.finetune == "qlora"
    lora = Variant(replace(decoder.workload, finetune="lora"))
    assert [c.key for c in llm_changes(Measurer(decoder, card), lora, card.usable_bytes)] == ["qlora"]
    cnn = Subject(zoo.build("resnet50"), Workload(batch=8))
    assert llm_changes(Measurer(cnn, card), Variant(cnn.workload), card.usable_bytes) == []


def test_a_model_too_big_for_one_card_is_offered_split_over_the_fewest_cards(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    catalog = open_catalog(tmp_path_factory.mktemp("catalog") / "catalog.sqlite3")
    with catalog.read() as session:
        rtx3090 = target(find_card(session, "RTX 3090"))
    catalog.close()
    subject = Subject(zoo.build("llama-3.1-70b", 640), Workload("generate", 1, "bf16", weights="q4_k_m"))
    report = make_it_fit(subject, rtx3090)
    assert not report.current.fits  # 42.5e9 B of 4-bit weights on a 24 GiB card
    split = {o.changes[0]: o for o in report.sharding}
    assert set(split) == {"tensor_parallel", "layer_split"}
    whole = report.current.measured.required_bytes
    for option in split.values():  # two cards, each with about half (80 layers: 40 on each)
        assert option.cards == 2 and option.fits
        assert whole / 2 < option.measured.required_bytes < whole / 2 + GIB
    # tensor parallel reads half the weights per card per token; layer split passes both cards in turn
    assert split["tensor_parallel"].slowdown < -0.3 and abs(split["layer_split"].slowdown) < 0.02


def test_qlora_fine_tuning_of_an_8b_model_fits_a_4090_and_full_fine_tuning_does_not(
    cards: dict[str, CardRecord],
) -> None:
    card = target(cards["RTX 4090"])
    full = Subject(zoo.build("llama-3.1-8b", 512), Workload("train", 1, "bf16", "adam"))
    report = make_it_fit(full, card)
    # full: 8.03e9 weights x (2 B + 2 B gradient + 2 x 2 B Adam) = 64 GB before activations
    assert not report.current.fits
    singles = {o.changes[0]: o for o in report.singles}
    assert singles["qlora"].fits and singles["lora"].fits
    # the nf4 base (~0.5 B per weight, 4.0e9 B) instead of bf16 (16.06e9 B): ~12e9 B less than LoRA
    saved = singles["lora"].measured.peak_bytes - singles["qlora"].measured.peak_bytes
    assert 10e9 < saved < 12.5e9
    qlora = Subject(full.graph, Workload("train", 1, "bf16", "adam", finetune="qlora"))
    assert make_it_fit(qlora, card).current.fits


def test_a_decoder_without_llama_style_projections_is_not_offered_lora(cards: dict[str, CardRecord]) -> None:
    card = target(cards["RTX 4090"])
    gpt2 = Subject(zoo.build("gpt2-medium", 256), Workload("train", 1, "bf16"))  # c_attn, c_proj, c_fc
    assert llm_changes(Measurer(gpt2, card), Variant(gpt2.workload), card.usable_bytes) == []


def test_every_fit_label_and_note_has_a_chinese_translation_with_the_same_fields() -> None:
    import string

    from advisor.i18n.zh_CN import MESSAGES
    from advisor.recommend.fit.keys import CHANGES, ChangeKey

    def fields(text: str) -> set[str]:
        return {name for _lit, name, _spec, _conv in string.Formatter().parse(text) if name}

    assert set(CHANGES) == set(ChangeKey)  # every change is described, once
    for key, kind in CHANGES.items():
        assert kind.label in MESSAGES and kind.note in MESSAGES, key
        assert fields(MESSAGES[kind.note]) == fields(kind.note), key
        assert not fields(kind.label), key  # labels are plain words
        label, note = kind.words(training=False)  # inference and generation: their own words, if any
        assert label in MESSAGES and note in MESSAGES and fields(MESSAGES[note]) == fields(note), key
        if kind.serving_note:  # no gradients, optimizer state or GradScaler in the Chinese either
            assert not any(w in MESSAGES[label] + MESSAGES[note] for w in ("梯度", "优化器", "GradScaler")), key
