"""Scatter-accumulate statements written by hand (`gE(I(b), d) += gO(b, d)`):
every backend and mapping against the numpy oracle, their index tensors
checked like a read's."""

import numpy as np
import pytest
from cases import assert_matches
from cuda_checks import assert_nvcc_compiles, needs_gpu, needs_nvcc

import tcir
from tcir.runtime.inputs import random_inputs
from tcir.runtime.numpy_reference import reference_outputs
from tcir.runtime.signature import bind

SOURCE = """
def embedding_grad(float(E,D) LUT, int(B,L) I, float(B,D) gO) -> (float(E,D) gE) {
  gE(I(b,k), d) +=! gO(b,d)
}
def shifted(float(M) I, float(N) K, float(O) gO) -> (float(M) gI) {
  gI(i + x) +=! gO(i) * K(x) where i in 0:M - N + 1
}
def strided(float(H) X, float(P) gO) -> (float(H) gX) {
  gX(2 * i + k) += gO(i) * X(2 * i + k) where k in 0:2, i in 0:P
}
def guarded(float(H) X, float(P) gO) -> (float(H) gX) {
  gX(2 * i + k - 1) +=! (2 * i + k >= 1 && 2 * i + k <= H) ? gO(i) * X(k) : 0.0 where k in 0:3, i in 0:P
}
def histogram(int(N) V, float(N) W, float(K) Bins) -> (float(K) H) {
  H(V(i)) +=! W(i)
  H(j) = H(j) * Bins(j)
}
"""
SIZES = {
    "embedding_grad": {"E": 7, "D": 5, "B": 4, "L": 3},
    "shifted": {"M": 9, "N": 3, "O": 7},
    "strided": {"H": 9, "P": 4},
    "histogram": {"N": 50, "K": 4},
    "guarded": {"H": 9, "P": 5},  # a strided, padded convolution's input gradient: the guard keeps it in bounds
}
OPTIONS = {
    "reference": ("cpu", None),
    "cpu-tiled": ("cpu", tcir.MappingOptions(tile=[2, 2])),
    "sim-default": ("cuda-sim", None),
    "sim-atomic": ("cuda-sim", tcir.MappingOptions(parallel_reductions=True, threads=[8])),
    "sim-tiled": ("cuda-sim", tcir.MappingOptions(tile=[4, 4], threads=[4, 2])),
}


@pytest.fixture(scope="module")
def mod():
    return tcir.define(SOURCE, "scatter.tc")


@pytest.mark.parametrize("variant", OPTIONS)
@pytest.mark.parametrize("name", SIZES)
def test_scatter_matches_numpy(mod, name, variant):
    backend, options = OPTIONS[variant]
    function = mod[name]
    inputs = random_inputs(function.definition, SIZES[name], seed=3)
    expected = reference_outputs(function.definition, bind(function.definition, inputs))
    got = function(*inputs, backend=backend, options=options)
    assert_matches(got if isinstance(got, tuple) else (got,), expected)


def test_the_oracle_adds_every_instance(mod):
    inputs = random_inputs(mod.embedding_grad.definition, SIZES["embedding_grad"], seed=3)
    _, index, grad = inputs
    expected = np.zeros((7, 5))
    for b in range(4):
        for k in range(3):
            expected[index[b, k]] += grad[b]
    np.testing.assert_allclose(mod.embedding_grad(*inputs), expected, rtol=1e-6)


def test_atomic_scatter_is_atomic_rmw(mod):
    inputs = random_inputs(mod.embedding_grad.definition, SIZES["embedding_grad"], seed=3)
    ir = mod.embedding_grad.ir(*inputs, backend="cuda-sim", options=OPTIONS["sim-atomic"][1])
    assert '"memref.atomic_rmw"' in ir and 'tensor = "gE", source = "I"' in ir


@pytest.mark.parametrize("backend", ["cpu", "cuda-sim"])
def test_an_index_out_of_range_is_an_error(mod, backend):
    lut, index, grad = random_inputs(mod.embedding_grad.definition, SIZES["embedding_grad"], seed=3)
    index[2, 1] = 7
    with pytest.raises(tcir.TCError, match="'I'") as error:
        mod.embedding_grad(lut, index, grad, backend=backend)
        tcir.synchronize()
    assert "gE" in str(error.value)


@needs_nvcc
def test_atomic_scatter_compiles(mod, tmp_path):
    inputs = random_inputs(mod.embedding_grad.definition, SIZES["embedding_grad"], seed=3)
    source = mod.embedding_grad.ir(*inputs, backend="cuda", options=OPTIONS["sim-atomic"][1])
    assert "tc_atomic_add(" in source
    assert_nvcc_compiles(source, tmp_path / "scatter.cu")


@needs_gpu
@pytest.mark.parametrize("variant", ["default", "atomic"])
@pytest.mark.parametrize("name", SIZES)
def test_scatter_on_the_gpu(mod, name, variant):
    import cupy

    function = mod[name]
    inputs = random_inputs(function.definition, {k: 3 * v for k, v in SIZES[name].items()}, seed=3)
    expected = reference_outputs(function.definition, bind(function.definition, inputs))
    options = tcir.MappingOptions(parallel_reductions=True) if variant == "atomic" else None
    got = function(*(cupy.asarray(x) for x in inputs), options=options)
    got = got if isinstance(got, tuple) else (got,)
    assert_matches(tuple(cupy.asnumpy(g) for g in got), expected)
