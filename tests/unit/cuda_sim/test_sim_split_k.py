"""Split-K (`MappingOptions(split_k=S)`) on the simulated GPU against numpy:
the k tiles of a sum dealt to slices of blocks, each block looping over its
slice's k tiles and adding its partial sums atomically, at small ragged
sizes (M, N, K no multiples of the tiles, k tiles no multiple of the
slices); and on the CPU backend, where the slices are outer loops."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import tcir

EXAMPLES = Path(__file__).parents[3] / "examples"
rng = np.random.default_rng(0)
A = rng.standard_normal((37, 300)).astype(np.float32)
B = rng.standard_normal((45, 300)).astype(np.float32)
BIAS = rng.standard_normal(45).astype(np.float32)


def example(name: str) -> tcir.Function:
    return tcir.define((EXAMPLES / f"{name}.tc").read_text())[name]


def close(got, expected):
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4 * max(1.0, np.abs(expected).max()))


def check_examples(options: tcir.MappingOptions, backend: str) -> None:
    """tmm and C3 (a sum of their own) and MLP1 (an initialization, the sum,
    and a layer after it reading the sum whole) against numpy."""
    close(example("tmm")(A, B, backend=backend, options=options), A @ B.T)
    close(example("C3")(A, B, backend=backend, options=options), A @ B.T)
    close(example("MLP1")(A, B, BIAS, backend=backend, options=options), np.maximum(A @ B.T + BIAS, 0))


SETTINGS = [
    # 10 k tiles, 5 a slice.
    tcir.MappingOptions(split_k=2, tile=[32, 32, 32], threads=[32, 8]),
    # 2x2 register tiles; 5 k tiles (the last partial) in slices of 2, 2, 1.
    tcir.MappingOptions(split_k=3, tile=[16, 16, 64], threads=[8, 8]),
    # Blocks round-robin over tiles and slices; 43 k tiles in slices of 11 (the last 10).
    tcir.MappingOptions(split_k=4, tile=[16, 8, 7], threads=[8, 4], blocks=[2, 1, 2]),
    # 19 k tiles in 7 slices of 3 (the last 1), copies prefetched into registers.
    tcir.MappingOptions(split_k=8, tile=[32, 32, 16], threads=[16, 8], num_stages=2),
    # No accumulators: every product added atomically.
    tcir.MappingOptions(split_k=4, tile=[32, 32, 32], threads=[8, 8], use_private_memory=False),
    # Operands read from global memory.
    tcir.MappingOptions(split_k=2, tile=[32, 32, 32], threads=[32, 8], use_shared_memory=False),
    # Untiled: the k loop itself in 3 slices of 100.
    tcir.MappingOptions(split_k=3),
    # More slices than k tiles (3): a slice a k tile.
    tcir.MappingOptions(split_k=16, tile=[16, 32, 128], threads=[32, 4], unroll=4),
]


@pytest.mark.parametrize("options", SETTINGS, ids=str)
def test_split_k_on_the_simulated_gpu(options):
    source = example("tmm").ir(A, B, backend="cuda", options=options)
    sum_kernel = source[source.index("tmm_kernel1(") :]
    slice_id = re.search(r"const int (v\d+) = blockIdx.z;", sum_kernel)
    assert slice_id and re.search(rf"\b{slice_id[1]}\b", sum_kernel[slice_id.end() :]), "blocks take the slices"
    assert "tc_atomic_add" in sum_kernel
    check_examples(options, "cuda-sim")


@pytest.mark.parametrize("options", SETTINGS[:3], ids=str)
def test_split_k_on_the_cpu(options):
    assert "poly-split-k" in options.pipeline(backend="cpu")
    check_examples(options, "cpu")


def test_integer_sums_split_exactly():
    ints = rng.integers(-50, 50, (5, 1001)).astype(np.int32)
    rowsum = tcir.define("def isum(int32(B,K) A) -> (s) { s(b) +=! A(b,k) }").isum
    options = tcir.MappingOptions(split_k=3, tile=[4, 64], threads=[64])
    np.testing.assert_array_equal(rowsum(ints, backend="cuda-sim", options=options), ints.sum(1))
