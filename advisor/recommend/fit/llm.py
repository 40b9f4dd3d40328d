"""Make-it-fit changes of language models: LoRA and QLoRA for training; quantized weights, a quantized KV
cache and a shorter context for generation. Each is a change of the workload, measured by re-estimating
(advisor.core's generation and fine-tuning estimates), like the other changes of advisor.recommend.fit.changes.
"""

from __future__ import annotations

from dataclasses import replace

from advisor.core.workload import LORA_TARGETS, Runtime
from advisor.recommend.fit.changes import Change, workload_change
from advisor.recommend.fit.keys import ChangeKey
from advisor.recommend.fit.measure import Measurer, Variant

# Weight formats a generating model can step down to, smallest last: 8-bit (bitsandbytes LLM.int8 / GPTQ
# int8) and 4-bit with group scales (GPTQ/AWQ int4), the two that GPU serving stacks load.
_SMALLER_WEIGHTS = {
    "fp32": ("int8", "int4"),
    "bf16": ("int8", "int4"),
    "fp16": ("int8", "int4"),
    "fp8": ("int4",),
    "int8": ("int4",),
    "q8_0": ("q4_k_m",),
}
# llama.cpp steps down through GGUF files only
_SMALLER_GGUF = {
    "fp32": ("q8_0", "q4_k_m"),
    "bf16": ("q8_0", "q4_k_m"),
    "fp16": ("q8_0", "q4_k_m"),
    **dict.fromkeys(("q8_0", "q6_k", "q5_k_m", "q5_k_s", "q5_1", "q5_0", "q4_1"), ("q4_k_m",)),
}
_WIDE_CACHE = ("fp32", "bf16", "fp16")
SHORTEST_CONTEXT_SHARE = 8  # halve the context down to an eighth of what was asked, no further


def llm_changes(m: Measurer, v: Variant, usable_bytes: int) -> list[Change]:
    """The language-model changes that apply to this workload (none for other models)."""
    w = v.workload
    if m.graph(v).decoder is None:
        return []
    if w.training:
        return _finetune(v) if _has_adapter_targets(m, v) else []
    if not w.generating:
        return []
    smaller = _SMALLER_GGUF if w.runtime_used == Runtime.LLAMA_CPP else _SMALLER_WEIGHTS
    changes = [workload_change(ChangeKey(f"weights_{fmt}"), weights=fmt) for fmt in smaller.get(w.weight_format, ())]
    # llama.cpp has no fp8 cache (--cache-type-k: f32, f16, bf16, q8_0, q4_0, q4_1, iq4_nl, q5_0, q5_1; its
    # README, ggml-org/llama.cpp tools/server): the fp8 change, worded as vLLM's option, is not offered there
    if w.kv_cache_dtype in _WIDE_CACHE and w.runtime_used != Runtime.LLAMA_CPP:
        changes.append(workload_change(ChangeKey.KV_FP8, kv_cache="fp8"))
    shorter = shorter_context(m, v, usable_bytes)
    return changes + ([shorter] if shorter else [])


def _has_adapter_targets(m: Measurer, v: Variant) -> bool:
    """LoRA adapts linear layers by their module name (PEFT's target_modules, Llama spelling: q_proj, ...);
    a decoder named otherwise (GPT-2's c_attn) has nothing to adapt."""
    targets = v.workload.lora_targets or LORA_TARGETS
    return any(node.name.rsplit(".", 1)[-1] in targets for node in m.graph(v).nodes)


def _finetune(v: Variant) -> list[Change]:
    w = v.workload
    keys = {"full": (ChangeKey.LORA, ChangeKey.QLORA), "lora": (ChangeKey.QLORA,)}.get(w.finetune, ())
    # these keys are the finetune names themselves (str values of the enum)
    return [
        workload_change(
            k, {"rank": w.lora_rank}, finetune=str(k), **({"weights": None} if k is ChangeKey.QLORA else {})
        )
        for k in keys
    ]


def shorter_context(m: Measurer, v: Variant, usable_bytes: int) -> Change | None:
    """Halves prompt and generated tokens together until the generation fits (down to an eighth): the KV
    cache and the prefill activations shrink with them."""
    w = v.workload
    prompt, new = w.prompt_len, w.new_tokens
    if prompt + new < 4:
        return None

    def fits(p: int, n: int) -> bool:
        return m.measure(replace(v, workload=replace(w, prompt_len=p, new_tokens=n))).fits(usable_bytes)

    while prompt + new > (w.prompt_len + w.new_tokens) // SHORTEST_CONTEXT_SHARE and not fits(prompt, new):
        prompt, new = max(prompt // 2, 1), max(new // 2, 1)
    if (prompt, new) == (w.prompt_len, w.new_tokens):
        prompt, new = max(prompt // 2, 1), max(new // 2, 1)  # already fits: the half, for speed or batch
    return workload_change(
        ChangeKey.CONTEXT,
        {"prompt": prompt, "new": new, "old_prompt": w.prompt_len, "old_new": w.new_tokens},
        prompt_len=prompt,
        new_tokens=new,
    )
