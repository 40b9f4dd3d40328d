"""`advisor fit`: the JSON contract of issue 10, the text table, one-line errors with exit code 2."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from advisor import cli
from advisor.catalog import open_catalog
from advisor.core import zoo
from advisor.core.analytic import estimate
from advisor.core.workload import Workload

KEYS = {"change", "peak_bytes", "fits", "step_time_s", "note", "required_bytes", "usable_bytes"}


@pytest.fixture(scope="module")
def catalog_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One seeded catalog for the module; each run reads its own copy (tests/test_cli_bad_input.py's rule)."""
    path = tmp_path_factory.mktemp("catalog") / "catalog.sqlite3"
    open_catalog(path).close()
    return path


@dataclass(frozen=True)
class Run:
    returncode: int
    stdout: str
    stderr: str


Fit = Callable[..., Run]


@pytest.fixture
def run(catalog_file: Path) -> Fit:
    """`advisor fit ARGS` in this process: a subprocess per test spent its time importing the program and
    seeding a catalog again; the real entry point is tested in tests/test_cli_bad_input.py."""

    def fit(tmp_path: Path, *args: str) -> Run:
        catalog = tmp_path / "c.sqlite3"
        shutil.copyfile(catalog_file, catalog)
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = cli.main(["fit", *args, "--catalog", str(catalog)])
            except SystemExit as exit_:  # argparse's own errors
                code = exit_.code if isinstance(exit_.code, int) else 1
        return Run(code, out.getvalue(), err.getvalue())

    return fit


def test_json_entries_carry_the_contract_keys_and_the_estimators_numbers(tmp_path: Path, run: Fit) -> None:
    result = run(
        tmp_path,
        "zoo:gpt2-medium",
        "--seq-len",
        "1024",
        "--batch",
        "8",
        "--gpu",
        "RTX 3060 12GB",
        "--allow-8bit",
        "--json",
    )
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["card"] == "GeForce RTX 3060" and data["needs_help"]
    entries = [data["current"], *data["changes"], *data["combinations"], *data["sharding"]]
    assert all(set(e) >= KEYS for e in entries)
    assert not data["current"]["fits"]
    ckpt = next(e for e in data["changes"] if e["changes"] == ["checkpointing"])
    direct = estimate(zoo.build("gpt2-medium", 1024), Workload(batch=8, checkpointing=True))
    assert ckpt["peak_bytes"] == direct.memory.peak_bytes
    assert ckpt["required_bytes"] == direct.memory.required_bytes
    assert ckpt["usable_bytes"] == data["usable_bytes"]
    cheapest = data["cheapest"]
    assert cheapest["fits"] and cheapest["required_bytes"] <= cheapest["usable_bytes"]
    assert cheapest == data["combinations"][0]
    eight = next(e for e in data["changes"] if e["changes"] == ["adam_8bit"])
    assert eight["settings"] == {"optimizer": "adamw8bit"} and "bitsandbytes AdamW8bit" in eight["note"]


def test_text_lists_changes_and_the_cheapest_set(tmp_path: Path, run: Fit) -> None:
    # batch 160: 128 needs 11.12 GiB of the 11.20 usable since the replay margin is 20 MiB, not 1% of the peak
    result = run(tmp_path, "zoo:resnet50", "--batch", "160", "--gpu", "RTX 3060 12GB")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "does not fit" in out and "mixed precision (bf16 autocast)" in out
    assert "Fewest changes that fit, keeping the training the same" in out
    assert "--allow-8bit" in out


def test_unknown_gpu_is_one_line_and_exit_2(tmp_path: Path, run: Fit) -> None:
    result = run(tmp_path, "zoo:resnet50", "--gpu", "RTX 3O60")
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "unknown card" in result.stderr


def test_missing_gpu_and_bad_spec_are_usage_errors(tmp_path: Path, run: Fit) -> None:
    assert run(tmp_path, "zoo:resnet50").returncode == 2
    bad = run(tmp_path, "zoo:resnet5000", "--gpu", "T4")
    assert bad.returncode == 2 and "unknown zoo model" in bad.stderr and "Traceback" not in bad.stderr


MODEL_FILE = """
import torch
from torch import nn

def build_model():
    return nn.Sequential(nn.Conv2d(3, 64, 3, padding=1), nn.ReLU(), nn.Conv2d(64, 64, 3, padding=1), nn.ReLU(),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 1000))

def example_inputs(batch_size):
    return (torch.randn(batch_size, 3, 224, 224),)
"""


def test_a_pytorch_module_is_simulated_where_the_change_is_a_workload_change(tmp_path: Path, run: Fit) -> None:
    model = tmp_path / "convnet.py"
    model.write_text(MODEL_FILE)
    result = run(tmp_path, str(model), "--batch", "512", "--gpu", "T4", "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["current"]["method"] == "simulated"
    methods = {tuple(e["changes"]): e["method"] for e in data["changes"]}
    assert methods[("amp_fp16",)] == methods[("batch",)] == "simulated"  # the simulator runs these
    assert methods[("freeze_head",)] == methods[("accumulate",)] == "analytic"  # graph rewrites: analytic
    assert ("amp_bf16",) not in methods  # a T4 has no bf16


def test_generation_offers_quantized_weights_by_their_measured_bytes(tmp_path: Path, run: Fit) -> None:
    result = run(
        tmp_path,
        "zoo:llama-3.1-8b",
        "--mode",
        "generate",
        "--precision",
        "bf16",
        "--batch",
        "1",
        "--prompt-len",
        "4096",
        "--new-tokens",
        "512",
        "--gpu",
        "RTX 4060 Ti 16GB",
        "--json",
    )
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert not data["current"]["fits"]
    changes = {tuple(e["changes"]): e for e in data["changes"]}
    assert changes[("weights_int4",)]["fits"] and changes[("weights_int4",)]["settings"] == {"weights": "int4"}
    assert changes[("weights_int4",)]["required_bytes"] < changes[("weights_int8",)]["required_bytes"]


def test_a_gguf_file_is_fitted_as_it_is_stored_as_estimate_and_recommend_see_it(tmp_path: Path) -> None:
    """`fit` judged a Q4_K_M file in fp32 weights (750 MiB where `estimate` said 24 MiB): the fit's workload
    must be the file's own storage, the one `estimate` reports."""
    from advisor.cli import build_parser
    from advisor.commands.fit import _card, subject_for
    from advisor.importers.spec_estimate import estimate_spec
    from advisor.recommend.fit.measure import target
    from advisor.recommend.fit.search import make_it_fit
    from tests.gguf_files import write_gguf

    model = str(write_gguf(tmp_path / "tiny-Q4_K_M.gguf"))
    words = ["fit", model, "--mode", "generate", "--batch", "4", "--gpu", "T4"]
    args = build_parser(words).parse_args(words)
    subject = subject_for(model, args)
    assert subject.workload.weights == "q4_k_m"  # general.file_type 15
    report = make_it_fit(subject, target(_card("T4", str(tmp_path / "c.sqlite3"))))
    direct = estimate_spec(model, subject.workload)
    assert report.current.measured.required_bytes == direct.memory.required_bytes


# What only training has: a backward pass, gradients, optimizer state (and its 8-bit footnote), a GradScaler
TRAINING_WORDS = ("GradScaler", "gradient", "optimizer", "backward", "learning rate", "training", "--allow-8bit")
LLAMA_1B = Path(__file__).resolve().parents[2] / "advisor/data/llm_configs/llama-3.2-1b/config.json"


@pytest.mark.parametrize(
    "args",
    [
        # batch 1024 of fp32: amp, pure bf16, the batch in parts and a smaller batch are all offered
        ("zoo:resnet50", "--mode", "infer", "--batch", "1024"),
        ("hf:" + str(LLAMA_1B), "--mode", "generate", "--batch", "64", "--precision", "bf16", "--prompt-len", "4096"),
    ],
)
def test_inference_and_generation_notes_use_no_training_words(tmp_path: Path, run: Fit, args: tuple[str, ...]) -> None:
    text = run(tmp_path, *args, "--gpu", "RTX 3060 12GB")
    data = run(tmp_path, *args, "--gpu", "RTX 3060 12GB", "--json")
    assert text.returncode == data.returncode == 0, text.stderr + data.stderr
    entries = json.loads(data.stdout)
    changes = {c for e in entries["changes"] for c in e["changes"]}
    assert "accumulate" in changes and "batch" in changes, changes  # the changes with training words in training
    words = text.stdout + " ".join(e["change"] + " " + e["note"] for e in (entries["current"], *entries["changes"]))
    assert [w for w in TRAINING_WORDS if w.lower() in words.lower()] == []
    assert "the batch in parts" in text.stdout and "the same outputs" in text.stdout
