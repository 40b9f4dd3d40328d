"""What the window shows, without Qt: the workload choice, the estimate on screen and how it was made, the
ranking asked for and the last one made, and whether each is pending, stale or cancelled.

Widgets only mirror this model (as napari's Qt views mirror their models): they read it and connect to its
signals; the Qt adapter (advisor/ui/state.py) adds the debounce timer, the worker threads and the undo stack.
The rules here decide what may be on screen: figures of an earlier network are marked stale, never shown
as the new one's; a ranking is shown only with the estimate it ranked; a cancelled task leaves no
"simulating…" or "ranking…" behind.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from advisor.appstate.draft import LayerDraft
from advisor.appstate.signals import Signal
from advisor.core.curve import MemoryCurve
from advisor.core.estimate import Estimate
from advisor.core.graph import Graph
from advisor.core.llm.lora import with_adapters
from advisor.core.vocabulary import AttentionImpl, LossImpl, Offload, TransformersRelease, VLLMRelease
from advisor.core.workload import (
    AdapterDtype,
    Finetune,
    KVCacheFormat,
    Mode,
    OptimizerName,
    Precision,
    Runtime,
    WeightFormat,
    Workload,
    recipe_defaults,
    runtime_for,
)
from advisor.recommend.prepare import RankingInput
from advisor.recommend.ranking import RankingOptions
from advisor.recommend.recommendation import Recommendation
from advisor.recommend.service import CardFilter

_CORE = Workload()  # the options the app leaves unset take the core's (and so the command line's) defaults


@dataclass(frozen=True)
class WorkloadChoice:
    """The workload controls' values; `inplace` rewrites activations as their in-place variants. The
    language-model fields are kept whatever the mode (switching back restores them) and reach the Workload
    only where they apply: weights, KV cache and runtime in generation, fine-tuning in training; `lora_targets`
    is the text field's comma-separated names ("" = every projection, as the command line's default); `runtime`
    None follows the weights (GGUF: llama.cpp, else transformers), as `--runtime` left out does."""

    mode: Mode = Mode.TRAIN
    batch: int = 32
    seq_len: int = 512
    # None until the user picks one: the recipe default, as --precision left out (core/workload.py
    # recipe_defaults: fp32, bf16 when generating from quantized weights), so the app and the command line
    # compute the same workload (the app had kept fp32 for a GGUF model the command line ran in bf16)
    precision: Precision | None = None
    optimizer: OptimizerName = OptimizerName.ADAM
    # None until the user ticks or unticks the box: QLoRA's recipe default (on), as --checkpointing left out;
    # the app had run QLoRA without it, so Llama 3.2 1B at batch 4 needed 11.10 GiB where the command said 6.13
    checkpointing: bool | None = None
    inplace: bool = False
    prompt_len: int = 512
    new_tokens: int = 128
    weights: WeightFormat | None = None
    kv_cache: KVCacheFormat | None = None
    finetune: Finetune = Finetune.FULL
    lora_rank: int = 16
    lora_targets: str = ""
    runtime: Runtime | None = None
    adapter_dtype: AdapterDtype = AdapterDtype.FP32  # as --adapter-dtype left out: PEFT's fp32 adapters
    enforce_eager: bool = False  # vLLM's --enforce-eager; reaches the Workload only where vLLM runs
    # the command line's remaining workload options, each reaching the Workload only where its flag applies
    # (commands/estimate.py _APPLIES): the app had none of them, so a vLLM share or an 8-bit optimizer the
    # command line answered could not be asked here (issue 25)
    attention: AttentionImpl | None = None  # --attention; None: the model's own
    tf32: bool = False  # --tf32
    expandable_segments: bool = False  # --expandable-segments
    loss: LossImpl = _CORE.loss  # train: --loss
    offload: Offload | None = None  # train: --offload
    drops_logits: bool = False  # train: --drop-logits
    transformers_version: TransformersRelease = _CORE.transformers_version  # train: --transformers-version
    gpu_layers: int | None = None  # llama.cpp: -ngl; None: every layer and the output
    gpu_memory_utilization: float = _CORE.gpu_memory_utilization  # vLLM: --gpu-memory-utilization
    max_num_seqs: int = _CORE.max_num_seqs  # vLLM: --max-num-seqs
    max_num_batched_tokens: int = _CORE.max_num_batched_tokens  # vLLM: --max-num-batched-tokens
    vllm_version: VLLMRelease = _CORE.vllm_version  # vLLM: --vllm-version

    @property
    def graph_length(self) -> int:
        """The tokens a zoo sequence model is built for: in generation the prompt, whose prefill `advisor
        estimate` lists layer by layer (core/llm/generate.py builds it at prompt_len); the sequence length
        otherwise. The layer shapes showed the training length in generation (issue 27)."""
        return self.prompt_len if self.mode == Mode.GENERATE else self.seq_len

    def effective(self) -> tuple[Precision, bool, tuple[str, ...]]:
        """The precision and checkpointing the workload runs with, and the names of those the recipe default
        chose (core/workload.py recipe_defaults, as the command line leaves them out)."""
        weights = self.weights if self.mode == Mode.GENERATE else None
        finetune = self.finetune if self.mode == Mode.TRAIN else Finetune.FULL
        return recipe_defaults(self.mode, weights, finetune, self.precision, self.checkpointing)

    @property
    def llama_cpp(self) -> bool:
        """llama.cpp runs the generation, chosen or followed from GGUF weights."""
        return self.mode == Mode.GENERATE and runtime_for(self.runtime, self.weights) == Runtime.LLAMA_CPP

    @property
    def vllm(self) -> bool:
        """vLLM runs the generation (chosen, not followed from the weights: core/workload.py runtime_for)."""
        generating = self.mode == Mode.GENERATE
        return generating and runtime_for(self.runtime, self.weights) == Runtime.VLLM  # a restored choice holds text

    def workload(self) -> Workload:
        """The core's Workload; it checks every value (a stored choice may hold any text)."""
        generating, training = self.mode == Mode.GENERATE, self.mode == Mode.TRAIN
        finetune = self.finetune if training else Finetune.FULL
        targets = tuple(name.strip() for name in self.lora_targets.split(",") if name.strip())
        precision, checkpointing, defaulted = self.effective()
        vllm: WorkloadChoice | Workload = self if self.vllm else _CORE  # vLLM's engine settings, where it runs
        return Workload(
            self.mode,
            self.batch,
            precision,
            self.optimizer,
            checkpointing,
            prompt_len=self.prompt_len,
            new_tokens=self.new_tokens,
            weights=self.weights if generating else None,
            kv_cache=self.kv_cache if generating else None,
            runtime=self.runtime if generating else None,
            finetune=finetune,
            lora_rank=self.lora_rank,
            lora_targets=targets if finetune != Finetune.FULL else (),
            adapter_dtype=self.adapter_dtype if finetune != Finetune.FULL else AdapterDtype.FP32,
            enforce_eager=self.enforce_eager and self.vllm,
            defaulted=defaulted,
            attention=self.attention,
            tf32=self.tf32,
            expandable_segments=self.expandable_segments,
            # the training loop's options in training only, the runtime's in its own runtime only, as the command
            # line refuses them elsewhere (the core refuses offload outside training)
            loss=self.loss if training else _CORE.loss,
            offload=self.offload if training else None,
            drops_logits=self.drops_logits and training,
            transformers_version=self.transformers_version if training else _CORE.transformers_version,
            gpu_layers=self.gpu_layers if self.llama_cpp else None,
            gpu_memory_utilization=vllm.gpu_memory_utilization,
            max_num_seqs=vllm.max_num_seqs,
            max_num_batched_tokens=vllm.max_num_batched_tokens,
            vllm_version=vllm.vllm_version,
        )


@dataclass(frozen=True)
class ShownEstimate:
    """One estimate and everything ranking needs (`job`): the breakdown, recommendations, make-it-fit and the
    PDF all read these same numbers. `pending`: a simulation of this workload is still running; `stale`: the
    network or workload now asked for could not be estimated, so these are an earlier one's figures."""

    job: RankingInput
    graph: Graph
    pending: bool = False
    stale: bool = False

    @property
    def estimate(self) -> Estimate:
        return self.job.estimate

    @property
    def curve(self) -> MemoryCurve:
        return self.job.curve

    @property
    def method(self) -> str:
        return self.job.estimate.method

    def trainable_param_count(self) -> int | None:
        """With LoRA/QLoRA only the adapters train (PEFT): their parameters; None where every parameter trains
        (the headline showed 8.07G parameters where 41.9M train)."""
        w = self.estimate.workload
        if not w.adapters:
            return None
        adapted = with_adapters(self.graph, w)
        return sum(node.op.adapter_count(adapted.input_specs(node)) for node in adapted.nodes)


@dataclass(frozen=True)
class RankingRequest:
    """The Recommendations tab's filters: which cards (vendor, segment, price basis, software path) and how
    to rank them (objective, budget, card count, the money options: job size, electricity)."""

    cards: CardFilter
    options: RankingOptions


@dataclass(frozen=True)
class RankingResult:
    """A ranking of `job` under `request`; `cancelled`: the user stopped it, so there are no entries."""

    request: RankingRequest
    job: RankingInput
    entries: tuple[Recommendation, ...]
    cancelled: bool = False


class AppModel:
    def __init__(self) -> None:
        self.result_changed = Signal()
        self.workload_changed = Signal()
        self.error_changed = Signal()  # (message: str)
        self.ranking_changed = Signal()
        self.choice = WorkloadChoice()
        self.result: ShownEstimate | None = None
        self.error = ""
        self.simulation_cancelled = False
        self.ranking_request: RankingRequest | None = None
        self.ranking_job: RankingInput | None = None  # the estimate the request ranks
        self.ranking: RankingResult | None = None
        self._imported: tuple[str, tuple[LayerDraft, ...]] | None = None  # a simulatable file, as opened
        self._simulated: dict[tuple[str, Workload], RankingInput] = {}

    # the workload
    def set_choice(self, **changes: object) -> WorkloadChoice | None:
        """Applies the changes; the previous choice if anything changed, else None."""
        new = dataclasses.replace(self.choice, **changes)  # type: ignore[arg-type]
        if new == self.choice:
            return None
        old, self.choice = self.choice, new
        self.workload_changed.emit()
        return old

    # the estimate
    def publish(self, result: ShownEstimate) -> None:
        self.result = result
        self.simulation_cancelled = False
        self._set_error("")
        self.result_changed.emit()

    def fail(self, message: str) -> None:
        """The network or workload asked for cannot be estimated: the figures left are an earlier one's."""
        if self.result is not None and not self.result.stale:
            self.result = dataclasses.replace(self.result, pending=False, stale=True)
            self.result_changed.emit()
        self._set_error(message)

    def clear(self) -> None:
        """An empty network (File > New): nothing to show, and no ranking of what was there."""
        self.result, self.ranking, self.ranking_request, self.ranking_job = None, None, None, None
        self._set_error("")
        self.result_changed.emit()
        self.ranking_changed.emit()

    def simulation_failed(self, message: str) -> None:
        """The analytic figures stay (they are this file's, and say so); only the wait for a simulation ends."""
        if self.result is not None and self.result.pending:
            self.result = dataclasses.replace(self.result, pending=False)
            self.result_changed.emit()
        self._set_error(message)

    def cancel_simulation(self) -> None:
        if self.result is not None and self.result.pending:
            self.simulation_cancelled = True
            self.result = dataclasses.replace(self.result, pending=False)
            self.result_changed.emit()

    def _set_error(self, message: str) -> None:
        self.error = message
        self.error_changed.emit(message)

    # the imported file and its simulations
    def mark_imported(self, spec: str | None, rows: list[LayerDraft]) -> None:
        """The draft now holds `spec` as opened (None: not a file that can be simulated)."""
        self._imported = (spec, tuple(rows)) if spec is not None else None
        self._simulated.clear()

    def simulated_spec(self, source: str, rows: list[LayerDraft]) -> str | None:
        """The file to simulate, or None once the user has edited the imported graph (or rewrites it)."""
        if self._imported is None or self.choice.inplace:
            return None
        spec, opened = self._imported
        return spec if source == spec and tuple(rows) == opened else None

    def edited_import(self, source: str, rows: list[LayerDraft]) -> bool:
        """A PyTorch file was opened and then edited here: its figures are analytic from now on."""
        return self._imported is not None and self.simulated_spec(source, rows) is None

    def simulated(self, spec: str, workload: Workload) -> RankingInput | None:
        return self._simulated.get((spec, workload))

    def keep_simulated(self, spec: str, workload: Workload, job: RankingInput) -> None:
        self._simulated[(spec, workload)] = job

    # the ranking
    def ask_ranking(self, request: RankingRequest, job: RankingInput) -> None:
        """A ranking of `job` (the estimate on screen) is on its way; the last one no longer answers it."""
        self.ranking_request, self.ranking_job, self.ranking = request, job, None
        self.ranking_changed.emit()

    def asked(self, request: RankingRequest) -> bool:
        """This very question was asked of the estimate on screen already (answered, pending or cancelled)."""
        return self.result is not None and self.ranking_job is self.result.job and self.ranking_request == request

    def ranked(self, request: RankingRequest, job: RankingInput, entries: list[Recommendation]) -> bool:
        """Keeps a ranking that answers the current request for the estimate on screen; False if it is late."""
        if request != self.ranking_request or self.result is None or self.result.job is not job:
            return False
        self.ranking = RankingResult(request, job, tuple(entries))
        self.ranking_changed.emit()
        return True

    def cancel_ranking(self) -> None:
        if self.ranking_pending and self.ranking_request is not None and self.ranking_job is not None:
            self.ranking = RankingResult(self.ranking_request, self.ranking_job, (), cancelled=True)
            self.ranking_changed.emit()

    @property
    def ranking_pending(self) -> bool:
        return self.ranking_request is not None and self.ranking is None

    def shown_ranking(self) -> RankingResult | None:
        """The last ranking, where it ranked the estimate now on screen (else nothing may be shown)."""
        ranking, result = self.ranking, self.result
        if ranking is None or result is None or ranking.job is not result.job:
            return None
        return ranking
