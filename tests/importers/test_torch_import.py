"""The torch forms: FILE.py, .pt2, TorchScript, trusted pickles, and the traced per-layer graph."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from model_files import TINY_CNN, TINY_CNN_PARAMS, write  # noqa: E402

from advisor.core.analytic import estimate  # noqa: E402
from advisor.core.errors import SpecError  # noqa: E402
from advisor.core.workload import Workload  # noqa: E402
from advisor.importers.spec_graph import load_graph  # noqa: E402
from advisor.importers.torch_graph import module_to_graph  # noqa: E402
from advisor.importers.torch_loader import LoadedModel, load_module  # noqa: E402


@pytest.fixture
def cnn_file(tmp_path: Path) -> Path:
    return write(tmp_path / "tiny_cnn.py", TINY_CNN)


def test_python_file_loads_with_inputs_for_any_batch(cnn_file: Path) -> None:
    loaded = load_module(str(cnn_file))
    assert isinstance(loaded, LoadedModel)
    assert loaded.name == "tiny_cnn" and loaded.task == "classification" and loaded.loss_fn is None
    args, kwargs = loaded.example_inputs(5)
    assert kwargs == {} and tuple(args[0].shape) == (5, 3, 16, 16)
    assert sum(p.numel() for p in loaded.module.parameters()) == TINY_CNN_PARAMS


def test_traced_graph_maps_modules_to_core_ops(cnn_file: Path) -> None:
    graph = module_to_graph(load_module(str(cnn_file)))
    by_name = {n.name: n for n in graph.nodes}
    assert by_name["conv"].op.kind == "conv" and by_name["conv"].output.shape == (8, 16, 16)
    assert by_name["bn"].op.kind == "batchnorm"
    assert by_name["relu"].op.kind == "relu" and by_name["relu"].op.inplace
    assert by_name["fc"].op.kind == "linear" and graph.nodes[-1].name == "fc"
    assert graph.param_count == TINY_CNN_PARAMS == 338
    # conv MACs per sample: 8 x 16 x 16 outputs x (3 x 3 x 3) = 55,296; fc 10 x 8 = 80
    result = estimate(graph, Workload(batch=4))
    rows = {r.name: r for r in result.layers}
    assert rows["conv"].forward_macs == 4 * 8 * 16 * 16 * 27
    assert rows["fc"].forward_macs == 4 * 80
    assert result.param_count == 338


def test_trace_leaves_the_module_as_it_was(cnn_file: Path) -> None:
    loaded = load_module(str(cnn_file))
    loaded.module.eval()
    before = {k: v.clone() for k, v in loaded.module.state_dict().items()}
    module_to_graph(loaded)
    assert not loaded.module.training
    for key, value in loaded.module.state_dict().items():
        assert torch.equal(value, before[key]), key


def test_tied_and_unused_parameters_are_counted_once(tmp_path: Path) -> None:
    source = """
import torch
from torch import nn
class LM(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(50, 12)
        self.head = nn.Linear(12, 50, bias=False)
        self.head.weight = self.emb.weight  # tied, as GPT-2 does
        self.spare = nn.Linear(3, 3)  # never called
    def forward(self, ids):
        return self.head(self.emb(ids))
def build_model():
    return LM()
def example_inputs(batch_size):
    return {"ids": torch.zeros(batch_size, 7, dtype=torch.long)}
TASK = "language_model"
"""
    loaded = load_module(str(write(tmp_path / "lm.py", source)))
    graph = module_to_graph(loaded)
    expected = sum(p.numel() for p in loaded.module.parameters())
    assert expected == 50 * 12 + 3 * 3 + 3 == 612
    assert graph.param_count == expected and graph.task == "language_model"
    head = next(n for n in graph.nodes if n.name == "head")
    assert head.op.kind == "linear" and head.op.tied_to == "emb"
    assert graph.nodes[-1].output.shape == (7, 50)


def test_unknown_module_becomes_opaque_with_its_parameters(tmp_path: Path) -> None:
    source = """
import torch
from torch import nn
class Scale(nn.Module):
    def __init__(self):
        super().__init__()
        self.alpha = nn.Parameter(torch.ones(6))
    def forward(self, x):
        return x * self.alpha
def build_model():
    return nn.Sequential(nn.Linear(4, 6), Scale(), nn.Linear(6, 2))
def example_inputs(batch_size):
    return torch.randn(batch_size, 4)
"""
    graph = module_to_graph(load_module(str(write(tmp_path / "custom.py", source))))
    scale = next(n for n in graph.nodes if n.name == "1")
    assert scale.op.kind == "opaque" and scale.op.param_count([]) == 6
    assert graph.param_count == (4 * 6 + 6) + 6 + (6 * 2 + 2) == 50


def test_data_dependent_forward_falls_back_to_a_real_pass(tmp_path: Path) -> None:
    source = """
import torch
from torch import nn
class Picky(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
    def forward(self, x):
        keep = int((x.abs() >= 0).sum().item()) // x.shape[0]  # a size read from the data
        return self.fc(x[:, :keep])
def build_model():
    return Picky()
def example_inputs(batch_size):
    return (torch.randn(batch_size, 4),)
"""
    graph = module_to_graph(load_module(str(write(tmp_path / "picky.py", source))))
    assert graph.param_count == 20 and graph.nodes[-1].output.shape == (4,)


def test_exported_program_round_trip(tmp_path: Path) -> None:
    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, 4, 3), torch.nn.ReLU(), torch.nn.Flatten(), torch.nn.Linear(4 * 6 * 6, 5)
    )
    path = tmp_path / "model.pt2"
    torch.export.save(torch.export.export(model, (torch.randn(2, 3, 8, 8),)), str(path))
    loaded = load_module(str(path))
    assert tuple(loaded.example_inputs(2)[0][0].shape) == (2, 3, 8, 8)
    graph = load_graph(str(path))
    assert graph.param_count == (4 * 27 + 4) + (144 * 5 + 5) == 837
    assert [n.op.kind for n in graph.nodes][1:] == ["conv", "relu", "flatten", "linear"]


def test_torchscript_loads_without_pickle_and_probes_its_input(tmp_path: Path) -> None:
    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, 4, 3), torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(4, 2)
    )
    path = tmp_path / "scripted.pt"
    torch.jit.script(model).save(str(path))
    loaded = load_module(str(path))
    assert tuple(loaded.example_inputs(3)[0][0].shape) == (3, 3, 224, 224)
    graph = load_graph(str(path))
    assert graph.param_count == (4 * 27 + 4) + (4 * 2 + 2) == 122
    assert graph.nodes[-1].output.shape == (2,)


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("x = 1\n", "defines no build_model()"),
        (
            "def build_model():\n    return 3\ndef example_inputs(b):\n    return ()\n",
            "returned int, not a torch.nn.Module",
        ),
        (
            "def build_model():\n    raise ValueError('no weights')\ndef example_inputs(b):\n    return ()\n",
            "build_model() failed: ValueError: no weights (bad.py, line 2)",  # the raise, on the file's line 2
        ),
        ("import not_a_module_anywhere\n", "running it failed: ModuleNotFoundError"),
        # the SyntaxError says its own line; advisor's line that ran the file was added as "(line 156)"
        ("def broken(:\n", "running it failed: SyntaxError: invalid syntax (bad.py, line 1)"),
        ("raise SystemExit(3)\n", "running it failed: SystemExit"),
    ],
)
def test_bad_model_files_give_one_line(tmp_path: Path, source: str, message: str) -> None:
    path = write(tmp_path / "bad.py", source)
    with pytest.raises(SpecError) as error:
        load_graph(str(path))
    text = str(error.value)
    assert text.startswith(str(path)) and message in text and "\n" not in text
    assert "torch_loader.py" not in text and not re.search(r"\(line \d+\)", text)  # no unnamed line


def test_example_inputs_of_the_wrong_kind(tmp_path: Path) -> None:
    source = (
        "import torch\ndef build_model():\n    return torch.nn.Linear(2, 2)\ndef example_inputs(b):\n    return 7\n"
    )
    with pytest.raises(SpecError, match="example_inputs must return a tuple, dict or tensor, got int"):
        load_graph(str(write(tmp_path / "kind.py", source)))


def test_state_dict_gives_parameter_counts_and_says_what_is_missing(tmp_path: Path) -> None:
    model = torch.nn.Sequential(torch.nn.Linear(5, 7), torch.nn.BatchNorm1d(7))
    path = tmp_path / "weights.pth"
    torch.save(model.state_dict(), path)
    graph = load_graph(str(path))
    assert graph.param_count == (5 * 7 + 7) + 2 * 7 == 56  # running stats are buffers, not parameters
    assert "no architecture, so no activation memory" in graph.name
    with pytest.raises(SpecError, match="holds only weights"):
        load_module(str(path))


def test_training_checkpoint_wrapper(tmp_path: Path) -> None:
    path = tmp_path / "checkpoint.bin"
    torch.save({"epoch": 3, "model": torch.nn.Linear(3, 2).state_dict()}, path)
    assert load_graph(str(path)).param_count == 8


def test_a_model_file_imports_helpers_beside_it(tmp_path: Path) -> None:
    # python FILE.py puts the file's folder on the path; the importer does the same
    (tmp_path / "my_layers.py").write_text("from torch import nn\n\ndef head():\n    return nn.Linear(8, 3)\n")
    (tmp_path / "net.py").write_text(
        "import torch\nfrom torch import nn\nfrom my_layers import head\n\n"
        "def build_model():\n    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), head())\n\n"
        "def example_inputs(batch_size):\n    return (torch.randn(batch_size, 4),)\n"
    )
    graph = load_graph(str(tmp_path / "net.py"))
    assert graph.param_count == 4 * 8 + 8 + 8 * 3 + 3  # 67


def test_damaged_torchscript_debug_info_is_refused_at_once(tmp_path: Path) -> None:
    import time
    import zipfile

    torch = pytest.importorskip("torch")
    good = tmp_path / "good.pt"
    torch.jit.script(torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(784, 2))).save(str(good))
    bad = tmp_path / "bad.pt"
    with zipfile.ZipFile(good) as source, zipfile.ZipFile(bad, "w") as target:
        for item in source.infolist():
            data = source.read(item)
            if item.filename.endswith(".debug_pkl"):
                data = data[:5] + b"\xbf\xff" + data[7:]  # what a bit flip does to the pickle
            target.writestr(item, data)
    start = time.perf_counter()
    with pytest.raises(SpecError, match=r"bad\.pt: damaged TorchScript archive \(debug info unreadable"):
        load_graph(str(bad))
    assert time.perf_counter() - start < 5.0
    assert load_graph(str(good)).param_count == 1570  # 784*2 + 2 (probed as 1x28x28): an intact one loads
