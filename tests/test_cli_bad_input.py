"""Bad input on the command line: exit code 2 and exactly one line on stderr, never a traceback (issue 16).

The CLI runs in-process (advisor.cli.main with argv, stderr captured), so each case costs milliseconds; a
property test drives every subcommand with generated bad values, and a few cases run the real entry point."""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from advisor import cli
from advisor.catalog import open_catalog
from advisor.commands import types

ROOT = Path(__file__).resolve().parents[1]
Outcome = tuple[int, str]


@pytest.fixture(scope="module")
def catalog_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One seeded catalog for the module; each test works on a copy, so no case sees another's edits."""
    path = tmp_path_factory.mktemp("catalog") / "catalog.sqlite3"
    open_catalog(path).close()
    return path


@pytest.fixture(autouse=True)
def _private_catalog(tmp_path: Path, catalog_file: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    copy = tmp_path / "catalog.sqlite3"
    shutil.copyfile(catalog_file, copy)
    monkeypatch.setenv("ADVISOR_CATALOG", str(copy))
    yield


def run(argv: list[str]) -> Outcome:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            code = cli.main(argv)
        except SystemExit as exit_:  # argparse's own errors
            code = exit_.code if isinstance(exit_.code, int) else 1
    return code, err.getvalue()


def assert_one_line_error(outcome: Outcome) -> None:
    code, err = outcome
    assert code == 2, err
    assert err.count("\n") == 1 and err.endswith("\n") and "Traceback" not in err, err


LONG = "n" * 256  # one byte over the file-name limit of ext4, XFS, APFS and NTFS
CARD = [
    "--name",
    "Mine",
    "--vendor",
    "NVIDIA",
    "--architecture",
    "X",
    "--segment",
    "consumer",
    "--memory-type",
    "GDDR6",
    "--bandwidth-gbs",
    "256",
    "--fp32-tflops",
    "10",
]

# Each case of issue 16, items 8-10, as the user typed it, and a word the one line must contain.
CASES: list[tuple[list[str], str]] = [
    (["estimate"], "SPEC is required"),
    (["estimate", "zoo:resnet50", "--batch", "1000000000000"], "--batch"),
    (["estimate", "zoo:gpt2", "--seq-len", str(2**40)], "--seq-len"),
    (["estimate", f"/tmp/{LONG}.onnx"], "File name too long"),
    (["fit", "zoo:resnet50", "--gpu", "4090", "--batch", "1000000000000"], "--batch"),
    (["recommend", "zoo:resnet50", "--min-memory", "nan"], "--min-memory"),
    (["recommend", "zoo:resnet50", "--min-memory", "inf"], "--min-memory"),
    (["recommend", "zoo:resnet50", "--budget", "nan"], "--budget"),
    (["recommend", "zoo:resnet50", "--max-gpus", "1000"], "--max-gpus"),
    (["report", "zoo:resnet50", "--out", "x.pdf", "--min-memory", "nan"], "--min-memory"),
    (["catalog", "list", "--min-memory", "inf"], "--min-memory"),
    (["catalog", "set-price", "3090", "inf"], "amount"),
    (["catalog", "set-price", "3090", "500", "--currency", "dollars"], "ISO 4217"),
    (["catalog", "add", *CARD, "--memory-gb", "1e12", "--tdp-w", "300"], "memory_gb"),
    (["catalog", "add", *CARD, "--memory-gb", "1e300", "--tdp-w", "300"], "memory_gb"),
    (["catalog", "add", *CARD, "--memory-gb", "1e-300", "--tdp-w", "300"], "memory_gb"),
    (["catalog", "add", *CARD, "--memory-gb", "8", "--tdp-w", "1e23"], "tdp_w"),
    (["catalog", "add", *CARD, "--memory-gb", "8", "--tdp-w", str(10**23)], "tdp_w"),
    (["catalog", "edit", "4090", "--memory-gb", "1e300"], "memory_gb"),
    (["catalog", "add", *CARD, "--memory-gb", "8", "--tdp-w", "300", "--aliases", "3090"], "already belongs"),
    (["catalog", "import", "/nonexistent/cards.csv"], "No such file"),
    (["monitor", "--watch", "inf"], "--watch"),
    (["monitor", "--watch", "nan"], "--watch"),
    # options that the workload would ignore (each was dropped without a word) and counts without a ceiling
    (["estimate", "zoo:llama-3.2-1b", "--finetune", "full", "--lora-rank", "8"], "--lora-rank: applies only to"),
    (["estimate", "zoo:llama-3.2-1b", "--lora-targets", "q_proj"], "--lora-targets: applies only to"),
    (["estimate", "zoo:llama-3.2-1b", "--mode", "generate", "--seq-len", "100"], "--seq-len: applies only to"),
    (["estimate", "zoo:llama-3.2-1b", "--prompt-len", "100"], "--prompt-len: applies only to --mode generate"),
    (["fit", "zoo:resnet50", "--gpu", "T4", "--kv-cache", "fp8"], "--kv-cache: applies only to --mode generate"),
    (["estimate", "zoo:llama-3.2-1b", "--mode", "generate", "--weights", "q4_k_m", "--kv-cache", "fp8"], "no fp8"),
    (["recommend", "zoo:resnet50", "--mode", "infer", "--optimizer", "sgd"], "--optimizer: applies only to"),
    (["estimate", "zoo:resnet50", "--mode", "infer", "--checkpointing"], "--checkpointing: applies only to"),
    (["estimate", "zoo:llama-3.2-1b", "--mode", "infer", "--loss", "fused"], "--loss: applies only to"),
    # refused by the flag the user typed, not by the Workload's field (drops_logits: the training loop's option)
    (["estimate", "zoo:llama-3.2-1b", "--mode", "generate", "--drop-logits"], "--drop-logits: applies only to"),
    (["recommend", "zoo:llama-3.2-1b", "--mode", "infer", "--drop-logits"], "--drop-logits: applies only to"),
    (["fit", "zoo:resnet50", "--gpu", "T4", "--mode", "infer", "--offload", "optimizer"], "--offload: applies only"),
    (["estimate", "zoo:llama-3.2-1b", "--mode", "generate", "--finetune", "lora"], "--finetune: applies only to"),
    (["estimate", "zoo:llama-3.2-1b", "--mode", "generate", "--max-num-seqs", "4"], "applies only to --runtime vllm"),
    (["estimate", "zoo:llama-3.2-1b", "--mode", "generate", "--enforce-eager"], "--enforce-eager: applies only to"),
    (
        ["estimate", "zoo:llama-3.2-1b", "--mode", "generate", "--vllm-version", "0.16"],
        "--vllm-version: applies only to",
    ),
    (
        ["estimate", "zoo:llama-3.2-1b", "--mode", "generate", "--runtime", "vllm", "--vllm-version", "0.18"],
        "invalid choice",
    ),
    (["report", "zoo:llama-3.2-1b", "--out", "x.pdf", "--mode", "generate", "--gpu-memory-utilization", "0.5"], "vllm"),
    (["estimate", "zoo:llama-3.2-1b", "--mode", "generate", "--prompt-len", "99999999999"], "--prompt-len"),
    (["estimate", "zoo:llama-3.2-1b", "--mode", "generate", "--runtime", "vllm", "--max-num-seqs", "1e9"], "whole"),
    (["estimate", "zoo:llama-3.2-1b", "--mode", "generate", "--new-tokens", str(2**23)], "at most 4,194,304"),
    (["estimate", str(Path(__file__).parent / "recommend/speed_models/mlp.py"), "--seq-len", "10"], "sets its own"),
    (["recommend", "zoo:resnet50", "--price-basis", "rent", "--budget", "100"], "give --samples N or --tokens N"),
    (["estimate", str(Path(__file__).parents[1] / "advisor/data/llm_configs/qwen3-8b/config.json")], "as hf:PATH"),
    (["estimate", f"hf:{Path(__file__).parents[1] / 'advisor/data/llm_configs/qwen3-8b'}"], "qwen3-8b/config.json"),
]


@pytest.mark.parametrize(("argv", "word"), CASES, ids=[" ".join(a)[:60] for a, _ in CASES])
def test_each_reported_case_is_one_line_and_exit_2(argv: list[str], word: str) -> None:
    outcome = run(argv)
    assert_one_line_error(outcome)
    assert word in outcome[1]


# A new user's mistakes with files (issue 16's walk, repeated): each names the file and what is wrong with it
FILE_MISTAKES: list[tuple[list[str], str]] = [
    (["estimate", "{empty}.onnx"], "{empty}.onnx: the file is empty (0 bytes)"),  # was "the graph has no inputs"
    (["estimate", "{empty}.pt"], "{empty}.pt: the file is empty (0 bytes)"),  # was "... EOFError:"
    (["estimate", "{empty}.pt", "--trust-pickle"], "{empty}.pt: the file is empty"),
    (["fit", "{empty}.gguf", "--gpu", "4090"], "{empty}.gguf: the file is empty"),
    (["recommend", "{empty}.safetensors"], "{empty}.safetensors: the file is empty"),
    (["estimate", "{folder}"], "{folder}: a folder, not a file"),  # was "not a model spec"
    (["estimate", "{hf_folder}"], "a folder, not a file; give hf:{hf_folder}/config.json"),
    (["recommend", "zoo:resnet50", "--vendor", "nvida"], "argument --vendor: 'nvida' is not one of NVIDIA, AMD, Intel"),
    (["catalog", "list", "--vendor", "nvida"], "argument --vendor: 'nvida' is not one of"),  # was "no cards match"
    (["report", "zoo:seed:cnn", "--out", "{folder}/r.txt"], "the report is a PDF; give a file name ending in .pdf"),
    (["report", "zoo:seed:cnn", "--out", ""], "argument --out: '': the report is a PDF"),  # was "<cwd>: is a folder"
    (["catalog", "export", "{folder}/cards.pdf"], "the catalog is written as CSV; give a file name ending in .csv"),
    (["catalog", "import", "{folder}/cards.json"], "cards and prices are read as CSV"),  # was "missing column(s)"
    (["catalog", "import-prices", "{folder}/prices.txt"], "cards and prices are read as CSV"),
    (["catalog", "update", "/dev/zero"], "cannot read /dev/zero: not a regular file"),  # was read without end
    (["catalog", "update", "{folder}/feed.csv"], "cannot read {folder}/feed.csv: No such file or directory"),
    (["catalog", "set-price", "4090", "100", "--date", "2026-02-30"], "'2026-02-30' is not a calendar day"),
    (["estimate", "zoo:resnet50", "--bogus"], "advisor estimate: error: unrecognized arguments: --bogus"),
]


@pytest.mark.parametrize(("argv", "said"), FILE_MISTAKES, ids=[" ".join(a)[:50] for a, _ in FILE_MISTAKES])
def test_a_new_users_file_mistake_is_one_line_naming_the_file(tmp_path: Path, argv: list[str], said: str) -> None:
    folder, hf_folder = tmp_path / "models", tmp_path / "qwen"
    folder.mkdir()
    hf_folder.mkdir()
    (hf_folder / "config.json").write_text("{}")
    for suffix in (".onnx", ".pt", ".gguf", ".safetensors"):
        (tmp_path / f"empty{suffix}").write_bytes(b"")
    names = {"empty": str(tmp_path / "empty"), "folder": str(folder), "hf_folder": str(hf_folder)}
    code, err = run([word.format(**names) for word in argv])
    assert_one_line_error((code, err))
    assert said.format(**names) in err, err
    assert sorted(p.name for p in folder.iterdir()) == []  # nothing written where it was refused


def test_the_same_files_with_the_right_names_still_work(tmp_path: Path) -> None:
    assert types.pdf_file("r.PDF") == "r.PDF" and types.csv_output("-") == "-"  # any case; '-' is stdout
    assert run(["catalog", "export", str(tmp_path / "cards.CSV")])[0] == 0
    assert run(["catalog", "import", str(tmp_path / "cards.CSV")])[0] == 0  # the export reads back
    assert run(["recommend", "zoo:seed:cnn", "--vendor", "amd", "--top", "1"])[0] == 0  # any case, as the catalog


def test_the_spec_help_of_every_command_points_at_the_one_zoo_list() -> None:
    for command in ("estimate", "recommend", "fit", "report"):  # `recommend --list` is not an option
        err = io.StringIO()
        with contextlib.redirect_stdout(err), pytest.raises(SystemExit):
            cli.main([command, "--help"])
        assert "zoo:NAME (`advisor estimate --list` shows them)" in " ".join(err.getvalue().split()), command


@pytest.mark.parametrize("where", ["folder", "/dev/null", "under a file", "long name"])
def test_an_unusable_catalog_path_is_one_line_and_left_alone(
    tmp_path: Path, where: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    plain = tmp_path / "plain.txt"
    plain.write_text("mine")
    path = {
        "folder": tmp_path,
        "/dev/null": Path("/dev/null"),
        "under a file": plain / "c.sqlite3",
        "long name": tmp_path / LONG,
    }[where]
    monkeypatch.setenv("ADVISOR_CATALOG", str(path))
    before = sorted(os.listdir(tmp_path))
    assert_one_line_error(run(["catalog", "list"]))
    assert sorted(os.listdir(tmp_path)) == before and plain.read_text() == "mine"


def test_100k_bad_rows_give_a_short_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    rows = "".join(f"Card {i},NVIDIA,X,consumer,lots,GDDR6,256,10,150,me\n" for i in range(100_000))
    bad.write_text(
        "name,vendor,architecture,segment,memory_gb,memory_type,bandwidth_gbs,fp32_tflops,tdp_w,source\n" + rows
    )
    code, err = run(["catalog", "import", str(bad)])
    assert_one_line_error((code, err))
    assert "100000 bad rows" in err and "and 99990 more" in err and len(err) < 4000  # 10 rows shown


# ---------------------------------------------------------------- generated bad values

NOT_A_NUMBER = st.sampled_from(["nan", "NaN", "inf", "-inf", "Infinity", "", "abc", "1,5", "0x10", "1e", "--"])
NOT_POSITIVE = st.one_of(st.integers(max_value=0).map(str), st.floats(max_value=0.0).map(repr))
TOO_BIG = st.one_of(st.integers(min_value=2**64, max_value=10**400).map(str), st.sampled_from(["1e400", "1e309"]))
BAD_NUMBER = st.one_of(NOT_A_NUMBER, NOT_POSITIVE, TOO_BIG)
BAD_CHOICE = st.text(alphabet="xyz_-QW", min_size=1, max_size=12)
MISSING_FILE = st.builds(
    lambda stem, suffix: f"/nonexistent-{stem}{suffix}",
    st.text(alphabet="abcdefgh-_", min_size=1, max_size=20),
    st.sampled_from([".pt", ".pt2", ".pth", ".onnx", ".json", ".safetensors", ".py"]),
)
BAD_SPEC = st.one_of(MISSING_FILE, BAD_CHOICE.map(lambda name: f"zoo:{name}"), st.just(f"/tmp/{LONG}.pt"))

WORKLOAD_NUMBERS = ("--batch", "--seq-len")
WORKLOAD_CHOICES = ("--mode", "--precision", "--optimizer", "--method")


def _workload_mistake(spec: str) -> st.SearchStrategy[list[str]]:
    """A spec plus one bad workload option, or a bad spec."""
    number = st.tuples(st.sampled_from(WORKLOAD_NUMBERS), BAD_NUMBER).map(lambda p: [spec, p[0], p[1]])
    choice = st.tuples(st.sampled_from(WORKLOAD_CHOICES), BAD_CHOICE).map(lambda p: [spec, p[0], p[1]])
    return st.one_of(number, choice, BAD_SPEC.map(lambda bad: [bad]))


MISTAKES: dict[str, st.SearchStrategy[list[str]]] = {
    "estimate": _workload_mistake("zoo:resnet50"),
    "recommend": st.one_of(
        _workload_mistake("zoo:resnet50"),
        st.tuples(st.sampled_from(["--budget", "--max-gpus", "--min-memory", "--top"]), BAD_NUMBER).map(
            lambda p: ["zoo:resnet50", p[0], p[1]]
        ),
        BAD_CHOICE.map(lambda bad: ["zoo:resnet50", "--objective", bad]),
    ),
    "fit": st.one_of(
        _workload_mistake("zoo:resnet50").map(lambda a: [*a, "--gpu", "4090"]),
        BAD_CHOICE.map(lambda bad: ["zoo:mlp", "--gpu", f"no such card {bad}"]),
    ),
    "report": st.one_of(
        _workload_mistake("zoo:resnet50").map(lambda a: [*a, "--out", "/tmp/advisor-never-written.pdf"]),
        BAD_CHOICE.map(lambda bad: ["zoo:mlp", "--out", f"/nonexistent-folder-{bad}/r.pdf"]),
        st.tuples(st.sampled_from(["--lang", "--paper"]), BAD_CHOICE).map(
            lambda p: ["zoo:mlp", "--out", "/tmp/advisor-never-written.pdf", p[0], p[1]]
        ),
    ),
    "catalog": st.one_of(
        BAD_NUMBER.map(lambda bad: ["list", "--min-memory", bad]),
        BAD_CHOICE.map(lambda bad: ["list", "--sort", bad]),
        BAD_CHOICE.map(lambda bad: ["show", f"no such card {bad}"]),
        BAD_NUMBER.map(lambda bad: ["set-price", "3090", bad]),
        BAD_CHOICE.map(lambda bad: ["set-price", "3090", "500", "--date", bad]),
        st.text(alphabet="abc123$ ", min_size=1, max_size=8)
        .filter(lambda t: len(t.strip()) != 3)
        .map(lambda bad: ["set-price", "3090", "500", "--currency", bad]),
        st.tuples(st.sampled_from(["--memory-gb", "--bandwidth-gbs", "--fp32-tflops", "--tdp-w"]), BAD_NUMBER).map(
            lambda p: ["edit", "4090", p[0], p[1]]
        ),
        BAD_NUMBER.map(lambda bad: ["add", *CARD, "--memory-gb", bad, "--tdp-w", "300"]),
        MISSING_FILE.map(lambda path: ["import", path]),
        MISSING_FILE.map(lambda path: ["export", f"/nonexistent-folder{path}"]),
    ),
    "monitor": BAD_NUMBER.map(lambda bad: ["--watch", bad]),
}


@pytest.mark.parametrize("command", list(MISTAKES))
def test_generated_bad_arguments_give_one_line_and_exit_2(command: str) -> None:
    @settings(
        max_examples=25,
        deadline=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(MISTAKES[command])
    def check(argv: list[str]) -> None:
        assert_one_line_error(run([command, *argv]))

    check()


# ---------------------------------------------------------------- the real entry point


@pytest.mark.parametrize("argv", [["estimate"], ["catalog", "set-price", "3090", "inf"]])
def test_the_installed_command_exits_2_with_one_line(argv: list[str]) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "advisor", *argv],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr


@pytest.mark.parametrize(
    ("argv", "listed"),
    [
        (["estimate", "zoo:resnet50", "--mode", "xx"], "'train', 'infer', 'generate'"),
        (["estimate", "zoo:resnet50", "--precision", "xx"], "'fp32', 'amp_bf16'"),
        (["estimate", "zoo:resnet50", "--weights", "xx"], "'nf4', 'mxfp4', 'q2_k'"),
        (["recommend", "zoo:resnet50", "--objective", "xx"], "'perf_per_dollar', 'cheapest'"),
        (["recommend", "zoo:resnet50", "--price-basis", "xx"], "'new', 'used'"),
    ],
)
def test_a_bad_vocabulary_word_lists_the_choices_as_text(argv: list[str], listed: str) -> None:
    # the choices are StrEnum members' texts: argparse lists repr(choice), which for a member itself read
    # <Precision.FP32: 'fp32'>
    code, err = run(argv)
    assert_one_line_error((code, err))
    assert listed in err and "<" not in err, err
