"""hf:CONFIG.json and transformers models in FILE.py: the failures issue 14 lists, each reproduced on a tiny
config (2 layers, hidden 64) built on the meta device."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import torch
import transformers
from torch.nn import functional as F

from advisor.core.workload import Workload
from advisor.importers.hf_model import head_of
from advisor.importers.simulate import simulate_estimate
from advisor.importers.simulate.attention import cuda_sdpa
from advisor.importers.simulate.step import SimulationError
from advisor.importers.spec_estimate import estimate_spec
from advisor.importers.torch_loader import load_module

SMALL = {
    "num_hidden_layers": 2,
    "hidden_size": 64,
    "intermediate_size": 128,
    "num_attention_heads": 4,
    "vocab_size": 1000,
    "max_position_embeddings": 128,
}


def write_config(tmp_path: Path, config: Any) -> str:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config.to_dict()))
    return f"hf:{path}"


def meta_params(spec: str) -> int:
    """sum(p.numel()) of the very module the spec loads (built on the meta device)."""
    return sum(p.numel() for p in load_module(spec, seq_len=16).module.parameters())


def llama(tmp_path: Path) -> str:
    cfg = transformers.LlamaConfig(**SMALL, num_key_value_heads=2, architectures=["LlamaForCausalLM"])
    return write_config(tmp_path, cfg)


def test_causal_lm_trains_on_its_input_ids_as_labels(tmp_path: Path) -> None:
    spec = llama(tmp_path)
    est = estimate_spec(spec, Workload("train", 2, "amp_bf16"), seq_len=16)
    # embed 1000*64 + 2 layers * (q 64*64 + k,v 2*64*32 + o 64*64 + mlp 3*64*128 + 2 norms 2*64) + norm 64
    # + lm_head 64*1000 = 64000 + 2*36992 + 64 + 64000 = 202048
    assert est.param_count == meta_params(spec) == 202048
    assert est.memory.at_peak.gradients > 0 or est.memory.at_peak.optimizer_state > 0


def test_the_head_comes_from_architectures(tmp_path: Path) -> None:
    cfg = transformers.BertConfig(**SMALL, architectures=["BertForMaskedLM"])
    loaded = load_module(write_config(tmp_path, cfg), seq_len=16)
    assert type(loaded.module).__name__ == "BertForMaskedLM"
    assert loaded.train_inputs is not None
    _, kwargs = loaded.train_inputs(3)
    assert kwargs["labels"].shape == (3, 16)  # one target token per position, not one class per sample
    assert head_of("BertForSequenceClassification") == "per_sample"
    assert head_of("T5ForConditionalGeneration") == "seq2seq"
    assert "labels" not in loaded.example_inputs(3)[1]  # inference runs no loss


def test_masked_lm_training_estimates(tmp_path: Path) -> None:
    spec = write_config(tmp_path, transformers.BertConfig(**SMALL, architectures=["BertForMaskedLM"]))
    est = estimate_spec(spec, Workload("train", 2), seq_len=16)
    assert est.param_count == meta_params(spec)
    assert est.memory.at_peak.gradients + est.memory.at_peak.optimizer_state > 0


def test_grouped_query_attention_takes_flash_in_half_precision_without_copies() -> None:
    q = torch.empty(2, 4, 16, 16, device="meta", dtype=torch.bfloat16)
    kv = torch.empty(2, 1, 16, 16, device="meta", dtype=torch.bfloat16)
    out = cuda_sdpa(q, kv, kv, is_causal=True, enable_gqa=True)
    assert out.shape == (2, 4, 16, 16)


def test_grouped_query_attention_in_float32_repeats_keys_and_values() -> None:
    """Memory-efficient attention has no GQA: the math path expands K and V to the query's 4 heads and keeps
    the 16 x 16 scores, so its forward allocates more than flash's output and log-sum-exp."""

    class Gqa(torch.nn.Module):
        def forward(self, q: torch.Tensor, kv: torch.Tensor) -> torch.Tensor:
            return F.scaled_dot_product_attention(q, kv, kv, enable_gqa=True)

    def inputs(batch: int) -> Any:
        return (torch.randn(batch, 4, 16, 16), torch.randn(batch, 1, 16, 16)), {}

    est = simulate_estimate(Gqa(), inputs, Workload("infer", 2, "fp32"))
    scores = 2 * 4 * 16 * 16 * 4  # batch * heads * seq * seq * 4 bytes = 8192
    assert est.memory.peak_bytes >= scores + 2 * 4 * 16 * 16 * 4


def test_llama_file_py_with_gqa_estimates(tmp_path: Path) -> None:
    file = tmp_path / "llama_model.py"
    file.write_text(
        "import torch, transformers\n"
        f"CFG = transformers.LlamaConfig(**{SMALL!r}, num_key_value_heads=1)\n"
        "def build_model():\n    return transformers.LlamaForCausalLM(CFG)\n"
        "def example_inputs(batch_size):\n"
        "    ids = torch.randint(0, 1000, (batch_size, 16))\n"
        "    return {'input_ids': ids, 'labels': ids}\n"
    )
    for mode in ("train", "infer"):
        est = estimate_spec(str(file), Workload(mode, 2, "amp_bf16"))
        assert est.param_count == meta_params(str(file))


def test_analytic_method_traces_a_decoder_on_the_meta_device(tmp_path: Path) -> None:
    spec = llama(tmp_path)
    est = estimate_spec(spec, Workload("train", 2), seq_len=16, method="analytic")
    assert est.method == "analytic"
    assert est.param_count == 202048  # as in test_causal_lm_trains_on_its_input_ids_as_labels


def test_checkpointing_a_transformers_model_saves_memory(tmp_path: Path) -> None:
    spec = write_config(tmp_path, transformers.BertConfig(**SMALL, architectures=["BertForMaskedLM"]))
    for precision in ("fp32", "amp_bf16"):
        plain = estimate_spec(spec, Workload("train", 8, precision), seq_len=64)
        checkpointed = estimate_spec(spec, Workload("train", 8, precision, checkpointing=True), seq_len=64)
        assert checkpointed.memory.peak_bytes < plain.memory.peak_bytes


VIEWED_PARAMETER = '''
import torch
from torch import nn


class ClassToken(nn.Module):
    """ViT's pattern: a learned class token expanded to the batch, and a layer scale."""
    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(8, 16)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, 16))
        self.gamma = nn.Parameter(torch.ones(16))
        self.head = nn.Linear(16, 10)

    def forward(self, x):
        tokens = self.embed(x)
        cls = self.cls_token.expand(x.shape[0], -1, -1)
        tokens = torch.cat([cls, tokens], dim=1) * self.gamma.view(1, 1, -1)
        return self.head(tokens[:, 0])


def build_model():
    return ClassToken()


def example_inputs(batch_size):
    return (torch.randn(batch_size, 5, 8),)
'''


def test_a_view_of_a_parameter_is_a_node_of_its_own(tmp_path: Path) -> None:
    file = tmp_path / "class_token.py"
    file.write_text(VIEWED_PARAMETER)
    est = estimate_spec(str(file), Workload("train", 4), method="analytic")
    assert est.param_count == (8 * 16 + 16) + 16 + 16 + (16 * 10 + 10)  # 144 + 16 + 16 + 170 = 346


def test_t5_and_vit_configs_estimate(tmp_path: Path) -> None:
    t5 = transformers.T5Config(
        num_layers=2,
        d_model=64,
        d_ff=128,
        num_heads=4,
        d_kv=16,
        vocab_size=1000,
        architectures=["T5ForConditionalGeneration"],
    )
    vit = transformers.ViTConfig(
        **{**SMALL, "vocab_size": None}, image_size=32, patch_size=8, architectures=["ViTForImageClassification"]
    )
    for index, cfg in enumerate((t5, vit)):
        folder = tmp_path / str(index)
        folder.mkdir()
        spec = write_config(folder, cfg)
        for mode in ("train", "infer"):
            for method in ("simulated", "analytic"):
                est = estimate_spec(spec, Workload(mode, 2), seq_len=16, method=method)
                assert est.param_count == meta_params(spec), (spec, mode, method)


NEEDS_VALUES = """
import torch
from torch import nn


class Gate(nn.Module):
    def forward(self, x):
        return x[:, : int(x.detach().cpu().numpy().size)]  # reads values: not possible on the meta device


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.gate = Gate()

    def forward(self, x):
        return self.gate(self.fc(x))


def build_model():
    return Model()


def example_inputs(batch_size):
    return (torch.randn(batch_size, 8),)
"""


def test_a_step_the_simulation_cannot_follow_is_one_line_naming_the_layer(tmp_path: Path) -> None:
    file = tmp_path / "needs_values.py"
    file.write_text(NEEDS_VALUES)
    try:
        estimate_spec(str(file), Workload("train", 2), method="simulated")
    except SimulationError as error:
        assert "layer gate" in str(error) and "\n" not in str(error)
    else:
        raise AssertionError("the meta device cannot hand out values")
    est = estimate_spec(str(file), Workload("train", 2))  # auto: the layer graph answers, and says why
    assert est.method == "analytic"
    assert est.param_count == 8 * 8 + 8  # 72
    assert any("layer gate" in line for line in est.assumptions)


def test_the_workload_precision_decides_the_weights_not_the_config_dtype(tmp_path: Path) -> None:
    """Published configs name dtype bfloat16; an fp32 workload still holds 4 bytes a parameter."""
    cfg = transformers.LlamaConfig(**SMALL, num_key_value_heads=2, architectures=["LlamaForCausalLM"], dtype="bfloat16")
    est = estimate_spec(write_config(tmp_path, cfg), Workload("infer", 1, "fp32"), seq_len=16)
    assert est.memory.at_peak.weights >= 4 * 202048  # the Llama above: 202,048 parameters x 4 bytes
