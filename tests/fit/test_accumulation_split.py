"""Gradient accumulation keeps the batch asked for (issue 27: make-it-fit gave an effective batch of 258 for 256)."""

from advisor.recommend.fit.changes import accumulation


def test_accumulation_divides_the_batch_exactly_where_it_can() -> None:
    assert accumulation(256, 86) == (4, 64)  # 3 steps of 86 = 258; 4 of 64 = 256
    assert accumulation(256, 128) == (2, 128)
    assert accumulation(96, 40) == (3, 32)  # ceil(96 / 40) = 3 divides 96
    # 257 is prime: no exact split within twice the fewest steps (3..6), so 3 even steps of 86 (258)
    assert accumulation(257, 100) == (3, 86)
