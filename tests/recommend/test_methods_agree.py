"""The two estimators describe the same kernels, so they give the same step time: a network timed by the layer
graph (analytic) and by simulating its PyTorch module (the default for FILE.py and hf:) agrees within 10% on
every card of the catalog, and through the places a user reads it (recommend, fit).

The simulated path once left its rows' batch at zero and timed every layer as a 1-row GEMM: 10^3-10^4 times
too slow. These tests fail on anything like that, on any card."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import advisor

pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from advisor.catalog import CardRecord, list_cards, open_catalog  # noqa: E402
from advisor.cli import main  # noqa: E402
from advisor.core.estimate import Estimate  # noqa: E402
from advisor.core.workload import Workload  # noqa: E402
from advisor.importers.spec_estimate import estimate_spec  # noqa: E402
from advisor.recommend.devices import device, generation_rates  # noqa: E402
from advisor.recommend.generation_speed import generation_speed  # noqa: E402
from advisor.recommend.serving import generation_run  # noqa: E402
from advisor.recommend.timing import step_seconds, step_work  # noqa: E402

MODELS = Path(__file__).parent / "speed_models"
TOLERANCE = 0.10


@pytest.fixture(scope="module")
def cards(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[CardRecord]]:
    catalog = open_catalog(str(tmp_path_factory.mktemp("catalog") / "c.sqlite3"))
    with catalog.read() as session:
        records = list_cards(session)
    catalog.close()
    yield records


def _config(tmp: Path, name: str, config: object) -> str:
    path = tmp / f"{name}.json"
    config.to_json_file(str(path))  # type: ignore[attr-defined]
    return f"hf:{path}"


def _hf_specs(tmp: Path) -> dict[str, str]:
    t = transformers
    qwen3 = json.loads((Path(advisor.__file__).parent / "data/llm_configs/qwen3-0.6b/config.json").read_text())
    (tmp / "qwen3.json").write_text(json.dumps({**qwen3, "num_hidden_layers": 2}))  # qk-norm, tied head
    return {
        "qwen3": f"hf:{tmp / 'qwen3.json'}",
        "bert": _config(tmp, "bert", t.BertConfig(num_hidden_layers=4, architectures=["BertForMaskedLM"])),
        "gpt2": _config(tmp, "gpt2", t.GPT2Config(n_layer=4)),
        "llama": _config(
            tmp,
            "llama",
            t.LlamaConfig(
                hidden_size=1024,
                intermediate_size=2816,
                num_hidden_layers=4,
                num_attention_heads=16,
                num_key_value_heads=4,
                vocab_size=32000,
                architectures=["LlamaForCausalLM"],
            ),
        ),
    }


CASES = [  # (network, workload, sequence length)
    ("mlp.py", Workload("train", 256, "amp_bf16", "adamw"), None),
    ("mlp.py", Workload("infer", 256, "fp32"), None),
    ("resnet50.py", Workload("train", 8, "amp_bf16", "adamw"), None),
    ("resnet50.py", Workload("train", 8, "fp32", "sgd_momentum"), None),
    ("mobilenet_v2.py", Workload("train", 8, "amp_bf16", "adamw"), None),
    ("vit_b_16.py", Workload("train", 4, "amp_bf16", "adamw"), None),
    ("bert", Workload("train", 4, "amp_bf16", "adamw"), 128),
    ("gpt2", Workload("train", 4, "amp_bf16", "adamw"), 256),
    ("qwen3", Workload("train", 4, "amp_bf16", "adamw"), 512),
    ("llama", Workload("train", 2, "bf16", "adamw", finetune="lora", lora_rank=16), 256),
    ("qwen3", Workload("train", 2, "bf16", "adamw", finetune="lora"), 512),
]
PEAK_TOLERANCE = 0.03


def _spec(name: str, tmp: Path) -> str:
    return str(MODELS / name) if name.endswith(".py") else _hf_specs(tmp)[name]


Estimates = Callable[[str, Workload, "int | None"], dict[str, Estimate]]


@pytest.fixture(scope="module")
def estimates(tmp_path_factory: pytest.TempPathFactory) -> Estimates:
    """Both methods' estimates of a case, made once for the speed and the memory test."""
    tmp, made = tmp_path_factory.mktemp("specs"), {}

    def both(network: str, workload: Workload, seq: int | None) -> dict[str, Estimate]:
        key = (network, workload, seq)
        if key not in made:
            spec = _spec(network, tmp)
            made[key] = {m: estimate_spec(spec, workload, seq_len=seq, method=m) for m in ("analytic", "simulated")}
        return made[key]

    return both


@pytest.mark.parametrize(("network", "workload", "seq"), CASES, ids=lambda v: getattr(v, "mode", None) or str(v))
def test_both_methods_time_and_size_the_same_network_alike_on_every_card(
    network: str, workload: Workload, seq: int | None, cards: list[CardRecord], estimates: Estimates
) -> None:
    """Step times within 10% on every card, and peaks within 3%. The simulated LoRA step once made bf16
    adapters on a bf16 base where PEFT (and the analytic path) make fp32 ones and cast each adapted layer's
    input: Qwen3 0.6B at 1,024 tokens peaked at 8.53 GiB against 10.24. One test for both, so the two
    estimates are made once per case on whichever worker runs it."""
    both = estimates(network, workload, seq)
    works = {method: step_work(e, seq or 1) for method, e in both.items()}
    ratios = {}
    for card in cards:
        dev = device(card, workload)
        ratios[card.name] = step_seconds(works["simulated"], dev) / step_seconds(works["analytic"], dev)
    worst = max(ratios.items(), key=lambda item: abs(item[1] - 1))
    assert abs(worst[1] - 1) <= TOLERANCE, f"{network}: simulated / analytic step time {worst[1]:.3f} on {worst[0]}"
    simulated, analytic = both["simulated"].memory.peak_bytes, both["analytic"].memory.peak_bytes
    assert simulated == pytest.approx(analytic, rel=PEAK_TOLERANCE), f"{network}: peak {simulated / analytic:.3f}"


@pytest.fixture
def cli(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Callable[..., tuple[int, dict[str, object], str]]:
    """`advisor ARGS --json` in this process, as the entry point runs it (a subprocess spent its seconds
    importing torch again): (exit code, the JSON answer or {}, stderr)."""
    monkeypatch.setenv("ADVISOR_CATALOG", str(tmp_path / "c.sqlite3"))

    def run(*args: str) -> tuple[int, dict[str, object], str]:
        capsys.readouterr()
        code = main([*args, "--json"])
        out, err = capsys.readouterr()
        return code, (json.loads(out) if code == 0 else {}), err

    return run


def _answer(cli: Callable[..., tuple[int, dict[str, object], str]], *args: str) -> dict[str, object]:
    code, answer, err = cli(*args)
    assert code == 0, err
    return answer


Cli = Callable[..., tuple[int, dict[str, object], str]]


def test_recommend_ranks_a_file_by_either_method_with_the_same_step_times(cli: Cli) -> None:
    spec = str(MODELS / "mlp.py")
    options = ("--batch", "256", "--precision", "amp_bf16", "--optimizer", "adamw", "--max-gpus", "1")
    times = {}
    for method in ("analytic", "simulated"):
        entries = _answer(cli, "recommend", spec, *options, "--method", method)["recommendations"]
        times[method] = {e["card"]: e["step_time_s"] for e in entries if e["fits"]}  # type: ignore[index]
    assert times["analytic"].keys() == times["simulated"].keys() and len(times["analytic"]) > 100
    for card, analytic in times["analytic"].items():
        # a 4-layer MLP at batch 256 runs in milliseconds, not the 55 s the zero-batch rows gave
        assert times["simulated"][card] == pytest.approx(analytic, rel=TOLERANCE), card
        assert analytic < 0.1, card


def test_fit_times_a_file_by_either_method_alike(cli: Callable[..., tuple[int, dict[str, object], str]]) -> None:
    spec = str(MODELS / "mlp.py")
    seconds = {}
    for method in ("analytic", "simulated"):
        report = _answer(
            cli,
            "fit",
            spec,
            "--gpu",
            "GeForce RTX 4090",
            "--batch",
            "256",
            "--precision",
            "amp_bf16",
            "--optimizer",
            "adamw",
            "--method",
            method,
        )
        seconds[method] = report["current"]["step_time_s"]  # type: ignore[index]
    assert seconds["simulated"] == pytest.approx(seconds["analytic"], rel=TOLERANCE)
    assert seconds["analytic"] < 0.1


LLAMA_1B = Path(advisor.__file__).parent / "data/llm_configs/llama-3.2-1b/config.json"


@pytest.mark.parametrize("weights", [None, "int4"])
def test_a_generation_config_decodes_alike_by_either_route_on_every_card(
    weights: str | None, cards: list[CardRecord]
) -> None:
    """zoo:llama-3.2-1b and its hf: config describe the same decoder: prefill and decode times agree on every
    card (the eager host's ops per forward and the quantized linears included)."""
    workload = Workload("generate", 1, "bf16", prompt_len=512, new_tokens=128, weights=weights)  # type: ignore[arg-type]
    runs = [generation_run(estimate_spec(spec, workload)) for spec in ("zoo:llama-3.2-1b", f"hf:{LLAMA_1B}")]
    zoo_run, hf_run = runs
    assert zoo_run is not None and hf_run is not None
    assert hf_run.quantized_linears == (16 * 7 if weights else 0)  # 16 layers x 7 projections
    for card in cards:
        rates = generation_rates(card)
        zoo_speed, hf_speed = generation_speed(zoo_run, rates), generation_speed(hf_run, rates)
        assert hf_speed.decode_step_s == pytest.approx(zoo_speed.decode_step_s, rel=TOLERANCE), card.name
        assert hf_speed.prefill_s == pytest.approx(zoo_speed.prefill_s, rel=TOLERANCE), card.name


def test_recommend_and_fit_show_the_same_decode_speed_and_simulation_refuses_generation(
    cli: Callable[..., tuple[int, dict[str, object], str]],
) -> None:
    options = (
        "--mode",
        "generate",
        "--precision",
        "bf16",
        "--batch",
        "1",
        "--prompt-len",
        "512",
        "--new-tokens",
        "128",
    )
    spec, card = f"hf:{LLAMA_1B}", "GeForce RTX 4090"
    entries = _answer(cli, "recommend", spec, *options, "--max-gpus", "1")["recommendations"]
    ranked = next(e for e in entries if e["card"] == card)  # type: ignore[union-attr]
    fit = _answer(cli, "fit", spec, "--gpu", card, *options)["current"]
    assert fit["throughput"] == pytest.approx(ranked["decode_tokens_per_s"], rel=1e-9)  # type: ignore[index]
    assert fit["step_time_s"] == pytest.approx(ranked["step_time_s"], rel=1e-9)  # type: ignore[index]
    code, _, err = cli("recommend", spec, *options, "--method", "simulated")
    assert code == 2 and "not simulated" in err and "Traceback" not in err


def test_a_file_in_generation_mode_is_not_answered_with_a_forward_steps_speed(cli: Cli) -> None:
    """The default method once simulated FILE.py's forward step for --mode generate and ranked cards by its
    samples/s (no prefill, no decode); generation is the decoder model's, which says what it describes."""
    code, answer, err = cli("recommend", str(MODELS / "mlp.py"), "--mode", "generate", "--max-gpus", "1")
    assert (code, answer) == (2, {})
    assert "not a decoder language model" in err and len(err.strip().splitlines()) == 1


def test_fit_by_simulation_measures_the_qlora_change_by_the_decoder_model(cli: Cli, tmp_path: Path) -> None:
    """`fit --method simulated` on an hf: decoder once stopped at its QLoRA candidate (the 4-bit base cannot
    be simulated); that change is measured analytically, as fit's other graph rewrites are."""
    spec = _hf_specs(tmp_path)["qwen3"]
    options = ("--gpu", "GeForce RTX 4090", "--batch", "2", "--seq-len", "512", "--precision", "amp_bf16")
    report = _answer(cli, "fit", spec, *options, "--optimizer", "adamw", "--method", "simulated")
    assert report["current"]["method"] == "simulated"  # type: ignore[index]
    qlora = [e for e in report["changes"] if "qlora" in json.dumps(e).lower()]  # type: ignore[union-attr]
    assert qlora and all(e["method"] == "analytic" for e in qlora)  # type: ignore[index]
