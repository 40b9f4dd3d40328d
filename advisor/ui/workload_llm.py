"""The language-model rows of the workload controls: prompt and generated tokens, weight and KV-cache
storage and the runtime (generation), and LoRA/QLoRA fine-tuning (training). The same options as `advisor
estimate --mode generate --prompt-len --new-tokens --weights --kv-cache --runtime --finetune --lora-rank
--lora-targets --adapter-dtype --enforce-eager`; they write
AppState.choice, which builds the same core Workload the command line does."""

from __future__ import annotations

from PySide6.QtGui import QStandardItemModel
from PySide6.QtWidgets import QCheckBox, QComboBox, QFormLayout, QHBoxLayout, QLineEdit, QWidget

from advisor.core.graph import Graph
from advisor.core.ops import Linear
from advisor.core.ops.moe import MoEExperts
from advisor.core.workload import (
    LORA_TARGETS,
    AdapterDtype,
    Finetune,
    KVCacheFormat,
    Mode,
    Runtime,
    WeightFormat,
    runtime_for,
)
from advisor.ui.controls import combo, narrow, spin_box
from advisor.ui.i18n import tr
from advisor.ui.state import AppState, WorkloadChoice

DEFAULT = ""  # the combo boxes' "as the precision" entry: None in the choice, the command line's default
MAX_TOKENS = 1 << 22  # the command line's ceiling on a context (commands/types.py MAX_SEQ_LEN)
MAX_LORA_RANK = 4096


def applies(widget: QWidget, on: bool, tip: str, why_not: str) -> None:
    """Enabled with its tooltip, or disabled with a tooltip saying why it does not apply."""
    widget.setEnabled(on)
    widget.setToolTip(tip if on else why_not)


def offer_generation(mode: QComboBox, graph: Graph | None, current: str) -> None:
    """The Mode box's Generation entry is for the decoder language models core describes; for any other
    network it is greyed with the reason (kept selectable while chosen, so the error line can say why)."""
    model = mode.model()
    assert isinstance(model, QStandardItemModel)  # what a QComboBox holds unless given another model
    item = model.item(mode.findData("generate"))
    decoder = graph is not None and graph.decoder is not None
    item.setEnabled(decoder or current == "generate")
    item.setToolTip(
        ""
        if decoder
        else tr("For language models only: the zoo's LLMs, or a .safetensors file with its config.json, unedited")
    )


def _offer_entry(box: QComboBox, value: str, applies: bool, chosen: bool, why: str) -> None:
    """The entry `value` greyed with the reason where it does not apply, kept selectable while chosen so the
    error line can say why."""
    model = box.model()
    assert isinstance(model, QStandardItemModel)
    item = model.item(box.findData(value))
    item.setEnabled(applies or chosen)
    item.setToolTip("" if applies else why)


def offer_cache_formats(box: QComboBox, choice: WorkloadChoice) -> None:
    """llama.cpp has no fp8 cache type (core/workload.py refuses it)."""
    llama = runtime_for(choice.runtime, choice.weights) == Runtime.LLAMA_CPP  # a restored choice holds text
    why = tr("llama.cpp has no fp8 cache type; int8 is its q8_0")
    _offer_entry(box, KVCacheFormat.FP8.value, not llama, choice.kv_cache == KVCacheFormat.FP8, why)


def offer_weight_formats(box: QComboBox, graph: Graph | None, current: WeightFormat | None) -> None:
    """MXFP4 stores a mixture-of-experts model's experts alone (core/llm/quant.py refuses it elsewhere)."""
    experts = graph is not None and any(isinstance(node.op, MoEExperts) for node in graph.nodes)
    why = tr("MXFP4 stores the experts of a mixture-of-experts model, and this one has none")
    _offer_entry(box, WeightFormat.MXFP4.value, experts, current == WeightFormat.MXFP4, why)


def adaptable(graph: Graph | None) -> bool:
    """LoRA has somewhere to go: a Linear named as a decoder projection (core/llm/lora.py with_adapters)."""
    return graph is not None and any(
        isinstance(node.op, Linear) and node.name.rsplit(".", 1)[-1] in LORA_TARGETS for node in graph.nodes
    )


def offer_adapters(box: QComboBox, graph: Graph | None, current: str) -> None:
    """LoRA and QLoRA are for networks with decoder projections; for a CNN they are greyed with the reason
    (they were selectable, then the estimate failed), kept selectable while chosen so the error can say why."""
    model = box.model()
    assert isinstance(model, QStandardItemModel)
    fits = adaptable(graph)
    for kind in ("lora", "qlora"):
        item = model.item(box.findData(kind))
        item.setEnabled(fits or current == kind)
        item.setToolTip(
            ""
            if fits
            else tr(
                "For language models: LoRA adapts the q/k/v/o and gate/up/down projections, and this network has none"
            )
        )


class LanguageModelControls:
    """Widgets added to the workload form; refresh() shows the choice and which rows apply to its mode."""

    def __init__(self, state: AppState, form: QFormLayout) -> None:
        self.state, self.form = state, form
        self.prompt_len = spin_box(MAX_TOKENS)
        self.new_tokens = spin_box(MAX_TOKENS)
        self.prompt_len.setSuffix(tr(" tokens"))
        self.new_tokens.setSuffix(tr(" tokens"))
        formats = [f.value for f in WeightFormat if f is not WeightFormat.FP32]
        self.weights = combo([(DEFAULT, tr("as the precision")), *((f, f) for f in formats)], "")
        self.kv_cache = combo([(DEFAULT, tr("as the compute dtype")), *((f.value, f.value) for f in KVCacheFormat)], "")
        self.runtime = combo([(DEFAULT, tr("as the weights")), *((r.value, r.value) for r in Runtime)], "")
        self.enforce_eager = QCheckBox(tr("eager"))  # vLLM's --enforce-eager, beside the runtime it belongs to
        self.finetune = combo([("full", tr("full (every weight)")), ("lora", "LoRA"), ("qlora", "QLoRA")], "")
        self.lora_rank = spin_box(MAX_LORA_RANK)
        # short entries, narrowed: "fp32 adapters" left the targets field three letters wide at 1280 px
        self.adapter_dtype = combo([(AdapterDtype.FP32.value, "fp32"), (AdapterDtype.BASE.value, tr("base dtype"))], "")
        narrow(self.adapter_dtype, 6)
        self.lora_targets = QLineEdit()
        self.lora_targets.setPlaceholderText(tr("all: {names}").format(names=",".join(LORA_TARGETS)))
        form.addRow(tr("Prompt length"), self.prompt_len)
        form.addRow(tr("New tokens"), self.new_tokens)
        form.addRow(tr("Weights"), self.weights)
        form.addRow(tr("KV cache"), self.kv_cache)
        self.runtime_row = QHBoxLayout()  # one row: generation's rows fit 720 px in Chinese too
        self.runtime_row.addWidget(self.runtime, 1)
        self.runtime_row.addWidget(self.enforce_eager)
        form.addRow(tr("Runtime"), self.runtime_row)
        form.addRow(tr("Fine-tuning"), self.finetune)
        self.lora_row = QHBoxLayout()  # rank and targets on one row: QLoRA's rows fit 720 px in Chinese too
        self.lora_row.addWidget(self.lora_rank)
        self.lora_row.addWidget(self.adapter_dtype)
        self.lora_row.addWidget(self.lora_targets, 1)
        form.addRow(tr("LoRA rank"), self.lora_row)
        self._connect()

    def _connect(self) -> None:
        s = self.state
        self.prompt_len.valueChanged.connect(lambda v: s.set_choice(prompt_len=v))
        self.new_tokens.valueChanged.connect(lambda v: s.set_choice(new_tokens=v))
        self.weights.currentIndexChanged.connect(lambda: s.set_choice(weights=self.weights.currentData() or None))
        self.kv_cache.currentIndexChanged.connect(lambda: s.set_choice(kv_cache=self.kv_cache.currentData() or None))
        self.runtime.currentIndexChanged.connect(
            lambda: s.set_choice(runtime=Runtime(self.runtime.currentData()) if self.runtime.currentData() else None)
        )
        self.enforce_eager.toggled.connect(lambda on: s.set_choice(enforce_eager=on))
        self.finetune.currentIndexChanged.connect(lambda: s.set_choice(finetune=self.finetune.currentData()))
        self.lora_rank.valueChanged.connect(lambda v: s.set_choice(lora_rank=v))
        self.adapter_dtype.currentIndexChanged.connect(
            lambda: s.set_choice(adapter_dtype=AdapterDtype(self.adapter_dtype.currentData()))
        )
        self.lora_targets.editingFinished.connect(lambda: s.set_choice(lora_targets=self.lora_targets.text().strip()))

    def refresh(self, c: WorkloadChoice) -> None:
        for box, value in (
            (self.weights, c.weights or DEFAULT),
            (self.kv_cache, c.kv_cache or DEFAULT),
            (self.runtime, c.runtime or DEFAULT),
            (self.finetune, c.finetune),
            (self.adapter_dtype, c.adapter_dtype),
        ):
            box.blockSignals(True)
            box.setCurrentIndex(max(0, box.findData(value)))
            box.blockSignals(False)
        for spin, number in (
            (self.prompt_len, c.prompt_len),
            (self.new_tokens, c.new_tokens),
            (self.lora_rank, c.lora_rank),
        ):
            spin.blockSignals(True)
            spin.setValue(number)
            spin.blockSignals(False)
        self.enforce_eager.blockSignals(True)
        self.enforce_eager.setChecked(c.enforce_eager)
        self.enforce_eager.blockSignals(False)
        if not self.lora_targets.hasFocus():  # never rewrite what the user is typing
            self.lora_targets.setText(c.lora_targets)
        offer_adapters(self.finetune, self.state.draft.result.graph, c.finetune)
        offer_cache_formats(self.kv_cache, c)
        offer_weight_formats(self.weights, self.state.draft.result.graph, c.weights)
        self._show_what_applies(c)

    def _show_what_applies(self, c: WorkloadChoice) -> None:
        generating, training = c.mode == Mode.GENERATE, c.mode == Mode.TRAIN
        only_generation = tr("Applies to generation only: choose Mode > Generation")
        applies(self.prompt_len, generating, tr("Tokens of each prompt, processed at once (prefill)"), only_generation)
        applies(
            self.new_tokens,
            generating,
            tr("Tokens generated per sequence, one at a time (decode); the KV cache holds prompt + new tokens"),
            only_generation,
        )
        applies(
            self.weights,
            generating,
            tr(
                "How the weights are stored: 16-bit, fp8/int8, 4-bit GPTQ/AWQ "
                "(int4), bitsandbytes nf4, or llama.cpp GGUF blocks (q4_k_m, "
                "q5_k_m, q8_0); scales and zero points counted"
            ),
            only_generation,
        )
        applies(
            self.kv_cache,
            generating,
            tr("Storage of the cached keys and values (fp8/int8 halve a 16-bit cache)"),
            only_generation,
        )
        applies(
            self.runtime,
            generating,
            tr(
                "What runs the generation, as --runtime: transformers' generate() "
                "grows its cache, llama.cpp allocates the whole context up front, "
                "vLLM takes 0.9 of the card; as the weights: GGUF in llama.cpp, "
                "others in transformers"
            ),
            only_generation,
        )
        applies(
            self.enforce_eager,
            c.vllm,
            tr(
                "vLLM's --enforce-eager: no CUDA graphs are captured, so they hold no memory (decode time is "
                "still estimated as graph replay)"
            ),
            tr("vLLM only: choose Runtime > vllm"),
        )
        applies(
            self.finetune,
            training,
            tr("Train every weight, or rank-r LoRA adapters on a frozen base (QLoRA: the base in 4-bit nf4)"),
            tr("Applies to training only: inference and generation run the base model"),
        )
        adapters = training and c.finetune != Finetune.FULL
        why = tr("Only with LoRA or QLoRA fine-tuning")
        applies(
            self.lora_rank, adapters, tr("Rank r of each adapter: r x (in + out) parameters per adapted layer"), why
        )
        applies(
            self.adapter_dtype,
            adapters,
            tr(
                "What the adapters are kept and trained in on a bf16/fp16 base, as --adapter-dtype: fp32 as "
                "PEFT upcasts them, or the base's dtype as torchtune makes them; a fp32 or autocast base keeps "
                "fp32 adapters either way"
            ),
            why,
        )
        applies(
            self.lora_targets,
            adapters,
            tr("Comma-separated projections to adapt (PEFT target_modules); empty: all of them"),
            why,
        )
        for widget, shown in (
            (self.prompt_len, generating),
            (self.new_tokens, generating),
            (self.weights, generating),
            (self.kv_cache, generating),
            (self.finetune, training),
        ):
            self.form.setRowVisible(widget, shown)
        self.form.setRowVisible(self.runtime_row, generating)
        self.form.setRowVisible(self.lora_row, adapters)  # the mode's rows only (workload_panel.refresh says why)
