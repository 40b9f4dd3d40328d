"""FILE.gguf: files written by the gguf package's own GGUFWriter; the header read without the weights, the
decoder from the metadata, the weights at their exact bytes, and one line for damaged or hostile headers."""

from __future__ import annotations

import struct
import tracemalloc
from pathlib import Path

import pytest

from advisor.core.errors import SpecError
from advisor.core.workload import Workload
from advisor.importers.gguf_header import read_header
from advisor.importers.spec_estimate import estimate_spec
from advisor.importers.spec_graph import load_graph

gguf = pytest.importorskip("gguf")
np = pytest.importorskip("numpy")
from tests.gguf_files import FF, HEADS, KV, LAYERS, PARAMS, VOCAB, WEIGHT_BYTES, H, write_gguf  # noqa: E402


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_gguf(tmp_path_factory.mktemp("gguf") / "tiny-Q4_K_M.gguf")


def test_header_matches_the_gguf_reader(model: Path) -> None:
    header = read_header(model)
    assert header.weight_bytes == WEIGHT_BYTES  # 859_352
    assert header.numel == PARAMS
    reader = gguf.GGUFReader(str(model))  # the package's own reader agrees, tensor by tensor
    theirs = {t.name: (t.tensor_type.name, int(t.n_bytes)) for t in reader.tensors}
    assert {t.name: (t.type_name, t.nbytes) for t in header.tensors} == theirs
    assert header.data_offset == reader.data_offset


def test_decoder_from_metadata_has_the_files_parameters(model: Path) -> None:
    graph = load_graph(str(model))
    assert graph.decoder is not None and graph.param_count == PARAMS
    spec = graph.decoder
    assert (spec.hidden, spec.layers, spec.heads, spec.kv_heads, spec.intermediate, spec.vocab) == (
        H,
        LAYERS,
        HEADS,
        KV,
        FF,
        VOCAB,
    )
    assert not spec.tied_embeddings  # output.weight is in the file


@pytest.mark.parametrize("mode", ["generate", "infer"])
def test_weights_take_their_exact_bytes(model: Path, mode: str) -> None:
    est = estimate_spec(str(model), Workload(mode=mode, batch=1, precision="fp16"))  # type: ignore[arg-type]
    assert est.workload.weights == "q4_k_m"  # general.file_type 15 = MOSTLY_Q4_K_M
    if mode == "infer":  # the layer replay rounds each layer's weights up to the allocator's 512-byte blocks
        assert 0 <= est.memory.at_peak.weights - WEIGHT_BYTES < 512 * len(est.layers)
    else:  # llama.cpp (the runtime of GGUF files) keeps the token embedding, 300 x 144 bytes, in system RAM
        assert est.memory.at_peak.weights == WEIGHT_BYTES - VOCAB * 144
    if mode == "generate":
        assert est.generation is not None and est.generation.weight_bytes == WEIGHT_BYTES
        # a decode step reads all but the embedding table: 859_352 - 300 x 144
        assert est.generation.active_weight_bytes == WEIGHT_BYTES - VOCAB * 144


def test_gpu_layers_apply_to_a_gguf_file_without_naming_its_runtime(
    model: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A GGUF file runs in llama.cpp by default, but -ngl on it was refused ("-ngl is a llama.cpp option, got
    1"): the workload learnt the file's format only after the option was checked."""
    import json

    from advisor.cli import main

    def weights_on_gpu(*extra: str) -> int:
        assert main(["estimate", str(model), "--mode", "generate", "--batch", "1", "--json", *extra]) == 0
        data = json.loads(capsys.readouterr().out)
        assert data["generation"]["runtime"] == "llama.cpp"
        return int(data["memory"]["weights"])

    # one of the two layers on the GPU holds less than both; the file's tensors are the same
    assert 0 < weights_on_gpu("-ngl", "1") < weights_on_gpu("-ngl", "2") <= weights_on_gpu()


def _header(n_tensors: int, kvs: bytes = b"", n_kv: int = 0) -> bytes:
    """A header with room after it, so that only the value under test is wrong."""
    return b"GGUF" + struct.pack("<IQQ", 3, n_tensors, n_kv) + kvs + bytes(64)


def _key(name: str, vtype: int) -> bytes:
    raw = name.encode()
    return struct.pack("<Q", len(raw)) + raw + struct.pack("<I", vtype)


@pytest.mark.parametrize(
    ("data", "words"),
    [
        (b"PK\x03\x04" + bytes(40), "not a GGUF file"),
        (b"GGUF" + struct.pack("<IQQ", 1, 0, 0), "version 1 is not supported"),
        (_header(1 << 62), "at most 1,048,576"),  # a tensor count no file holds
        (_header(1000), "cannot fit"),  # more tensors than this file has room for
        (_header(0, struct.pack("<Q", 1 << 60), 1), "more than"),  # a key of 2**60 bytes
        (_header(0, _key("tokenizer.ggml.tokens", 9) + struct.pack("<IQ", 8, 1 << 50), 1), "more than"),
        (_header(0, _key("tokenizer.ggml.tokens", 9) + struct.pack("<IQ", 8, 1 << 20), 1), "needs"),  # past the end
        (_header(0, _key("general.alignment", 4) + struct.pack("<I", 3), 1), "not a power of two"),
    ],
)
def test_hostile_headers_give_one_line_without_allocating(tmp_path: Path, data: bytes, words: str) -> None:
    path = tmp_path / "bad.gguf"
    path.write_bytes(data)
    tracemalloc.start()
    with pytest.raises(SpecError) as caught:
        load_graph(str(path))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert words in str(caught.value) and "\n" not in str(caught.value)
    assert peak < 8 << 20  # what the header declares is never allocated


def test_counts_past_the_caps_are_refused_even_when_the_file_is_large(tmp_path: Path) -> None:
    path = tmp_path / "sparse.gguf"
    with path.open("wb") as f:  # 64 MiB, sparse: room for the declared counts, so only the caps refuse them
        f.write(_header(1 << 21))
        f.truncate(64 << 20)
    with pytest.raises(SpecError, match="at most 1,048,576"):
        load_graph(str(path))
    with path.open("r+b") as f:
        f.write(_header(0, _key("tokenizer.ggml.tokens", 9) + struct.pack("<IQ", 8, 1 << 23), 1))
    with pytest.raises(SpecError, match="more than 4,194,304"):
        load_graph(str(path))


def test_truncated_file_names_the_tensor(model: Path, tmp_path: Path) -> None:
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(model.read_bytes()[: read_header(model).data_offset + 1000])
    with pytest.raises(SpecError, match="truncated file"):
        load_graph(str(cut))
    head = tmp_path / "head.gguf"
    head.write_bytes(model.read_bytes()[:1500])  # inside the token list
    with pytest.raises(SpecError, match="truncated file"):
        load_graph(str(head))


def test_cli_estimates_a_gguf_file(model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from advisor.cli import main

    # in this process: two subprocesses spent their time starting Python and importing advisor again
    assert main(["estimate", str(model), "--mode", "generate", "--batch", "1", "--precision", "fp16"]) == 0
    assert "q4_k_m" in capsys.readouterr().out
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(_header(1 << 62))
    assert main(["estimate", str(bad), "--mode", "generate"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_deepseek_latent_attention_metadata_maps_back(tmp_path: Path) -> None:
    """The keys convert_hf_to_gguf.py DeepseekV2Model writes (MLA in its MQA form: key_length = kv_lora_rank +
    rope, the per-head widths under *_mla; a sigmoid router for V3) give back the decoder of the config."""
    from advisor.core.llm.families import decoder_from_config
    from advisor.core.llm.tensors import tensor_groups

    cfg = {
        "model_type": "deepseek_v3",
        "hidden_size": 64,
        "num_hidden_layers": 3,
        "num_attention_heads": 4,
        "num_key_value_heads": 4,
        "intermediate_size": 128,
        "vocab_size": 100,
        "kv_lora_rank": 32,
        "q_lora_rank": None,
        "qk_nope_head_dim": 16,
        "qk_rope_head_dim": 8,
        "v_head_dim": 16,
        "n_routed_experts": 4,
        "num_experts_per_tok": 2,
        "moe_intermediate_size": 32,
        "n_shared_experts": 1,
        "first_k_dense_replace": 1,
    }
    spec = decoder_from_config(cfg, "tiny")
    assert spec is not None
    w = gguf.GGUFWriter(str(tmp_path / "ds.gguf"), "deepseek2")
    w.add_block_count(3)
    w.add_embedding_length(64)
    w.add_feed_forward_length(128)
    w.add_head_count(4)
    w.add_head_count_kv(1)  # the MQA form
    w.add_kv_lora_rank(32)
    w.add_key_length(32 + 8)
    w.add_value_length(32)
    w.add_key_length_mla(16 + 8)
    w.add_value_length_mla(16)
    w.add_rope_dimension_count(8)
    w.add_leading_dense_block_count(1)
    w.add_expert_feed_forward_length(32)
    w.add_expert_count(4)
    w.add_expert_used_count(2)
    w.add_expert_shared_count(1)
    w.add_expert_gating_func(gguf.ExpertGatingFuncType.SIGMOID)
    w.add_vocab_size(100)
    for i, g in enumerate(tensor_groups(spec)):  # the tensors' sizes; llama.cpp's names matter for output only
        shape = (g.count, g.rows, g.cols) if g.count > 1 else (g.rows, g.cols) if g.rows > 1 else (g.cols,)
        w.add_tensor("output.weight" if g.role == "lm_head" else f"t{i}.{g.role}", np.zeros(shape, np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    graph = load_graph(str(tmp_path / "ds.gguf"))
    back = graph.decoder
    assert back is not None and back.model_type == "deepseek_v3" and back.mla == spec.mla and back.moe == spec.moe
    assert (back.hidden, back.layers, back.heads, back.intermediate, back.vocab) == (64, 3, 4, 128, 100)
    assert graph.param_count == sum(g.numel for g in tensor_groups(spec)) == read_header(tmp_path / "ds.gguf").numel
