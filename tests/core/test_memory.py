"""The step-memory timeline: invariants and the article's lessons, with the arithmetic written out."""

from dataclasses import replace

from advisor.core.analytic import estimate
from advisor.core.graph import GraphBuilder
from advisor.core.ops import Conv, Input, Linear, MaxPool, ReLU
from advisor.core.tracker import rounded
from advisor.core.workload import Workload
from advisor.core.zoo.seed import cnn, mlp

MLP_PARAMS = 20037642  # 784*4096+4096 + 4096*4096+4096 + 4096*10+10
MLP_PARAM_BYTES = 80150568  # 4 bytes each


def train(batch: int = 256, optimizer: str = "sgd", **kw: object) -> Workload:
    return Workload("train", batch, kw.pop("precision", "fp32"), optimizer, **kw)  # type: ignore[arg-type]


def test_mlp_parameters() -> None:
    assert mlp().param_count == MLP_PARAMS


def test_adam_step_holds_five_copies_of_the_weights() -> None:
    # weights + gradients + exp_avg + exp_avg_sq + one foreach temporary (sqrt of exp_avg_sq)
    m = estimate(mlp(), train(optimizer="adam")).memory
    assert m.peak_phase == "optimizer step"
    weights = rounded(784 * 4096 * 4 + 4096 * 4) + rounded(4096 * 4096 * 4 + 4096 * 4) + rounded(4096 * 10 * 4 + 40)
    assert m.at_peak.weights == weights
    assert m.at_peak.optimizer_state == 2 * weights
    assert m.at_peak.gradients == weights
    assert abs(m.peak_bytes - 5 * MLP_PARAM_BYTES) / (5 * MLP_PARAM_BYTES) < 0.01


def test_optimizer_state_follows_the_rules_of_thumb() -> None:
    states = {
        opt: estimate(mlp(), train(optimizer=opt)).memory.at_peak.optimizer_state
        for opt in ("sgd", "sgd_momentum", "adam")
    }
    assert states["sgd"] == 0
    assert states["adam"] == 2 * states["sgd_momentum"] > 0


def test_memory_grows_with_batch_and_splits_into_fixed_plus_per_sample() -> None:
    small, large = (estimate(cnn(), train(b)).memory for b in (32, 64))
    assert large.peak_bytes > small.peak_bytes
    assert small.peak_phase == large.peak_phase
    # the same phase: peak(64) - peak(32) = 32 x per-sample bytes
    assert abs((large.peak_bytes - small.peak_bytes) - 32 * small.per_sample_bytes) < 0.001 * small.peak_bytes
    assert small.fixed_bytes == large.fixed_bytes


def test_per_layer_rows_add_up_to_the_totals() -> None:
    e = estimate(cnn(), train(32))
    assert sum(r.param_count for r in e.layers) == e.param_count == 1172004
    assert sum(r.forward_macs for r in e.layers) == e.forward_macs
    # saved tensors all exist at the end of the forward pass, so the peak is at least their sum
    assert sum(r.kept_bytes for r in e.layers) <= e.memory.peak_bytes
    # first conv: 32 * 64*128*128 * 4 bytes of output kept for its batchnorm
    assert e.layers[1].kept_bytes == 32 * 64 * 128 * 128 * 4


def test_inplace_relu_saves_memory_in_inference_but_not_after_batchnorm_in_training() -> None:
    def convnet(inplace: bool):  # conv -> relu -> pool: the peak is at the relu
        b = GraphBuilder("net")
        x = b.add(Input((3, 64, 64)), [])
        x = b.add(Conv(64, 3, padding=1), [x])
        x = b.add(ReLU(inplace_=inplace), [x])
        b.add(MaxPool(4), [x])
        return b.build()

    infer = Workload("infer", 16)
    saved = estimate(convnet(False), infer).memory.peak_bytes - estimate(convnet(True), infer).memory.peak_bytes
    # the in-place net peaks at the pool: one conv output less, the pool output and its int64 indices more
    assert saved == 16 * 64 * 64 * 64 * 4 - 16 * 64 * 16 * 16 * 4 - 16 * 64 * 16 * 16 * 8  # 13,631,488
    # measured on the H200 too: seed:cnn and seed:cnn_inplace peak at the same 1,180,542,976 bytes
    assert estimate(cnn(True), train(32)).memory.peak_bytes == estimate(cnn(False), train(32)).memory.peak_bytes


def test_inference_keeps_nothing_for_backward() -> None:
    e = estimate(cnn(), Workload("infer", 32))
    assert all(r.kept_bytes == 0 for r in e.layers)
    assert e.memory.at_peak.gradients == e.memory.at_peak.optimizer_state == 0
    assert e.step_flops == e.forward_flops


def test_mixed_precision_halves_activations_and_pure_bf16_halves_weights() -> None:
    fp32 = estimate(cnn(), train(64)).memory
    amp = estimate(cnn(), train(64, precision="amp_bf16")).memory
    bf16 = estimate(cnn(), train(64, precision="bf16")).memory
    assert amp.at_peak.weights == fp32.at_peak.weights
    assert amp.peak_bytes < 0.7 * fp32.peak_bytes
    assert bf16.at_peak.weights < 0.51 * fp32.at_peak.weights


def test_checkpointing_trades_memory_for_compute() -> None:
    plain = estimate(cnn(), train(64))
    ckpt = estimate(cnn(), replace(train(64), checkpointing=True))
    assert ckpt.memory.peak_bytes < 0.75 * plain.memory.peak_bytes


def test_two_linear_layers_by_hand() -> None:
    # input 4 -> Linear(8) -> ReLU -> Linear(2), batch 1000, SGD: every tensor written out
    b = GraphBuilder("tiny")
    x = b.add(Input((4,)), [])
    x = b.add(Linear(8), [x])
    x = b.add(ReLU(), [x])
    b.add(Linear(2), [x])
    e = estimate(b.build(), train(1000))
    rows = {r.name: r for r in e.layers}
    assert rows["linear1"].kept_bytes == 0  # relu keeps its own output, not its input
    assert rows["relu1"].kept_bytes == rounded(1000 * 8 * 4)  # read by relu's and linear2's backward
    assert rows["linear2"].kept_bytes == 0
    assert rows["loss"].kept_bytes == rounded(1000 * 2 * 4)  # log-probabilities
    assert e.memory.at_peak.inputs == rounded(1000 * 4 * 4) + rounded(1000 * 8)  # floats + int64 targets


def test_max_pool_in_inference_allocates_its_int64_indices_for_a_moment() -> None:
    # off the CPU F.max_pool2d runs max_pool2d_with_indices and drops the indices: output-sized, int64 whatever
    # the activations' dtype, so in fp16 they are four times the pooled output
    b = GraphBuilder("pool")
    x = b.add(Input((8, 64, 64)), [])
    b.add(MaxPool(2), [x])
    m = estimate(b.build(), Workload("infer", 4, "fp16")).memory
    pooled = 4 * 8 * 32 * 32  # 32768 elements
    assert m.at_peak.inputs == rounded(4 * 8 * 64 * 64 * 2)  # 262144 bytes
    assert m.at_peak.activations == rounded(pooled * 2)  # 65536 bytes
    assert m.at_peak.temporaries == rounded(pooled * 8)  # 262144 bytes of indices
    assert m.peak_bytes == 262144 + 65536 + 262144
