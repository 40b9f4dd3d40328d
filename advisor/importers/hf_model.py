"""A transformers model from its config: the class the config names, the inputs its forward reads and the
labels that make its training loss real.

The head comes from the config's `architectures` (what the checkpoint was saved as: BertForMaskedLM is a
masked LM, not a sequence classifier); without one, a causal LM, a seq2seq LM or the bare model, the first
that builds. The model is built on the meta device in float32 whatever `dtype` the config names (published
configs say bfloat16): the workload's precision decides the weight dtype, as for every other model.

Labels follow each head's forward (transformers' modeling_*.py `labels` arguments): causal LMs take the
input ids (they shift them inside), masked and token-classification heads one label per token, sequence
and image classifiers one class per sample, seq2seq heads decoder labels beside the decoder inputs, and
question answering start and end positions. A bare model has no loss: its first output is summed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from advisor.importers.common import fail
from advisor.importers.torch_loader import Inputs, describe_error

DEFAULT_SEQ_LEN = 512
# class-name endings -> the labels that head's forward takes
_HEADS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("ForCausalLM", "LMHeadModel"), "causal"),
    (("ForConditionalGeneration", "ForSeq2SeqLM", "ForSpeechSeq2Seq"), "seq2seq"),
    (("ForMaskedLM",), "masked"),
    (("ForTokenClassification",), "per_token"),
    (
        ("ForSequenceClassification", "ForImageClassification", "ForAudioClassification", "ForMultipleChoice"),
        "per_sample",
    ),
    (("ForQuestionAnswering",), "span"),
)


@dataclass(frozen=True)
class HfModel:
    module: Any
    head: str  # one of _HEADS' kinds, or "bare"
    task: str  # LoadedModel.task: "language_model" or "classification"
    inputs: Callable[[int], Inputs]  # inference: what the forward reads
    train_inputs: Callable[[int], Inputs]  # training: the same plus labels


def head_of(class_name: str) -> str:
    for endings, head in _HEADS:
        if class_name.endswith(endings):
            return head
    return "bare"


def build(transformers: Any, torch: Any, cfg: Any, path: Path, seq_len: int | None) -> HfModel:
    module = _module(transformers, torch, cfg, path)
    head = head_of(type(module).__name__)
    shapes = _Shapes(torch, cfg, module, path, seq_len)
    # "language_model" upcasts the logits for the loss, as transformers' causal-LM loss does
    # (loss/loss_utils.py ForCausalLMLoss: logits.float()); the other heads call CrossEntropyLoss directly
    task = "language_model" if head == "causal" else "classification"
    return HfModel(module, head, task, lambda b: shapes.inputs(b, None), lambda b: shapes.inputs(b, head))


def _module(transformers: Any, torch: Any, cfg: Any, path: Path) -> Any:
    arch = (getattr(cfg, "architectures", None) or [""])[0]
    candidates = [getattr(transformers, arch, None)] if arch else []
    if arch and candidates[0] is None:
        raise fail(
            path,
            f"transformers {transformers.__version__} has no class {arch} (the config's "
            "architectures); a newer transformers may",
        )
    candidates += [transformers.AutoModelForCausalLM, transformers.AutoModelForSeq2SeqLM, transformers.AutoModel]
    last: Exception | None = None
    for cls in (c for c in candidates if c is not None):
        try:
            with torch.device("meta"):
                if hasattr(cls, "from_config"):
                    return cls.from_config(cfg, dtype=torch.float32)
                return cls._from_config(cfg, dtype=torch.float32)
        except Exception as error:
            last = error
    raise fail(path, f"transformers cannot build this model: {describe_error(last) if last else 'unknown class'}")


class _Shapes:
    """The example tensors of one config: token ids, pixels or audio features, per the model's
    main_input_name (PreTrainedModel.main_input_name)."""

    def __init__(self, torch: Any, cfg: Any, module: Any, path: Path, seq_len: int | None) -> None:
        self.torch, self.cfg, self.path = torch, cfg, path
        self.main = str(getattr(module, "main_input_name", "input_ids"))
        self.vocab = int(getattr(cfg, "vocab_size", 2) or 2)
        self.tokens = _seq_len(cfg, seq_len, path) if self.main == "input_ids" else 0
        decoder_limit = getattr(cfg, "max_target_positions", None)
        self.decoder_tokens = min(self.tokens or DEFAULT_SEQ_LEN, int(decoder_limit or DEFAULT_SEQ_LEN))
        self.classes = max(int(getattr(cfg, "num_labels", 2) or 2), 1)
        # training and single forward passes keep no KV cache (generation is a separate mode)
        self.extra = {"use_cache": False} if getattr(cfg, "use_cache", False) else {}
        if self.main not in ("input_ids", "pixel_values", "input_features"):
            raise fail(
                path,
                f"models whose input is {self.main!r} are not supported yet "
                "(token ids, pixel values and audio features are)",
            )

    def ids(self, batch: int, tokens: int) -> Any:
        return self.torch.randint(0, self.vocab, (batch, tokens))

    def main_input(self, batch: int) -> Any:
        torch, cfg = self.torch, self.cfg
        if self.main == "pixel_values":
            size = getattr(cfg, "image_size", 224)
            height, width = (size, size) if isinstance(size, int) else tuple(size)
            return torch.randn(batch, int(getattr(cfg, "num_channels", 3)), height, width)
        if self.main == "input_features":  # Whisper: mel bins x (2 x encoder positions) frames
            frames = 2 * int(getattr(cfg, "max_source_positions", 1500))
            return torch.randn(batch, int(getattr(cfg, "num_mel_bins", 80)), frames)
        return self.ids(batch, self.tokens)

    def inputs(self, batch: int, head: str | None) -> Inputs:
        given = {self.main: self.main_input(batch), **self.extra}
        if getattr(self.cfg, "is_encoder_decoder", False):
            given["decoder_input_ids"] = self.ids(batch, self.decoder_tokens)
        if head is not None:
            given.update(self.labels(batch, head, given))
        return (), given

    def labels(self, batch: int, head: str, given: dict[str, Any]) -> dict[str, Any]:
        torch = self.torch
        if head == "causal" and self.main == "input_ids":
            return {"labels": given["input_ids"]}
        if head == "seq2seq":
            return {"labels": self.ids(batch, self.decoder_tokens)}
        if head in ("masked", "per_token"):  # a masked LM predicts a token, a token classifier a class
            classes = self.vocab if head == "masked" else self.classes
            return {"labels": torch.randint(0, classes, (batch, self.tokens))}
        if head == "per_sample":
            return {"labels": torch.randint(0, self.classes, (batch,))}
        if head == "span":
            return {
                "start_positions": torch.zeros(batch, dtype=torch.long),
                "end_positions": torch.zeros(batch, dtype=torch.long),
            }
        return {}


def _seq_len(cfg: Any, seq_len: int | None, path: Path) -> int:
    limit = getattr(cfg, "max_position_embeddings", None) or getattr(cfg, "n_positions", None)
    tokens = seq_len or min(DEFAULT_SEQ_LEN, int(limit) if limit else DEFAULT_SEQ_LEN)
    if limit and tokens > int(limit):
        raise fail(path, f"seq_len {tokens} is more than the model's {limit} positions")
    return tokens
