"""Point loops bounded by a minimum with a constant (a partial last tile)
run as a constant-bound loop in every full tile (`scf-for-loop-specialization`
in the CUDA pipeline): the simulated GPU computes numpy's numbers through
both versions, at k extents whose last tile is partial and whole."""

from __future__ import annotations

import re
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
    # k = 40 in tiles of 32 (8 points left): the vectorized loop of 8 steps is versioned.
    ("C3", [(16, 40), (24, 40)], O(tile=[8, 8, 32], threads=[8, 4], num_stages=2, vector_width=4, copy_vector_width=4), 8),
    ("tmm", [(19, 40), (21, 40)], O(tile=[16, 16, 32], threads=[8, 4], vector_width=4), 8),
    # k = 45 in tiles of 16, scalar: a loop of up to 16 points whose last tile has 13.
    ("tmm", [(19, 45), (21, 45)], O(tile=[16, 16, 16], threads=[8, 4], num_stages=2), 16),
    ("MLP1", [(9, 40), (13, 40), (13,)], O(tile=[8, 8, 32], threads=[8, 4], vector_width=4, split_k=2), 8),
]


def _function(name: str) -> tcir.Function:
    return tcir.define((EXAMPLES / f"{name}.tc").read_text())[name]


@pytest.mark.parametrize(("name", "shapes", "options", "steps"), CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_specialized_loops_compute_the_reference(name, shapes, options, steps):
    function = _function(name)
    binding = bind(function.definition, [np.zeros(s, np.float32) for s in shapes])
    inputs = random_inputs(function.definition, binding.sizes, 0)
    cuda = function.ir(*inputs, backend="cuda", options=options)
    # The full tiles' version: a loop of `steps`, then the partial tile's.
    assert re.search(rf"if \((v\d+) == {steps}\) {{\n *(#pragma unroll\n *)?for \(int (c\w+) = 0; \3 < {steps}; ", cuda), cuda
    assert re.search(r"} else {\n *for \(int (c\w+) = 0; \1 < v\d+; ", cuda), cuda
    got = function(*inputs, backend="cuda-sim", options=options)
    expected = reference_outputs(function.definition, bind(function.definition, inputs))
    for g, e in zip(got if isinstance(got, tuple) else (got,), expected, strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-4)
