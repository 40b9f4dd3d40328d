"""Dtypes of traced ops under autocast that the shown inputs alone do not decide."""

from __future__ import annotations

import torch
from torch import nn

from advisor.core.analytic import estimate
from advisor.core.workload import Workload
from advisor.importers.torch_graph import module_to_graph
from advisor.importers.torch_loader import LoadedModel


class LogitsBias(nn.Module):
    """BartForConditionalGeneration: lm_logits = lm_head(h) + final_logits_bias (a float32 buffer)."""

    def __init__(self) -> None:
        super().__init__()
        self.lm_head = nn.Linear(16, 250, bias=False)
        self.register_buffer("final_logits_bias", torch.zeros(1, 250))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.lm_head(x) + self.final_logits_bias


def test_a_float32_buffer_operand_makes_the_result_float32_under_autocast() -> None:
    loaded = LoadedModel("m", LogitsBias(), lambda b: ((torch.randn(b, 16),), {}), None, "m.py", "classification")
    graph = module_to_graph(loaded)
    add = graph.nodes[-1]
    assert add.op.kind == "opaque" and getattr(add.op, "fp32_operand", False)
    # inference at batch 4 under bf16 autocast: lm_head's bf16 logits (4 x 250 x 2 = 2,000 -> 2,048 B) and
    # the float32 sum (4 x 250 x 4 = 4,000 -> 4,096 B) are live together when the add runs
    result = estimate(graph, Workload("infer", 4, "amp_bf16"))
    rows = {r.name: r for r in result.layers}
    assert rows["lm_head"].output_bytes == 4 * 250 * 2  # the row reports the precision's dtype
    # lm_head's weight 16*250*4 = 16,000 -> 16,384 B, the loose buffer 250*4 = 1,000 -> 1,024 B (counted by the
    # add that reads it) and the input 4*16*4 = 256 -> 512 B stay; autocast keeps no cached weight cast under
    # inference_mode (PyTorch >= 2.11), so the bf16 weight copy (8,192 B) and the input's (512 B) live only while
    # lm_head runs: the peak, with its bf16 logits
    assert add.op.buffer_count([]) == 250
    assert result.memory.peak_bytes == 16_384 + 8_192 + 1_024 + 512 + 512 + 2_048
    after_add = next(p.total_bytes for p in result.timeline if p.layer == add.name)
    assert after_add == 16_384 + 1_024 + 512 + 4_096  # the float32 sum replaced the bf16 logits


class Scaled(nn.Module):
    """WhisperAttention: q_proj(x) * scaling, then transpose(1, 2).contiguous() copies."""

    def __init__(self) -> None:
        super().__init__()
        self.q_proj = nn.Linear(16, 16)

    def forward(self, x: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
        q = (self.q_proj(x) * 0.25).view(x.shape[0], 8, 4, 4).transpose(1, 2).contiguous()
        return torch.where(keep, q, q.exp())


class RMSNormLike(nn.Module):
    """T5LayerNorm: the normalisation written out in float32 ops, a `variance_epsilon`, no bias."""

    def __init__(self) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(16))
        self.variance_epsilon = 1e-6

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        variance = x.to(torch.float32).pow(2).mean(-1, keepdim=True)
        return self.weight * (x * torch.rsqrt(variance + self.variance_epsilon))


def test_copies_scalar_arithmetic_and_where_keep_what_autograd_keeps() -> None:
    def inputs(b: int) -> tuple[tuple[torch.Tensor, ...], dict[str, torch.Tensor]]:
        return (torch.randn(b, 8, 16), torch.rand(b, 4, 8, 4) > 0.5), {}

    graph = module_to_graph(LoadedModel("m", Scaled(), inputs, None, "m.py", "classification"))
    ops = {n.op.op_name: n for n in graph.nodes if n.op.kind == "opaque"}  # type: ignore[attr-defined]
    # mul by a Python number keeps only the number, contiguous() is a copy whose backward passes the
    # gradient on, and where keeps its boolean condition (input 0) but neither branch
    assert ops["mul"].op.saved_inputs() == () and ops["contiguous"].op.saved_inputs() == ()
    assert ops["where"].op.saved_inputs() == (0,)
    # exp's derivative is grad * result (derivatives.yaml): it keeps its output, not its input
    assert ops["exp"].op.saved_inputs() == () and ops["exp"].op.saves_result()
    assert not ops["where"].op.saves_result() and not ops["mul"].op.saves_result()


def test_a_python_rms_norm_module_is_rmsnorm() -> None:
    loaded = LoadedModel(
        "m", nn.Sequential(RMSNormLike()), lambda b: ((torch.randn(b, 8, 16),), {}), None, "m.py", "classification"
    )
    node = module_to_graph(loaded).nodes[-1]
    # RMSNorm keeps the input, the normalised copy and one rsqrt per row: 16 weights
    assert node.op.kind == "rmsnorm" and node.op.param_count([node.output]) == 16


class Windows(nn.Module):
    """SwinLayer: pad to whole windows and roll for the shifted windows, then a projection."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(16, 16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        padded = nn.functional.pad(x, (0, 0, 0, 2))
        return self.proj(torch.cat([torch.roll(padded, 1, dims=1), padded], dim=1))


def test_pad_roll_and_cat_keep_nothing() -> None:
    loaded = LoadedModel("m", Windows(), lambda b: ((torch.randn(b, 6, 16),), {}), None, "m.py", "classification")
    graph = module_to_graph(loaded)
    # their backward slices, rolls back or splits the gradient: sizes only (derivatives.yaml)
    for node in graph.nodes[1:-1]:
        assert node.op.saved_inputs() == (), node.name
    assert [n.op.kind for n in graph.nodes][-1] == "linear" and len(graph.nodes) == 5  # input, pad, roll, cat


class SwinDropPath(nn.Module):
    """transformers' drop_path: one Bernoulli draw per sample scales the whole sample."""

    def __init__(self) -> None:
        super().__init__()
        self.drop_prob = 0.2

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.training:
            return x
        keep = (torch.rand(x.shape[0], 1, 1) + 0.8).floor()
        return x.div(0.8) * keep


def test_a_drop_path_module_keeps_one_number_per_sample() -> None:
    model = nn.Sequential(nn.Linear(16, 16), SwinDropPath(), nn.Linear(16, 4))
    loaded = LoadedModel("m", model, lambda b: ((torch.randn(b, 8, 16),), {}), None, "m.py", "classification")
    node = module_to_graph(loaded).nodes[2]
    # training keeps the per-sample noise only (MulBackward needs the factor without a gradient); inference
    # returns the input itself
    assert node.op.kind == "stochastic_depth" and node.op.saved_inputs() == ()
    assert node.op.is_identity(False) and not node.op.is_identity(True)


class Gram(nn.Module):
    """A matmul between two activations, no module around it (Mamba's scan: ssm_state @ C)."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(16, 16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.matmul(x, self.proj(x).transpose(-1, -2))


def test_an_unmapped_matmul_runs_in_half_precision_under_autocast() -> None:
    loaded = LoadedModel("m", Gram(), lambda b: ((torch.randn(b, 8, 16),), {}), None, "m.py", "classification")
    graph = module_to_graph(loaded)
    index = len(graph.nodes) - 1
    assert graph.nodes[index].op.kind == "opaque_matmul"
    from advisor.core.replay import replay_step

    events = {key: size for key, size in replay_step(graph, Workload("infer", 4, "amp_bf16")).events if size > 0}
    # the (8, 8) product of 4 samples in bf16: 4*8*8*2 = 512 B; the float32 input is cast to bf16 for it
    # (4*8*16*2 = 1,024 B), the projection's output is bf16 already (no cast)
    assert events[("out", index, 0)] == 512
    assert events[("cast", index, 0)] == 1_024 and ("cast", index, 1) not in events


def test_transformers_composite_activations_keep_what_their_python_formulas_keep() -> None:
    from transformers.activations import NewGELUActivation, QuickGELUActivation

    model = nn.Sequential(nn.Linear(16, 32), NewGELUActivation(), nn.Linear(32, 32), QuickGELUActivation())
    loaded = LoadedModel("m", model, lambda b: ((torch.randn(b, 8, 16),), {}), None, "m.py", "classification")
    graph = module_to_graph(loaded)
    assert [n.op.kind for n in graph.nodes][2::2] == ["gelu_tanh_composite", "quick_gelu"]
    from advisor.core.replay import replay_step

    kept = replay_step(graph, Workload("train", 4, "fp32", "sgd")).kept_bytes
    # quick_gelu on 4 x 8 x 32 fp32 elements (4,096 B): the input x (kept where it is made, by the Linear)
    # and sigmoid(1.702 x), 4,096 B
    assert kept[4] == 4_096


class MaskFromShape(nn.Module):
    """DeBERTa without an attention_mask: `torch.ones(input_shape)` made inside the forward."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(16, 16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        mask = torch.ones(x.shape[:2], device=x.device)
        shared = torch.zeros(8, 1, device=x.device).expand(x.shape[0], 8, 1)  # a view: no memory of its own
        return self.proj(x) * mask.unsqueeze(-1) + shared


def test_a_tensor_sized_by_the_batch_made_in_forward_is_a_node() -> None:
    loaded = LoadedModel("m", MaskFromShape(), lambda b: ((torch.randn(b, 8, 16),), {}), None, "m.py", "classification")
    graph = module_to_graph(loaded)
    ones = next(n for n in graph.nodes if n.name == "ones1")
    # 8 float32 ones per sample: 4 x 8 x 4 = 128 B at batch 4, made whatever the graph's inputs are
    assert ones.inputs == () and ones.output.shape == (8,) and ones.output.batched
    assert not any(n.name.startswith(("zeros", "expand")) for n in graph.nodes)


def test_softmax_converts_bfloat16_but_reads_float16_as_is() -> None:
    from advisor.core.graph import GraphBuilder
    from advisor.core.ops import Input, Linear, Softmax
    from advisor.core.replay import replay_step

    b = GraphBuilder("scores")
    x = b.add(Input((128, 64)), [])
    h = b.add(Linear(128), [x], "scores")
    b.add(Softmax(), [h], "softmax")
    graph = b.build()

    def made(precision: str) -> dict[tuple[str, int, int], int]:
        events = replay_step(graph, Workload("infer", 4, precision)).events  # type: ignore[arg-type]
        return {key: size for key, size in events if size > 0}

    # 4 x 128 x 128 scores: bfloat16 ones are converted to a float32 copy (262,144 B) before the kernel,
    # float16 ones are read as they are; the result is float32 (262,144 B) either way
    assert made("amp_bf16")[("cast", 2, 0)] == 262_144 and made("amp_bf16")[("out", 2, 0)] == 262_144
    assert ("cast", 2, 0) not in made("amp_fp16") and made("amp_fp16")[("out", 2, 0)] == 262_144


class ClassToken(nn.Module):
    """ViTEmbeddings: the class token parameter expanded to the batch and put before the patches."""

    def __init__(self) -> None:
        super().__init__()
        self.cls_token = nn.Parameter(torch.zeros(1, 1, 16))
        self.proj = nn.Linear(16, 16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.proj(torch.cat([self.cls_token.expand(x.shape[0], -1, -1), x], dim=1))


def test_a_view_of_a_parameter_is_that_parameter_not_a_new_tensor() -> None:
    loaded = LoadedModel("m", ClassToken(), lambda b: ((torch.randn(b, 8, 16),), {}), None, "m.py", "classification")
    graph = module_to_graph(loaded)
    index = next(i for i, n in enumerate(graph.nodes) if n.name.startswith("expand"))
    assert graph.nodes[index].op.is_view and graph.nodes[index].op.param_count([]) == 16
    from advisor.core.replay import replay_step

    events = replay_step(graph, Workload("train", 4, "fp32", "sgd")).events
    # the expand allocates nothing (4 x 1 x 16 floats would be 256 B); its 16 weights (64 -> 512 B) are
    # allocated once and never freed
    assert ("out", index, 0) not in dict(events)
    assert [size for key, size in events if key == ("weights", index, 0)] == [512]
