"""The simulated estimate on small models whose bytes can be written out by hand (torch only)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
nn = torch.nn
F = torch.nn.functional

from advisor.core import zoo  # noqa: E402
from advisor.core.analytic import estimate  # noqa: E402
from advisor.core.errors import SpecError  # noqa: E402
from advisor.core.workload import Workload  # noqa: E402
from advisor.importers.simulate import simulate_estimate  # noqa: E402
from advisor.importers.simulate.tracking import MemoryTracker  # noqa: E402
from advisor.importers.spec_estimate import simulator  # noqa: E402

MIB = 1 << 20


def inputs_of(*shape: int):  # type: ignore[no-untyped-def]
    return lambda batch: ((torch.randn(batch, *shape),), {})


def on_meta(build):  # type: ignore[no-untyped-def]
    with torch.device("meta"):
        return build()


def test_inference_of_one_linear_is_weights_input_and_output() -> None:
    model = on_meta(lambda: nn.Linear(1024, 1024, bias=False))
    est = simulate_estimate(model, inputs_of(1024), Workload("infer", 8, "fp32"))
    weights, batch_bytes = 1024 * 1024 * 4, 8 * 1024 * 4
    assert est.method == "simulated"
    assert est.memory.peak_bytes == weights + 2 * batch_bytes
    assert est.memory.at_peak.weights == weights
    assert est.memory.at_peak.inputs == batch_bytes
    assert est.forward_macs == 8 * 1024 * 1024


def test_steady_state_adam_is_five_times_the_parameters_at_the_step() -> None:
    """Weights, gradients, exp_avg, exp_avg_sq and the foreach step's sqrt(exp_avg_sq) temporary."""
    model = on_meta(
        lambda: nn.Sequential(nn.Linear(1024, 1024, bias=False), nn.ReLU(), nn.Linear(1024, 1024, bias=False))
    )
    est = simulate_estimate(model, inputs_of(1024), Workload("train", 8, "fp32", "adam"), lambda out, _: out.sum())
    params = 2 * 1024 * 1024 * 4
    at_peak = est.memory.at_peak
    assert est.memory.peak_phase == "optimizer step"
    assert (at_peak.weights, at_peak.gradients, at_peak.optimizer_state) == (params, params, 2 * params)
    # the step's temporary, plus the model output and the loss the caller still holds
    assert at_peak.temporaries == params + 8 * 1024 * 4 + 512
    assert est.memory.peak_bytes == 5 * params + 8 * 1024 * 4 * 2 + 512


def test_sgd_has_no_state_and_momentum_one_buffer() -> None:
    model = on_meta(lambda: nn.Linear(512, 512, bias=False))
    params = 512 * 512 * 4
    for optimizer, slots in (("sgd", 0), ("sgd_momentum", 1), ("adamw", 2)):
        est = simulate_estimate(
            model, inputs_of(512), Workload("train", 4, "fp32", optimizer), lambda out, _: out.sum()
        )
        assert est.memory.at_peak.optimizer_state in (slots * params, 0), optimizer
        assert est.memory.peak_bytes >= (2 + slots) * params


def _conv_bn_relu(inplace: bool) -> nn.Module:
    return nn.Sequential(
        nn.Conv2d(3, 16, 3, padding=1, bias=False),
        nn.BatchNorm2d(16),
        nn.ReLU(inplace=inplace),
        nn.Flatten(),
        nn.Linear(16 * 32 * 32, 10),
    )


def test_inplace_relu_allocates_nothing_but_autograd_keeps_the_same() -> None:
    """Batch norm keeps its input, ReLU its result. In place, the result is the BN output itself; otherwise
    the BN output dies once ReLU has read it. Either way two 16x32x32 maps per sample are kept, which is
    why the calibration measured the same peak for seed:cnn and seed:cnn_inplace."""
    workload = Workload("train", 8, "fp32", "sgd")
    plain = simulate_estimate(on_meta(lambda: _conv_bn_relu(False)), inputs_of(3, 32, 32), workload)
    inplace = simulate_estimate(on_meta(lambda: _conv_bn_relu(True)), inputs_of(3, 32, 32), workload)
    activation = 8 * 16 * 32 * 32 * 4
    for est in (plain, inplace):
        kept = {r.name: r.kept_bytes for r in est.layers}
        assert kept["0"] == activation  # the conv output, kept by batch norm
        assert kept["1"] + kept["2"] == activation + 2 * 512  # ReLU's result; BN's mean and inverse std
    assert plain.memory.peak_bytes == inplace.memory.peak_bytes
    tracker = MemoryTracker()
    with tracker:
        x = torch.empty(1024, 1024, device="meta")
        before = tracker.current
        x.relu_()
        assert tracker.current == before
        y = x.relu()
        assert tracker.current == before + 4 * MIB
    del y


def test_amp_casts_the_weight_once_and_keeps_it_for_backward() -> None:
    model = on_meta(lambda: nn.Linear(1024, 1024, bias=False))
    est = simulate_estimate(model, inputs_of(1024), Workload("infer", 8, "amp_bf16"))
    weights, cast = 1024 * 1024 * 4, 1024 * 1024 * 2
    # fp32 weights + bf16 weight cast + fp32 input + its bf16 cast + the bf16 output
    assert est.memory.peak_bytes == weights + cast + 8 * 1024 * 4 + 2 * 8 * 1024 * 2
    two = on_meta(lambda: nn.Sequential(nn.Linear(1024, 1024, bias=False), nn.Linear(1024, 1024, bias=False)))
    train = simulate_estimate(
        two, inputs_of(1024), Workload("train", 8, "amp_bf16", "sgd"), lambda out, _: out.float().sum()
    )
    kept = {r.name: r.kept_bytes for r in train.layers if r.kind == "Linear"}
    # the first layer's input needs no gradient, so only its input cast is kept (for the weight gradient);
    # the second keeps its cast weight too (for the input gradient)
    assert kept == {"0": 8 * 1024 * 2 + 8 * 1024 * 2, "1": cast}
    assert sum(r.kept_bytes for r in train.layers) == sum(kept.values())  # the loss's own row keeps nothing


def test_pure_half_precision_halves_weights() -> None:
    model = on_meta(lambda: nn.Linear(1024, 1024, bias=False))
    est = simulate_estimate(model, inputs_of(1024), Workload("infer", 8, "bf16"))
    assert est.memory.at_peak.weights == 1024 * 1024 * 2


class Block(nn.Module):
    """A tiny transformer block that calls F.scaled_dot_product_attention."""

    def __init__(self, dim: int = 64, heads: int = 2) -> None:
        super().__init__()
        self.heads, self.qkv, self.out = heads, nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):  # type: ignore[no-untyped-def]
        b, s, d = x.shape
        q, k, v = self.qkv(self.norm(x)).view(b, s, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return x + self.out(y.transpose(1, 2).reshape(b, s, d))


def test_attention_keeps_log_sum_exp_not_the_score_matrix() -> None:
    batch, seq = 2, 1024
    model = on_meta(Block)
    est = simulate_estimate(
        model, inputs_of(seq, 64), Workload("train", batch, "fp32", "sgd"), lambda out, _: out.sum()
    )
    scores = batch * 2 * seq * seq * 4  # what the math path (CPU kernels) would keep: 16 MiB
    assert est.memory.peak_bytes < scores
    attention_kept = next(r.kept_bytes for r in est.layers if r.name == "qkv")
    assert attention_kept == batch * seq * 3 * 64 * 4  # q, k, v: one qkv tensor


def test_amp_attention_uses_flash_and_half_outputs() -> None:
    est = simulate_estimate(on_meta(Block), inputs_of(2048, 64), Workload("infer", 2, "amp_fp16"))
    assert est.memory.peak_bytes < 2 * 2 * 2048 * 2048 * 2 / 4  # far below one half-precision score matrix


def test_data_dependent_branch_gets_a_stand_in() -> None:
    class Gate(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Linear(16, 16)

        def forward(self, x):  # type: ignore[no-untyped-def]
            if bool((x > 0).all()):
                return self.fc(x)
            return x

    est = simulate_estimate(on_meta(Gate), inputs_of(16), Workload("infer", 4, "fp32"))
    assert est.forward_macs == 4 * 16 * 16


@pytest.mark.parametrize(
    ("name", "batch", "optimizer"),
    [("seed:mlp", 64, "adam"), ("seed:cnn", 4, "sgd"), ("seed:cnn_inplace", 4, "sgd_momentum")],
)
def test_simulated_agrees_with_analytic_on_seed_models(name: str, batch: int, optimizer: str) -> None:
    path = Path(__file__).resolve().parents[2] / "benchmarks" / "models" / f"{name.replace(':', '_')}.py"
    workload = Workload("train", batch, "fp32", optimizer)  # type: ignore[arg-type]
    simulated = simulator(str(path))(workload)  # the loader `advisor estimate FILE.py` uses
    analytic = estimate(zoo.build(name), workload)
    assert simulated.param_count == analytic.param_count
    assert simulated.memory.peak_bytes == pytest.approx(analytic.memory.peak_bytes, rel=0.04)
    assert simulated.forward_macs == pytest.approx(analytic.forward_macs, rel=0.02)


def test_reserved_and_device_total_cover_the_peak() -> None:
    model = on_meta(lambda: _conv_bn_relu(False))
    est = simulate_estimate(model, inputs_of(3, 32, 32), Workload("train", 8, "fp32", "adam"))
    mem = est.memory
    assert mem.peak_bytes <= mem.reserved_bytes <= mem.required_bytes + 40 * MIB
    assert mem.device_total_bytes > mem.reserved_bytes + 1000 * MIB  # context and driver
    assert est.step_flops > 2 * est.forward_flops


def test_a_cpu_module_is_moved_to_meta_and_left_usable() -> None:
    model = nn.Linear(8, 8)
    est = simulate_estimate(model, inputs_of(8), Workload("infer", 2, "fp32"))
    assert est.param_count == 72


class TiedHead(nn.Module):
    """An LM head sharing the embedding's weight (GPT-2's lm_head and wte), built on the CPU."""

    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(1000, 64)
        self.head = nn.Linear(64, 1000, bias=False)
        self.head.weight = self.embed.weight

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.head(self.embed(ids))


def test_a_cpu_module_keeps_its_tied_weights_on_meta() -> None:
    ids = lambda batch: ((torch.zeros(batch, dtype=torch.long),), {})  # noqa: E731
    est = simulate_estimate(TiedHead(), ids, Workload("train", 1, "fp32", "adam"))
    weight = 1000 * 64 * 4  # 256,000 B, a multiple of 512: one weight, not one per module
    assert est.param_count == 64_000
    assert est.memory.at_peak.weights == weight
    assert est.memory.at_peak.optimizer_state == 2 * weight  # exp_avg and exp_avg_sq of the one weight


def test_loader_reads_a_model_file(tmp_path: Path) -> None:
    file = tmp_path / "tiny.py"
    file.write_text(
        "import torch\nfrom torch import nn\n"
        "def build_model():\n    return nn.Linear(4, 2)\n"
        "def example_inputs(batch_size):\n    return torch.randn(batch_size, 4)\n"
    )
    est = simulator(str(file))(Workload("train", 3, "fp32", "sgd"))
    assert est.param_count == 10 and est.method == "simulated"


def test_loader_refuses_files_without_the_functions(tmp_path: Path) -> None:
    file = tmp_path / "empty.py"
    file.write_text("x = 1\n")
    with pytest.raises(SpecError, match="build_model"):
        simulator(str(file))
    with pytest.raises(SpecError, match=r"no such file|not found|does not exist"):
        simulator(str(tmp_path / "missing.py"))


class _Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.q_proj = nn.Linear(256, 256, bias=False)

    def forward(self, x):  # type: ignore[no-untyped-def]
        return self.q_proj(x)


def test_a_module_simulated_twice_with_lora_and_in_bf16_is_left_as_it_came() -> None:
    """recommend simulates one module at several batches: the second LoRA run found LoRALinear where q_proj had
    been ("no linear layer named q_proj"), and a pure-bf16 run left the caller's weights in bf16."""
    model = on_meta(_Block)
    lora = Workload("train", 4, "bf16", "adam", finetune="lora", lora_rank=8, lora_targets=("q_proj",))
    loss = lambda out, _: out.float().sum()  # noqa: E731
    first = simulate_estimate(model, inputs_of(256), lora, loss)
    second = simulate_estimate(model, inputs_of(256), lora, loss)
    assert first.memory.peak_bytes == second.memory.peak_bytes
    assert isinstance(model.q_proj, nn.Linear) and model.q_proj.weight.dtype == torch.float32
    # the base frozen in bf16, 256 x 256 x 2 B, and two rank-8 adapters (8 x 256 each) trained in fp32, as
    # PEFT upcasts them (autocast_adapter_dtype); kept in the base's bf16 with adapter_dtype base
    assert first.memory.at_peak.weights == 256 * 256 * 2 + 2 * 8 * 256 * 4
    base = simulate_estimate(model, inputs_of(256), replace(lora, adapter_dtype="base"), loss)
    assert base.memory.at_peak.weights == 256 * 256 * 2 + 2 * 8 * 256 * 2
