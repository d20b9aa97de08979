"""The stride analysis of `thread_loops` (the per-thread loops of mapped kernels)."""

from __future__ import annotations

import islpy as isl
import pytest

from tcir.polyhedral.thread_loops import _stride


@pytest.mark.parametrize(
    ("relation", "stride"),
    [
        # Round-robin values of a mapped member: offset t, every 8th.
        ("[t] -> { [p] -> [v] : exists e : v = t + 8e and 0 <= e < 4 and 0 <= t < 8 and 0 <= p < 3 }", 8),
        ("{ [p] -> [v] : exists e : v = p + 7e and 0 <= e < 5 and 0 <= p < 7 }", 7),
        ("{ [p] -> [v] : 0 <= v < 5 and 0 <= p < 3 }", 1),  # consecutive values
        ("{ [p] -> [v] : v = 2p and 0 <= p < 10 }", 1),  # one value a point: nothing to scale
        ("{ [p] -> [v] : p = 0 and (v = 0 or v = 4 or v = 10) }", 4),  # no progression: the least gap
    ],
)
def test_stride_is_the_least_gap_between_values_of_one_point(relation: str, stride: int):
    values = isl.Map(relation)
    assert _stride(values) == stride
    # Two values of one point never share floor(v / stride): scaling keeps their order.
    pairs = values.reverse().apply_range(values)
    same = isl.Map(f"{{ [v] -> [w] : v < w and floor(v / {stride}) = floor(w / {stride}) }}")
    assert pairs.intersect(same.align_params(pairs.get_space())).is_empty()


def test_no_values_no_stride():
    assert _stride(None) == 0
