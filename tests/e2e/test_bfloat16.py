"""`bfloat16` (PyTorch's name; numpy arrays of `ml_dtypes.bfloat16`, torch
tensors): computed in f32 and rounded on store on the CPU reference
(`arith-emulate-bf16`), in `__nv_bfloat16` on the GPU (the simulated GPU,
and CUDA C that nvcc compiles); sums accumulate in f32."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import tcir

sys.path.insert(0, str(Path(__file__).parents[1] / "unit" / "cuda"))
from cuda_helpers import needs_nvcc, nvcc_compile  # noqa: E402

BF16 = ml_dtypes.bfloat16
SOURCE = """
def tmm(bfloat16(M,K) A, bfloat16(N,K) B) -> (C) { C(m,n) +=! A(m,kk) * B(n,kk) }
def gelu(bfloat16(N) X) -> (bfloat16(N) Y) { Y(i) = 0.5 * X(i) * (1.0 + erf(X(i) * 0.70710678)) }
def mix(bfloat16(N) X, float16(N) H) -> (Y) { Y(i) = X(i) + H(i) }
"""


@pytest.fixture(scope="module")
def mod():
    return tcir.define(SOURCE)


def _bits(a: np.ndarray) -> np.ndarray:
    return a.view(np.uint16)


@pytest.mark.parametrize("backend", ["cpu", "cuda-sim"])
def test_matmul_accumulates_in_f32_and_rounds_once(mod, backend):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((9, 700)).astype(BF16), rng.standard_normal((11, 700)).astype(BF16)
    expected = a.astype(np.float64) @ b.astype(np.float64).T
    got = mod.tmm(a, b, backend=backend)
    assert got.dtype == BF16
    rounded_once = (a.astype(np.float32) @ b.astype(np.float32).T).astype(BF16).astype(np.float64)
    error = np.abs(got.astype(np.float64) - expected).max() / np.abs(expected).max()
    assert error <= 1.5 * np.abs(rounded_once - expected).max() / np.abs(expected).max() + 1e-3


def test_stores_round_to_nearest_even_on_the_cpu(mod):
    """Values computed in f32 and rounded once on store, as numpy's cast does
    (ties to even; infinities and NaN kept)."""
    x = np.array([1.0, 1.00390625, 1.01171875, -3.3, 65504.0, 3.0e38, np.inf, -np.inf, np.nan], np.float32)
    x = np.concatenate([x, np.random.default_rng(1).standard_normal(500).astype(np.float32)]).astype(BF16)
    got = mod.gelu(x, backend="cpu")
    wide = x.astype(np.float64)
    with np.errstate(invalid="ignore"):
        expected = (0.5 * wide * (1.0 + np.vectorize(math.erf)(wide * 0.70710678))).astype(np.float32)
    finite = np.isfinite(expected)
    np.testing.assert_array_equal(_bits(got)[finite], _bits(expected.astype(BF16))[finite])
    assert np.isnan(got[8].astype(np.float32))


def test_bfloat16_and_float16_meet_in_float32(mod):
    x = np.arange(8).astype(BF16)
    h = np.arange(8).astype(np.float16) / 4
    got = mod.mix(x, h, backend="cpu")
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, x.astype(np.float32) + h.astype(np.float32))


def test_simulated_gpu_matches_the_reference(mod):
    x = np.random.default_rng(2).standard_normal(300).astype(BF16)
    cpu, sim = mod.gelu(x, backend="cpu"), mod.gelu(x, backend="cuda-sim")
    np.testing.assert_allclose(sim.astype(np.float32), cpu.astype(np.float32), rtol=2e-2, atol=1e-2)


def test_torch_tensors_in_and_out(mod):
    torch = pytest.importorskip("torch")
    a, b = torch.randn(5, 64, dtype=torch.bfloat16), torch.randn(3, 64, dtype=torch.bfloat16)
    got = mod.tmm(a, b)
    assert isinstance(got, torch.Tensor) and got.dtype == torch.bfloat16
    torch.testing.assert_close(got, (a.float() @ b.float().T).bfloat16(), rtol=1e-2, atol=1e-2)


def test_astype_runs_a_float_def_on_bfloat16():
    f = tcir.define("def f(float(N) X) -> (Y) { Y(i) = X(i) * 3.0 }").f.astype("bfloat16")
    x = np.arange(5).astype(BF16)
    np.testing.assert_array_equal(f(x).astype(np.float32), np.arange(5, dtype=np.float32) * 3)


@needs_nvcc
@pytest.mark.parametrize("name", ["gelu", "tmm"])
def test_cuda_c_compiles(mod, name, tmp_path):
    args = [np.zeros(1000, BF16)] if name == "gelu" else [np.zeros((128, 256), BF16), np.zeros((64, 256), BF16)]
    source = mod[name].ir(*args, backend="cuda")
    assert "#include <cuda_bf16.h>" in source and "__nv_bfloat16" in source
    nvcc_compile(source, tmp_path, warnings_are_errors=False)
