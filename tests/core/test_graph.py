"""Graph-level figures that several layers read (one home: advisor.core.graph.Graph)."""

from advisor.core import zoo


def test_token_ids_in_count_one_token_per_position_and_images_one_sample() -> None:
    assert zoo.build("bert-base", seq_len=128).tokens_per_sample == 128  # int64 ids of shape (128,)
    assert zoo.build("bert-base", seq_len=384).tokens_per_sample == 384
    assert zoo.build("resnet18").tokens_per_sample == 1  # a float 3x224x224 image is one sample
