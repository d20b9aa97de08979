"""Every paper kernel on the CPU backend against numpy in float64."""

import numpy as np
import pytest

import tcir
from cases import PAPER_KERNELS, as_float64, assert_matches


@pytest.fixture(autouse=True)
def poison_outputs(monkeypatch):
    """Outputs not meant to start at zero start as NaN (or -1 for integers)."""

    def empty(xp, shape, dtype):
        return xp.full(shape, np.nan if np.dtype(dtype).kind == "f" else -1, dtype)

    monkeypatch.setattr("tcir.api.uninitialized", empty)


@pytest.mark.parametrize("case", PAPER_KERNELS, ids=lambda c: c.name)
def test_paper_kernel_on_cpu(case):
    rng = np.random.default_rng(0)
    inputs = case.inputs(rng)
    function = tcir.define(case.source, f"{case.name}.tc")[case.entry]
    outputs = function(*inputs, backend="cpu")
    assert_matches(outputs, case.reference(*as_float64(inputs)))


@pytest.mark.parametrize("fusion", ["min", "max", "preserve3", "outer"])
@pytest.mark.parametrize("case", PAPER_KERNELS, ids=lambda c: c.name)
def test_paper_kernel_scheduled_on_cpu(case, fusion):
    inputs = case.inputs(np.random.default_rng(0))
    function = tcir.define(case.source, f"{case.name}.tc")[case.entry]
    outputs = function(*inputs, options=tcir.MappingOptions(fusion=fusion))
    assert_matches(outputs, case.reference(*as_float64(inputs)))
