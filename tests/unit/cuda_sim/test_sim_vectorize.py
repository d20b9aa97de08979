"""Vector loads of shared tiles (`vector_width`: rows padded to aligned
vectors, reduction point loops strip-mined and unrolled by the width),
vector copies into them (`copy_vector_width`), transposed tiles of operands
that are not k-major (`transpose_copies`) and partial unrolling (`unroll`)
on the simulated GPU, against numpy at ragged sizes: partial tiles, k
extents that the width does not divide, widths 2 and 4, with and without
register staging of the copies."""

from __future__ import annotations

import dataclasses
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
    ("tmm", [(37, 45), (29, 45)], O(tile=[16, 16, 8], threads=[4, 4], max_private_elements=16, vector_width=4)),
    ("tmm", [(37, 45), (29, 45)], O(tile=[16, 8, 12], threads=[8, 4], num_stages=2, vector_width=4)),
    ("tmm", [(33, 64), (40, 64)], O(tile=[32, 32, 16], threads=[8, 8], max_private_elements=16, num_stages=2, vector_width=4)),
    ("tmm", [(33, 64), (40, 64)], O(tile=[32, 32, 16], threads=[8, 8], vector_width=2, unroll=8)),
    ("tmm", [(17, 30), (19, 30)], O(tile=[8, 8, 10], threads=[8, 4], vector_width=2, unroll=4)),
    ("tbmm", [(3, 5, 24), (3, 7, 24)], O(tile=[1, 5, 7], threads=[7, 5], vector_width=4)),
    ("C3", [(9, 40), (21, 40)], O(tile=[8, 8, 20], threads=[4, 4], max_private_elements=16, vector_width=4, num_stages=2)),
    ("MLP1", [(9, 48), (13, 48), (13,)], O(tile=[8, 8, 16], threads=[8, 4], vector_width=4, unroll=2)),
    # Float4 (float2) copies from global memory: whole tiles, staged, double-buffered, ragged (scalar copies).
    ("tmm", [(64, 64), (32, 64)], O(tile=[32, 32, 32], threads=[16, 8], copy_vector_width=4)),
    ("tmm", [(64, 64), (32, 64)], O(tile=[32, 32, 32], threads=[16, 8], num_stages=2, vector_width=4, copy_vector_width=4)),
    ("tmm", [(64, 64), (32, 64)], O(tile=[32, 32, 16], threads=[8, 8], num_stages=3, copy_vector_width=4)),
    ("tmm", [(37, 48), (29, 48)], O(tile=[16, 16, 16], threads=[8, 4], num_stages=2, copy_vector_width=2)),
    ("tmm", [(37, 45), (29, 45)], O(tile=[16, 16, 12], threads=[8, 4], num_stages=2, copy_vector_width=4)),
    ("C3", [(9, 40), (21, 40)], O(tile=[8, 8, 20], threads=[4, 4], max_private_elements=16, num_stages=2, copy_vector_width=4)),
    # A ragged last k tile (8 of 32 points): its float4 copies guarded and staged, as C3's default.
    ("C3", [(16, 40), (24, 40)], O(tile=[8, 8, 32], threads=[8, 4], num_stages=2, vector_width=4, copy_vector_width=4)),
    ("MLP1", [(9, 64), (13, 64), (13,)], O(tile=[8, 8, 16], threads=[8, 4], split_k=2, num_stages=2, copy_vector_width=4)),
    ("tbmm", [(3, 5, 24), (3, 7, 24)], O(tile=[1, 5, 7], threads=[7, 5], copy_vector_width=4)),
]


@pytest.mark.parametrize(("name", "shapes", "options"), CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_vector_width_computes_the_reference(name, shapes, options):
    function = tcir.define((EXAMPLES / f"{name}.tc").read_text())[name]
    binding = bind(function.definition, [np.zeros(s, np.float32) for s in shapes])
    inputs = random_inputs(function.definition, binding.sizes, 0)
    got = function(*inputs, backend="cuda-sim", options=options)
    expected = reference_outputs(function.definition, bind(function.definition, inputs))
    for g, e in zip(got if isinstance(got, tuple) else (got,), expected, strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-4)


TRANSPOSED = [
    ("zoo/matmul", "matmul_nn", [(37, 45), (45, 29)], O(tile=[16, 16, 8], threads=[4, 4], max_private_elements=16, vector_width=4)),
    ("zoo/matmul", "matmul_tt", [(48, 33), (40, 48)], O(tile=[32, 32, 16], threads=[8, 8], max_private_elements=16, num_stages=3, async_copies=True, vector_width=4, copy_vector_width=4)),
    ("zoo/matmul", "matmul_tn", [(40, 33), (40, 35)], O(tile=[16, 16, 8], threads=[8, 4], num_stages=2, vector_width=2)),
    ("zoo/batch_matmul", "batch_matmul", [(3, 21, 19), (3, 19, 35)], O(tile=[1, 16, 16, 8], threads=[8, 8], num_stages=3, vector_width=4)),
    ("sgemm", "sgemm", [(), (), (13, 12), (12, 9), (13, 9)], O(tile=[8, 8, 4], threads=[4, 4], vector_width=4)),
    # Groups of a thread's points (size_per_thread): the k-major operands'
    # tiles laid out k x m, copied by float4 loads whose lanes go down a
    # column (ragged tiles, k rows of no whole float4 groups).
    ("zoo/matmul", "matmul_nn", [(37, 44), (44, 29)], O(tile=[32, 32, 16], threads=[4, 4], size_per_thread=[4, 4], max_private_elements=64, num_stages=2, vector_width=4, copy_vector_width=4)),
    ("zoo/matmul", "matmul_nt", [(40, 42), (36, 42)], O(tile=[32, 32, 8], threads=[8, 4], size_per_thread=[2, 4], max_private_elements=32, num_stages=3, async_copies=True, vector_width=4, copy_vector_width=4)),
    ("zoo/batch_matmul", "batch_matmul", [(2, 24, 16), (2, 16, 32)], O(tile=[1, 16, 16, 8], threads=[4, 4], size_per_thread=[2, 2], num_stages=3, async_copies=True, vector_width=2, copy_vector_width=4)),
]


@pytest.mark.parametrize(("file", "name", "shapes", "options"), TRANSPOSED, ids=[f"{c[1]}-{i}" for i, c in enumerate(TRANSPOSED)])
def test_transposed_copies_compute_the_reference(file, name, shapes, options):
    """`transpose_copies` on sums with operands stored k x n (B of NN, A of
    TT, both of TN; batched; sgemm's second statement), and with groups on
    those stored m x k, whatever the reads' vector width, staging and
    asynchronous copies."""
    function = tcir.define((EXAMPLES / f"{file}.tc").read_text())[name]
    arrays = [np.zeros(s, np.float32) if s else np.float32(1) for s in shapes]
    inputs = random_inputs(function.definition, bind(function.definition, arrays).sizes, 0)
    transposed = dataclasses.replace(options, transpose_copies=True)
    assert "transpose-copies=true" in transposed.pipeline(bind(function.definition, inputs).sizes, "cuda-sim")
    got = function(*inputs, backend="cuda-sim", options=transposed)
    expected = reference_outputs(function.definition, bind(function.definition, inputs))
    np.testing.assert_allclose(got, expected[0], rtol=1e-4, atol=1e-4)


def test_vector_width_strip_mines_the_reduction_loop():
    """The k point loop of 16 becomes 4 steps of 4 unrolled reads (the FileCheck
    test gpu/vectorize.tc shows the IR; here the pipeline drives it)."""
    function = tcir.define((EXAMPLES / "tmm.tc").read_text()).tmm
    inputs = [np.zeros((64, 64), np.float32)] * 2
    options = O(tile=[32, 32, 16], threads=[8, 8], max_private_elements=16, vector_width=4)
    source = function.ir(*inputs, backend="cuda", options=options)
    assert "__shared__ __align__(16) float shared_A[32][20];" in source
    assert "poly-vectorize{width=4}" in options.pipeline(backend="cuda")
    assert "][4 * c" in source and "+ 3]" in source


@pytest.mark.parametrize("width", [0, 3, 16, True, "4"])
def test_bad_vector_width_is_a_tc_error(width):
    with pytest.raises(tcir.TCError, match="vector_width"):
        O(vector_width=width)
