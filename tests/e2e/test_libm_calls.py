"""Math library calls (`nextafter`, `erfc`, ...) on every path: the canonical
CPU lowering, the polyhedral CPU pipeline, the simulated GPU, and CUDA C that
nvcc compiles."""

from __future__ import annotations

import math

import numpy as np
import pytest
from cuda_checks import assert_nvcc_compiles, needs_nvcc

import tcir

UNARY = {
    "erfc": np.vectorize(math.erfc),
    "lgamma": np.vectorize(math.lgamma),
    "tgamma": np.vectorize(math.gamma),
    "logb": lambda x: np.floor(np.log2(np.abs(x))),
}
BINARY = {
    "nextafter": np.nextafter,
    "fmod": np.fmod,
    "hypot": np.hypot,
    "remainder": lambda a, b: a - b * np.rint(a / b),
}
PATHS = {
    "canonical": ("cpu", None),
    "polyhedral": ("cpu", tcir.MappingOptions(tile=[2])),
    "cuda-sim": ("cuda-sim", None),
}


def _case(name: str) -> tuple[tcir.Function, list[np.ndarray], np.ndarray]:
    a = np.array([0.75, 1.5, 2.25, 3.5, 5.0], np.float32)
    b = np.array([2.0, 1.0, 3.5, 0.5, 5.0], np.float32)
    if name in UNARY:
        source = f"def f(float(N) A) -> (C) {{ C(i) = {name}(A(i)) }}"
        return tcir.define(source).f, [a], UNARY[name](a.astype(np.float64))
    source = f"def f(float(N) A, float(N) B) -> (C) {{ C(i) = {name}(A(i), B(i)) }}"
    expected = BINARY[name](a, b) if name == "nextafter" else BINARY[name](a.astype(np.float64), b)
    return tcir.define(source).f, [a, b], expected


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("name", [*UNARY, *BINARY])
def test_libm_call(name, path):
    function, inputs, expected = _case(name)
    backend, options = PATHS[path]
    got = function(*inputs, backend=backend, options=options)
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=0)


@needs_nvcc
@pytest.mark.parametrize("name", [*UNARY, *BINARY])
def test_libm_call_compiles_for_cuda(name, tmp_path):
    function, inputs, _ = _case(name)
    source = function.ir(*inputs, backend="cuda")
    assert f"{name}f(" in source
    assert_nvcc_compiles(source, tmp_path / "kernel.cu")
