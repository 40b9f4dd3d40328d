"""Runs the training step (or inference pass) of a real module on the meta device, twice, as the
calibration loop does (shared/calibration/measure_gpu.py run_config): zero_grad(set_to_none=True),
forward and loss under autocast, backward, optimizer step, then `del out, loss`. The second iteration is
measured: optimizer state exists by then (peak_alloc_steady)."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from advisor.core.errors import SpecError
from advisor.core.workload import Precision, Workload
from advisor.importers.simulate.adapters import with_adapters
from advisor.importers.simulate.hooks import LayerWatch
from advisor.importers.simulate.optimizers import StateLayoutOptimizer
from advisor.importers.simulate.semantics import CudaSemantics
from advisor.importers.simulate.tracking import MemoryTracker

Inputs = tuple[tuple[Any, ...], dict[str, Any]]
MakeInputs = Callable[[int], Inputs]
LossFn = Callable[[Any, Inputs], torch.Tensor]
HALF = {"bf16": torch.bfloat16, "fp16": torch.float16}  # by Workload.compute_dtype


@dataclass
class StepRun:
    tracker: MemoryTracker
    watch: LayerWatch
    kept_by_layer: dict[str, int]
    notes: list[str]
    # of the module that ran (with its adapters, base frozen): what the optimizer steps, and all the weights
    param_count: int
    trainable_param_count: int


def default_loss(output: Any, inputs: Inputs) -> torch.Tensor:
    """A model without loss_fn: HF-style outputs carry .loss; (N, C) logits get cross-entropy against
    int64 class targets (what a data loader hands in); anything else is summed."""
    loss = getattr(output, "loss", None)
    if isinstance(loss, torch.Tensor):
        return loss
    if isinstance(output, (tuple, list, dict)):  # a bare transformers model's ModelOutput is a dict
        output = next(_tensors(output), None)
    if isinstance(output, torch.Tensor) and output.dim() == 2 and output.is_floating_point():
        target = torch.zeros(output.size(0), dtype=torch.long, device=output.device)
        return F.cross_entropy(output, target)
    return output.float().sum() if isinstance(output, torch.Tensor) else torch.zeros(())


def make_optimizer(params: list[nn.Parameter], name: str) -> torch.optim.Optimizer:
    """The calibration's optimizers with the implementation CUDA picks by default: foreach
    (torch/optim/optimizer.py _default_to_fused_or_foreach chooses it for CUDA tensors; for meta tensors it
    would not, so it is asked for explicitly); the others allocate as their own libraries do."""
    if name == "sgd":
        return torch.optim.SGD(params, lr=1e-3, foreach=True)
    if name == "sgd_momentum":
        return torch.optim.SGD(params, lr=1e-3, momentum=0.9, foreach=True)
    if name == "adam":
        return torch.optim.Adam(params, lr=1e-4, foreach=True)
    if name == "adamw":
        return torch.optim.AdamW(params, lr=1e-4, foreach=True)
    return StateLayoutOptimizer(params, name)  # bitsandbytes' and transformers' (simulate/optimizers.py)


def _tensors(value: Any) -> Iterator[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (tuple, list)):
        for item in value:
            yield from _tensors(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _tensors(item)


def to_meta(module: nn.Module) -> nn.Module:
    """A module built on the CPU moves to the meta device, shared parameters and buffers still shared.

    A CPU tensor cannot become a meta one in place, so Module._apply gives each module that holds it a new
    Parameter of its own (torch/nn/modules/module.py, _apply without set_data): tied weights (GPT-2's
    lm_head and wte) would become two weights, each with its gradient and optimizer state. They are tied
    again by where they sit."""
    if all(t.device.type == "meta" for t in (*module.parameters(), *module.buffers())):
        return module
    places: dict[int, list[tuple[dict[str, Any], str]]] = {}
    for sub in module.modules():
        for table in (sub._parameters, sub._buffers):
            for name, tensor in table.items():
                if tensor is not None:
                    places.setdefault(id(tensor), []).append((table, name))
    module = module.to("meta")
    for (first_table, first_name), *others in (p for p in places.values() if len(p) > 1):
        for table, name in others:
            table[name] = first_table[first_name]
    return module


def _cast_inputs(inputs: Inputs, dtype: torch.dtype | None) -> Inputs:
    if dtype is None:
        return inputs

    def cast(v: Any) -> Any:
        return v.to(dtype) if isinstance(v, torch.Tensor) and v.is_floating_point() else v

    args, kwargs = inputs
    return tuple(cast(a) for a in args), {k: cast(v) for k, v in kwargs.items()}


class StepRunner:
    def __init__(self, module: nn.Module, make_inputs: MakeInputs, workload: Workload, loss_fn: LossFn | None) -> None:
        self.workload, self.make_inputs = workload, make_inputs
        self.loss_fn = loss_fn or default_loss
        self.tracker = MemoryTracker()
        self.module = module
        self.notes: list[str] = []
        self.semantics = CudaSemantics(HALF[workload.compute_dtype] if workload.amp else None)

    def setup(self) -> None:
        t = self.tracker
        module = to_meta(self.module)
        for tensor in (*module.parameters(), *module.buffers()):
            t.track(tensor, "weights")
        if self.workload.pure_half:
            module = module.to(HALF[self.workload.compute_dtype])
            for tensor in (*module.parameters(), *module.buffers()):
                t.recategorize(tensor, "weights")
        if self.workload.adapters:
            module = with_adapters(module, self.workload)
            for tensor in module.parameters():
                t.track(tensor, "weights")
        self.module = module
        t.default_category = "inputs"
        with torch.device("meta"):
            inputs = self.make_inputs(self.workload.batch)
        self.inputs = _cast_inputs(inputs, HALF[self.workload.compute_dtype] if self.workload.pure_half else None)
        for tensor in _tensors(self.inputs):
            t.recategorize(tensor, "inputs")
        self.watch = LayerWatch(module, t)
        if self.workload.training and self.workload.checkpointing:
            self._checkpointing()

    def _checkpointing(self) -> None:
        # transformers 5 renamed gradient_checkpointing_enable (kept, deprecated) to activation_checkpointing_enable
        enable = getattr(self.module, "activation_checkpointing_enable", None) or getattr(
            self.module, "gradient_checkpointing_enable", None
        )
        if callable(enable):
            enable()
        else:
            self.notes.append(
                "checkpointing requested, but the module has no gradient_checkpointing_enable(): simulated without it"
            )

    def run(self) -> StepRun:
        w = self.workload
        if w.pure_half or w.adapters or (w.training and w.checkpointing):
            # .to(dtype), the adapters and gradient_checkpointing_enable() change a module in place: the caller's
            # (simulated again at other batches, by recommend's curve or the app's next choice) stays as it came.
            # A second LoRA run found LoRALinear where its nn.Linear targets had been and stopped with "no
            # linear layer named q_proj"; a module checkpointed once stayed checkpointed.
            self.module = copy.deepcopy(to_meta(self.module))
        with self.tracker:
            self.setup()
            kept: dict[str, int] = {}
            if self.workload.training:
                self.module.train()
                self.optimizer = make_optimizer(
                    [p for p in self.module.parameters() if p.requires_grad], self.workload.optimizer
                )
                self._grad_hooks()
                for iteration in range(2):
                    kept = self._train_iteration(measured=iteration == 1)
            else:
                self.module.eval()
                for iteration in range(2):
                    kept = self._infer_iteration(measured=iteration == 1)
            self.tracker.at("end", "")
        self.watch.remove()
        unique = {id(p): p for p in self.module.parameters()}
        return StepRun(
            self.tracker,
            self.watch,
            kept,
            self.notes,
            sum(p.numel() for p in unique.values()),
            sum(p.numel() for p in unique.values() if p.requires_grad),
        )

    def _grad_hooks(self) -> None:
        """A parameter's .grad becomes known when AccumulateGrad has run: recategorize it then."""

        def hook(param: torch.Tensor) -> None:
            if param.grad is not None:
                self.tracker.recategorize(param.grad, "gradients")

        for param in self.module.parameters():
            if param.requires_grad:
                param.register_post_accumulate_grad_hook(hook)  # type: ignore[no-untyped-call]

    def _forward(self) -> Any:
        args, kwargs = self.inputs
        self.tracker.default_category = "temporaries"
        with self.semantics:
            try:
                return self.module(*args, **kwargs)
            finally:
                self.tracker.at("forward", "loss")

    def _train_iteration(self, measured: bool) -> dict[str, int]:
        t = self.tracker
        if measured:
            t.reset_peak()
        t.at("forward", "zero_grad")
        self.optimizer.zero_grad(set_to_none=True)
        with self.watch.saving():
            out = self._forward()
            with self.semantics:
                loss = self.loss_fn(out, self.inputs)
        self.semantics.end_autocast_region()
        kept = self.watch.kept_bytes()
        t.at("backward", "loss")
        if self.workload.precision is Precision.AMP_FP16:  # GradScaler: scale(loss) multiplies by a 0-dim device tensor
            loss = loss * torch.full((), 65536.0, device=loss.device)
        t.engine.watch(loss)  # the engine's gradient accumulation, in place as on CUDA (simulate/accumulation.py)
        try:
            with self.semantics:  # checkpointed segments rerun their forward in backward, under CUDA's choices
                torch.autograd.backward(loss)
        finally:
            t.engine.stop()
        t.at("optimizer step", self.workload.optimizer)
        t.default_category = "temporaries"
        self.optimizer.step()
        for state in self.optimizer.state.values():
            for value in state.values():
                if isinstance(value, torch.Tensor):
                    t.recategorize(value, "optimizer_state")
        del out, loss
        return kept

    def _infer_iteration(self, measured: bool) -> dict[str, int]:
        if measured:
            self.tracker.reset_peak()
        with torch.inference_mode():
            out = self._forward()
        self.semantics.end_autocast_region()
        del out
        return {}


class SimulationError(SpecError):
    """The module did something the meta-device step cannot follow; the message names the layer."""


def run_step(module: nn.Module, make_inputs: MakeInputs, workload: Workload, loss_fn: LossFn | None) -> StepRun:
    runner = StepRunner(module, make_inputs, workload, loss_fn)
    try:
        return runner.run()
    except SpecError:
        raise
    except Exception as error:  # any failure inside the user's or the library's code: one line, with the layer
        from advisor.importers.torch_loader import describe_error

        watch = getattr(runner, "watch", None)  # forward hooks leave the failing module on the stack
        layer = watch.stack[-1] if watch is not None and watch.stack else runner.tracker.layer or "model"
        where = f"{runner.tracker.phase} of layer {layer}"
        raise SimulationError(f"the simulated step failed in the {where}: {describe_error(error)}") from None


__all__ = ["Inputs", "LossFn", "MakeInputs", "SimulationError", "StepRun", "run_step"]
