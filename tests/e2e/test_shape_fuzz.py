"""`tools/shape_fuzz.py`: the default mappings at random shapes."""

from __future__ import annotations

import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[2] / "tools"))
import shape_fuzz  # noqa: E402

CASES = "matmul_nt 2048,conv2d_stem,conv2d_pad1 32x64,attention_softmax,embedding_bag"


def test_default_mappings_compute_at_random_small_shapes():
    assert shape_fuzz.main(["--backend", "cuda-sim", "--count", "1", "--only", CASES, "--seed", "3"]) == 0


def test_default_mappings_lower_at_random_benchmark_shapes():
    assert shape_fuzz.main(["--count", "1", "--only", "conv2d_stem,maxpool2d_3x3", "--seed", "5"]) == 0


def test_derived_backwards_compute_at_random_small_shapes():
    assert shape_fuzz.main(["--backend", "cuda-sim", "--backward", "--count", "1", "--only", CASES, "--seed", "4"]) == 0


def test_a_shape_past_its_time_fails():
    shapes = shape_fuzz.draw(random.Random(0), 1, True, False, "matmul_nt 2048")
    assert [r for _, r in shape_fuzz.run(shapes, "cuda-sim", 1, 0.01)] == ["timeout: over 0.01 s"]
