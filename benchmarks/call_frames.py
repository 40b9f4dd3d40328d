"""The analytic replay of torchvision's zoo models against the simulated step of torchvision's own code (the
real module run on the meta device, every tensor's life as Python keeps it): peak per model at batch 8,
inference in fp32 and fp16 and a training step, with and without the module-call references of
core/call_frames.py. Inference is where they matter: nothing is saved for backward there, so a block's
input that its call still references sets the worst moment.

Run: PYTHONPATH=$PWD /work/bench-venv/bin/python benchmarks/call_frames.py   (needs torchvision: a venv with
torch 2.14.1 and torchvision 0.29.1)
"""

from __future__ import annotations

import statistics
import sys
import tempfile
from pathlib import Path
from unittest import mock

import torchvision.models as tvm

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from advisor.core.analytic import estimate  # noqa: E402
from advisor.core.step_plan import StepPlan  # noqa: E402
from advisor.core.workload import Workload  # noqa: E402
from advisor.core.zoo import build, zoo_names  # noqa: E402
from advisor.importers.spec_estimate import simulator  # noqa: E402

SIDE = {"inception_v3": 299}
# The zoo's models: GoogLeNet without its auxiliary heads (torchvision publishes its counts so; weights=None
# would build them: 6.0 M parameters more), Inception v3 with AuxLogits (its published count includes them).
# init_weights=False skips the slow scipy truncated-normal initialisation; the values do not matter here.
EXTRA = {"googlenet": ", aux_logits=False, init_weights=False", "inception_v3": ", init_weights=False"}
MODEL_FILE = """import torchvision.models as tvm
from _common import classification_loss, image_batch
def build_model():
    return tvm.{name}(weights=None{extra})
def example_inputs(batch_size):
    return image_batch(batch_size, 3, {side}, 1000)
def loss_fn(output, inputs):  # training Inception v3 returns InceptionOutputs(logits, aux_logits)
    return classification_loss(getattr(output, "logits", output), inputs)
"""
WORKLOADS = (Workload("infer", 8, "fp32"), Workload("infer", 8, "fp16"), Workload("train", 8, "fp32", "sgd"))


def model_file(folder: Path, name: str) -> str:
    extra = EXTRA.get(name, "")
    path = folder / f"tv_{name}.py"
    path.write_text(MODEL_FILE.format(name=name, extra=extra, side=SIDE.get(name, 224)))
    return str(path)


def main() -> int:
    folder = Path(tempfile.mkdtemp())
    (folder / "_common.py").write_text((HERE / "models" / "_common.py").read_text())
    sys.path.insert(0, str(folder))
    errors: dict[str, list[float]] = {"with": [], "without": []}
    print(f"{'model':20} {'mode':5} {'prec':5} {'simulated MiB':>13} {'with':>7} {'without':>8}")
    for name in (n for n in zoo_names() if hasattr(tvm, n)):
        path = model_file(folder, name)
        for w in WORKLOADS:
            try:
                truth = simulator(path)(w).memory.peak_bytes
            except Exception as error:  # a model the simulation cannot run is listed, not fatal
                print(f"{name:20} {w.mode:5} {w.precision:5} not simulated: {str(error)[:60]}")
                continue
            graph = build(name)
            held = estimate(graph, w).memory.peak_bytes / truth - 1
            with mock.patch.object(StepPlan, "held_references", lambda self: []):
                free = estimate(graph, w).memory.peak_bytes / truth - 1
            if w.mode == "infer":
                errors["with"].append(abs(held))
                errors["without"].append(abs(free))
            print(f"{name:20} {w.mode:5} {w.precision:5} {truth / 2**20:13.1f} {held:+7.1%} {free:+8.1%}", flush=True)
    for key, values in errors.items():
        print(
            f"inference, {key} the call references: {len(values)} runs, median |error| "
            f"{statistics.median(values):.1%}, within 1%: {sum(v <= 0.01 for v in values)}, "
            f"worst {max(values):.1%}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
