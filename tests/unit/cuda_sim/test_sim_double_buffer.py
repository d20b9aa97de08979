"""Double-buffered shared tiles (`num_stages=3`: a second buffer of each
tile that the k loop's copies fill, one barrier a step) on the simulated
GPU, which faults on any race between two barriers, against numpy: k
loops of one, two and many steps, k extents the tile does not divide,
blocks that loop over several output tiles (the loop runs again, its first
tile stored while no thread reads the buffers), vector loads, split-K."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tcir
from tcir.runtime.inputs import random_inputs
from tcir.runtime.numpy_reference import reference_outputs
from tcir.runtime.signature import bind

EXAMPLES = Path(__file__).parents[3] / "examples"
O = tcir.MappingOptions

CASES = [
    ("tmm", [(32, 32), (32, 32)], O(tile=[32, 32, 32], threads=[16, 8], num_stages=3)),
    ("tmm", [(32, 64), (32, 64)], O(tile=[32, 32, 32], threads=[16, 8], num_stages=3)),
    ("tmm", [(37, 100), (29, 100)], O(tile=[16, 16, 16], threads=[8, 8], num_stages=3)),
    ("tmm", [(64, 96), (48, 96)], O(tile=[16, 16, 32], blocks=[2, 2], threads=[16, 4], num_stages=3)),
    ("tmm", [(40, 120), (24, 120)], O(tile=[32, 32, 40], threads=[8, 16], max_private_elements=16, vector_width=4, num_stages=3)),
    ("tmm", [(64, 96), (64, 96)], O(tile=[32, 32, 32], threads=[16, 8], split_k=2, num_stages=3)),
    ("C3", [(9, 40), (21, 40)], O(tile=[8, 8, 8], threads=[4, 4], max_private_elements=16, num_stages=3)),
]


@pytest.mark.parametrize(("name", "shapes", "options"), CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_double_buffered_tiles_compute_the_reference(name, shapes, options):
    function = tcir.define((EXAMPLES / f"{name}.tc").read_text())[name]
    binding = bind(function.definition, [np.zeros(s, np.float32) for s in shapes])
    inputs = random_inputs(function.definition, binding.sizes, 0)
    assert "[2][" in function.ir(*inputs, backend="cuda", options=options)  # double-buffered
    got = function(*inputs, backend="cuda-sim", options=options)
    expected = reference_outputs(function.definition, bind(function.definition, inputs))
    np.testing.assert_allclose(got, expected[0], rtol=1e-4, atol=1e-4)
