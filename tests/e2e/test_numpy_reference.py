"""The numpy oracle (used by tcir-run) agrees with hand-written references."""

import numpy as np
import pytest

import tcir
from cases import PAPER_KERNELS, as_float64, assert_matches
from tcir.runtime.numpy_reference import reference_outputs
from tcir.runtime.signature import bind


@pytest.mark.parametrize("case", PAPER_KERNELS, ids=lambda c: c.name)
def test_oracle_matches_hand_written_reference(case):
    inputs = case.inputs(np.random.default_rng(0))
    definition = tcir.define(case.source)[case.entry].definition
    outputs = reference_outputs(definition, bind(definition, inputs))
    assert_matches(tuple(outputs), case.reference(*as_float64(inputs)))


@pytest.mark.parametrize(
    "source",
    [
        "def f(int32(N,M) X) -> (Y) { Y(i,j) = X(i,j) / 3 - X(i,j) % 4 * 2 }",
        "def f(float(N,M) X) -> (Y) { Y(i) max=! X(i,j) > 0 ? X(i,j) : -X(i,j) * 0.5 }",
        "def f(float(N,M) X) -> (Y, Z) { T(i) *=! X(i,j)\n Y(i) = T(i) + 1\n Z() min=! T(i) }",
        "def f(uint8(N) X) -> (Y) { Y(i) = X(i) * X(i) }",
    ],
)
def test_oracle_matches_the_cpu_backend(source):
    function = next(iter(tcir.define(source)._functions.values()))
    rng = np.random.default_rng(3)
    dtype = function.definition.inputs[0].dtype
    if dtype == "float32":
        x = rng.standard_normal((4, 6)).astype(np.float32)
    else:
        x = rng.integers(-20, 20, (4, 6) if dtype == "int32" else (9,)).astype(dtype)
    outputs = function(x)
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    expected = reference_outputs(function.definition, bind(function.definition, [x]))
    for got, ref in zip(outputs, expected):
        if got.dtype.kind == "f":
            assert_matches(got, (ref,))
        else:
            assert got.dtype == ref.dtype and (got == ref).all()
