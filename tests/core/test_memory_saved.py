"""What autograd keeps depends on which inputs need a gradient (tools/autograd/derivatives.yaml)."""

from advisor.core.graph import GraphBuilder
from advisor.core.ops import Input, Linear, Mul
from advisor.core.replay import replay_step
from advisor.core.workload import Workload


def test_a_product_with_a_constant_keeps_only_the_constant() -> None:
    assert Mul().inputs_saved([True, False]) == (1,) and Mul().inputs_saved([True, True]) == (0, 1)
    b = GraphBuilder("masked")
    x = b.add(Input((32,)), [])
    h = b.add(Linear(32), [x], "proj")
    b.add(Mul(), [h, x], "mask")  # the input needs no gradient: only it is kept, not proj's output
    kept = replay_step(b.build(), Workload("train", 8, "fp32", "sgd")).kept_bytes
    # proj's output (8 x 32 x 4 = 1,024 B) is kept by nothing; the input (1,024 B) by proj and by the product
    assert kept[1] == 0 and kept[0] == 1_024
