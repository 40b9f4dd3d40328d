"""A module call keeps its arguments referenced until it returns: in inference that, not the last reader in
the graph, sets when a block's input is freed (core/call_frames.py)."""

from __future__ import annotations

from advisor.core.analytic import estimate
from advisor.core.call_frames import module_arguments
from advisor.core.graph import Graph, GraphBuilder
from advisor.core.ops import Input, Linear
from advisor.core.tracker import rounded
from advisor.core.workload import Workload
from advisor.core.zoo import build


def _chain(blocks: bool) -> Graph:
    """input 1000 -> Linear 1000 -> [block: Linear 1000 -> Linear 1000 -> Linear 1000], no bias."""
    b = GraphBuilder("chain")
    x = b.add(Input((1000,)), [])
    x = b.add(Linear(1000, bias=False), [x], "stem")
    if blocks:
        with b.block("layer1"), b.block("0"):
            for name in ("fc1", "fc2", "fc3"):
                x = b.add(Linear(1000, bias=False), [x], name)
    else:
        for name in ("layer1.0.fc1", "layer1.0.fc2", "layer1.0.fc3"):  # the same names, no declared block
            x = b.add(Linear(1000, bias=False), [x], name)
    return b.build()


def test_a_block_input_stays_allocated_until_the_block_returns() -> None:
    infer = Workload("infer", 1, "fp32")
    weights = 4 * rounded(1000 * 1000 * 4)  # four 1000x1000 fp32 matrices (allocations in 512 B blocks)
    vector = rounded(1000 * 4)  # one sample's 1000 floats: 4,096 B allocated
    held, free = estimate(_chain(True), infer).memory, estimate(_chain(False), infer).memory
    # a layer's input and output beside the image, always held; with the block declared the block's input
    # (the stem's output) is still referenced by the call while fc2 and fc3 run
    assert free.peak_bytes == weights + 3 * vector
    assert held.peak_bytes == weights + 4 * vector
    stem = 1
    assert (stem, 4) in module_arguments(_chain(True))  # held until fc3 (node 4) has run
    assert module_arguments(_chain(False)) == []  # dotted names alone are not taken for module calls


def test_torchvision_resnet_blocks_and_their_containers_hold_their_inputs() -> None:
    graph = build("resnet50")
    names = [n.name for n in graph.nodes]
    held = module_arguments(graph)
    first, last = names.index("layer1.0.conv1"), max(i for i, n in enumerate(names) if n.startswith("layer1."))
    block_input = graph.nodes[first].inputs[0]  # the max-pool's output
    # `x = self.layer1(x)`: the container's input lives until layer1's last node, past the first block
    assert (block_input, last) in held


def test_the_models_own_children_hold_their_arguments_in_a_graph_with_blocks() -> None:
    # Inception v3's `x = self.Conv2d_2b_3x3(x)`: the 2a output is referenced until that BasicConv2d returns
    graph = build("inception_v3")
    names = [n.name for n in graph.nodes]
    conv, relu = names.index("Conv2d_2b_3x3.conv"), names.index("Conv2d_2b_3x3.relu")
    assert (graph.nodes[conv].inputs[0], relu) in module_arguments(graph)
    # so at its batchnorm the 2a output (32x147x147), the conv output and the bn output (64x147x147) are live
    m = estimate(graph, Workload("infer", 8, "fp32")).memory
    assert m.peak_layer == "Conv2d_2b_3x3.bn"
    assert m.at_peak.activations == rounded(8 * 32 * 147 * 147 * 4) + 2 * rounded(8 * 64 * 147 * 147 * 4)


def test_densenet_keeps_the_concatenation_until_conv1_and_a_transition_its_argument() -> None:
    graph = build("densenet121")
    names = [n.name for n in graph.nodes]
    layer = "features.denseblock1.denselayer6."
    cat, conv1 = names.index(layer + "cat"), names.index(layer + "conv1")
    assert (cat, conv1) in graph.holds  # bn_function's local concated_features
    # features.transition1 is a child of the `features` Sequential: the block's cat is held until its pool
    norm, pool = names.index("features.transition1.norm"), names.index("features.transition1.pool")
    assert (graph.nodes[norm].inputs[0], pool) in module_arguments(graph)
    m = estimate(graph, Workload("infer", 8, "fp32")).memory
    assert m.peak_layer == layer + "conv1"
    # live there: the block's features (64 + 5*32 = 224 channels at 56x56, as six tensors), their cat, norm1's
    # output (relu1 in place) and conv1's 128 channels
    features = rounded(8 * 64 * 56 * 56 * 4) + 5 * rounded(8 * 32 * 56 * 56 * 4)
    assert m.at_peak.activations == features + 2 * rounded(8 * 224 * 56 * 56 * 4) + rounded(8 * 128 * 56 * 56 * 4)
