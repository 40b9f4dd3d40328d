"""`advisor recommend --cards N --plan P`: one plan on one card count, the per-card figures every caller gets
(recommend.per_card), and a refusal (exit 2, one line) where the plan does not apply to the workload."""

import json
import subprocess
import sys
from pathlib import Path

from advisor.core import zoo
from advisor.core.analytic import estimate
from advisor.core.workload import Runtime, Workload
from advisor.recommend.per_card import card_memory, named_cost

GENERATE = ["zoo:llama-3.1-8b", "--mode", "generate", "--runtime", "vllm", "--precision", "bf16"]
GENERATE += ["--batch", "1", "--prompt-len", "8191", "--new-tokens", "1", "--vendor", "NVIDIA"]


def run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "advisor", "recommend", *args, "--catalog", str(tmp_path / "c.sqlite3")],
        capture_output=True,
        text=True,
    )


def test_one_plan_on_two_cards_shows_the_per_card_bytes_of_that_plan(tmp_path: Path) -> None:
    result = run(tmp_path, *GENERATE, "--cards", "2", "--plan", "tensor_parallel", "--json")
    assert result.returncode == 0, result.stderr
    entries = json.loads(result.stdout)["recommendations"]
    assert entries and {(e["count"], e["plan"]) for e in entries} == {(2, "tensor_parallel")}
    w = Workload("generate", 1, "bf16", prompt_len=8191, new_tokens=1, runtime=Runtime.VLLM)
    e = estimate(zoo.build("llama-3.1-8b", 8192), w)
    h100 = next(x for x in entries if x["card"] == "H100 SXM5")
    assert h100["required_bytes"] == card_memory(e, named_cost(e, "tensor_parallel", 2)).required_bytes
    assert h100["required_bytes"] < e.memory.required_bytes  # half the weights and cache on each card


def test_a_plan_that_does_not_apply_is_refused_in_one_line(tmp_path: Path) -> None:
    train = run(tmp_path, "zoo:gpt2", "--batch", "4", "--plan", "tensor_parallel")
    assert train.returncode == 2
    assert "plan: tensor_parallel does not apply to train of gpt2" in train.stderr
    assert "offered: data_parallel, zero1, zero2, zero3, layer_split" in train.stderr
    assert len(train.stderr.strip().splitlines()) == 1
    single = run(tmp_path, *GENERATE, "--cards", "2", "--plan", "single")
    assert single.returncode == 2 and "plan: single does not apply to generate" in single.stderr
