"""One builder of what ranking needs, whichever way the model is estimated (recommend/prepare.py)."""

from dataclasses import replace

from advisor.core import zoo
from advisor.core.estimator import analytic_estimator
from advisor.core.graph import tokens_per_sample
from advisor.core.workload import Workload
from advisor.core.zoo.seed import mlp
from advisor.recommend.prepare import prepare, prepare_graph


def test_the_token_rule_takes_the_first_int64_input_with_positions() -> None:
    assert tokens_per_sample([("float", (3, 224, 224)), ("int64", (128,))]) == 128
    assert tokens_per_sample([("int64", ()), ("int64", (16, 8))]) == 16  # labels (per sample: ()) are skipped
    assert tokens_per_sample([("float", (784,))]) == 1
    assert zoo.build("gpt2", 256).tokens_per_sample == 256


def test_an_estimator_without_curves_is_probed_and_its_curves_run_through_the_probes() -> None:
    """The analytic replay stands in for a simulator: without its closed form, the curves go through the
    peaks measured at batches 1, 8, 64, ... (and the workload's 32)."""
    graph, workload = mlp(), Workload("train", 32, "fp32", "adam")
    estimator = analytic_estimator(graph)
    probed = prepare(replace(estimator, curves=None), workload)
    closed = prepare_graph(graph, workload)
    assert probed.estimate == closed.estimate
    at_64 = estimator.run(replace(workload, batch=64)).memory
    # through the probe at 64 (the upper envelope: never below it; above only where the probes are not
    # exactly convex, by the replay's 512-byte rounding)
    assert 0 <= probed.curve.peak_bytes(64) - at_64.peak_bytes <= at_64.peak_bytes // 10**5
    # required bytes are found by bisection to 0.2% of the peak (core/allocator.py), so the points wobble
    assert 0 <= probed.required.peak_bytes(64) - at_64.required_bytes <= at_64.peak_bytes * 0.002
    # the closed form is the replay's lines plus allocator slack: within 1% of the probed curve at batch 512
    assert abs(probed.curve.peak_bytes(512) / closed.curve.peak_bytes(512) - 1) < 0.01
    assert probed.work.tokens_per_sample == closed.work.tokens_per_sample == 1
