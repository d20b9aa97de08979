"""Sums of float16 values accumulate in float32 (`tc-widen-half-precision`):
on the CPU reference, the simulated GPU and in the CUDA C that nvcc compiles,
a half matmul's error against a float64 reference is that of an f32
accumulation rounded once (20x less than accumulating in half at K=1024)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import tcir

sys.path.insert(0, str(Path(__file__).parents[1] / "unit" / "cuda"))
from cuda_helpers import needs_nvcc, nvcc_compile  # noqa: E402

SOURCE = """
def tmm(float16(M,K) A, float16(N,K) B) -> (C) { C(m,n) +=! A(m,kk) * B(n,kk) }
def onto(float16(M,K) A, float16(M) b) -> (float16(M) C) { C(m) = b(m)  C(m) += A(m,k) }
def mixed(float16(M,K) A, float16(N,K) B) -> (float(M,N) C) { C(m,n) +=! A(m,kk) * B(n,kk) }
def softmax(float16(B,N) X) -> (Y) {
  mx(b) max=! X(b,n)  e(b,n) = exp(X(b,n) - mx(b))  s(b) +=! e(b,n)  Y(b,n) = e(b,n) / s(b)
}
"""
REGISTER_TILES = tcir.MappingOptions(
    tile=[16, 16, 32], threads=[8, 4], max_private_elements=8, vector_width=2, num_stages=3
)


@pytest.fixture(scope="module")
def mod():
    return tcir.define(SOURCE)


def _relative(got: np.ndarray, expected: np.ndarray) -> float:
    return float(np.abs(got.astype(np.float64) - expected).max() / np.abs(expected).max())


@pytest.mark.parametrize(
    ("backend", "options"),
    [("cpu", None), ("cuda-sim", None), ("cuda-sim", REGISTER_TILES)],
    ids=["cpu", "cuda-sim", "cuda-sim-register-tiles"],
)
def test_half_matmul_accumulates_in_f32(mod, backend, options):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((19, 1024)).astype(np.float16)
    b = rng.standard_normal((21, 1024)).astype(np.float16)
    expected = a.astype(np.float64) @ b.astype(np.float64).T
    rounded_once = (a.astype(np.float32) @ b.astype(np.float32).T).astype(np.float16)
    got = mod.tmm(a, b, backend=backend, options=options)
    assert got.dtype == np.float16
    assert _relative(got, expected) <= 1.5 * _relative(rounded_once, expected) + 1e-4
    half_sums = np.zeros((19, 21), np.float16)  # what accumulating in half gives
    for k in range(1024):
        half_sums = (half_sums + np.outer(a[:, k], b[:, k]).astype(np.float16)).astype(np.float16)
    assert _relative(got, expected) * 5 < _relative(half_sums, expected)


@pytest.mark.parametrize("backend", ["cpu", "cuda-sim"])
def test_a_mixed_precision_contraction_rounds_nothing(mod, backend):
    """Half inputs, a float output: products and sums in f32, as f32 inputs give."""
    rng = np.random.default_rng(3)
    a = rng.standard_normal((9, 1024)).astype(np.float16)
    b = rng.standard_normal((7, 1024)).astype(np.float16)
    got = mod.mixed(a, b, backend=backend)
    expected = a.astype(np.float64) @ b.astype(np.float64).T
    assert got.dtype == np.float32 and _relative(got, expected) < 1e-5


@pytest.mark.parametrize("backend", ["cpu", "cuda-sim"])
def test_a_sum_onto_values_starts_from_them(mod, backend):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((7, 2000)).astype(np.float16)
    b = (100 * rng.standard_normal(7)).astype(np.float16)
    expected = b.astype(np.float64) + a.astype(np.float64).sum(axis=1)
    got = mod.onto(a, b, backend=backend)
    np.testing.assert_allclose(got, expected, rtol=2e-3, atol=0.05)


@pytest.mark.parametrize("backend", ["cpu", "cuda-sim"])
def test_half_softmax_sums_in_f32(mod, backend):
    x = np.random.default_rng(2).standard_normal((5, 3000)).astype(np.float16)
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    expected = e / e.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(mod.softmax(x, backend=backend), expected, rtol=2e-2, atol=2e-6)


def test_half_attention_lowered_in_parts():
    """The default mapping of float16 attention runs it in parts (kernels
    of their own), and the parts' passes allocate f32 accumulators that the
    def does not declare: the parts' host code keeps them as its own (the
    lowering raised StopIteration before). Within half rounding of the CPU
    reference on the simulated GPU."""
    from tcir.runtime.inputs import random_inputs

    attention = tcir.define((Path(__file__).parents[2] / "examples" / "attention.tc").read_text()).attention
    attention = attention.astype("float16")
    q, k, v = random_inputs(attention.definition, {"B": 2, "L": 64, "D": 64}, 0)
    got = attention(q, k, v, backend="cuda-sim").astype(np.float64)
    expected = attention(q, k, v, backend="cpu").astype(np.float64)
    assert np.abs(got - expected).max() <= 4 * float(np.finfo(np.float16).eps) * np.abs(expected).max()


@pytest.mark.parametrize("backend", ["cpu", "cuda-sim"])
def test_a_literal_beyond_half_is_an_infinity(backend):
    """The docs' causal softmax writes max's identity as `-3.0e38`, which
    half cannot hold: in a float16 def it is `-inf`, as C and PyTorch round
    it (xDSL's constant raised OverflowError before)."""
    source = """def causal_softmax(float(N, N) S) -> (P) {
      M(i) max=! j <= i ? S(i, j) : -3.0e38
      E(i, j) = j <= i ? exp(S(i, j) - M(i)) : 0.0
      Z(i) +=! E(i, j)
      P(i, j) = E(i, j) / Z(i)
    }"""
    softmax = tcir.define(source).causal_softmax.astype("float16")
    x = np.random.default_rng(3).standard_normal((37, 37)).astype(np.float16)
    masked = np.where(np.tril(np.ones((37, 37), bool)), x.astype(np.float64), -np.inf)
    e = np.exp(masked - masked.max(axis=1, keepdims=True))
    np.testing.assert_allclose(softmax(x, backend=backend), e / e.sum(axis=1, keepdims=True), rtol=2e-2, atol=2e-6)


@needs_nvcc
def test_the_f32_accumulators_compile(mod, tmp_path):
    """The default mapping of a half matmul: f32 registers, no f32 tensor in memory."""
    a, b = np.zeros((128, 1024), np.float16), np.zeros((1024, 1024), np.float16)
    source = mod.tmm.ir(a, b, backend="cuda")
    assert "float private_C_acc" in source and "C_acc[" not in source.replace("private_C_acc[", "")
    nvcc_compile(source, tmp_path, warnings_are_errors=False)
