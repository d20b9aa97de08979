"""Every paper kernel tiled, sunk and unrolled on the CPU backend against numpy.

The grid covers tiles of 1 (no tiling), non-divisors of the sizes (partial
tiles), tiles larger than the loops (clamped), missing sizes (untiled
members), symbolic sizes, every fusion strategy and unrolling, without a full
cross product.
"""

import numpy as np
import pytest
from cases import PAPER_KERNELS, as_float64, assert_matches

import tcir

GRID = [
    tcir.MappingOptions(fusion="max", tile=[1, 1, 1], unroll=4),
    tcir.MappingOptions(fusion="max", tile=[3, 5, 7]),
    tcir.MappingOptions(fusion="min", tile=[2, 3, 4, 5, 6], unroll=4),
    tcir.MappingOptions(fusion="max", tile=[5, 3, 2, 7], unroll=4, specialize=False),
    tcir.MappingOptions(fusion="preserve3", tile=[7, 2]),
    tcir.MappingOptions(fusion="max", tile=[64, 64, 64], unroll=4),
]


@pytest.fixture(autouse=True)
def poison_outputs(monkeypatch):
    """Outputs not meant to start at zero start as NaN (or -1 for integers)."""

    def empty(xp, shape, dtype):
        return xp.full(shape, np.nan if np.dtype(dtype).kind == "f" else -1, dtype)

    monkeypatch.setattr("tcir.api.uninitialized", empty)


@pytest.mark.parametrize("options", GRID, ids=str)
@pytest.mark.parametrize("case", PAPER_KERNELS, ids=lambda c: c.name)
def test_paper_kernel_tiled_on_cpu(case, options):
    inputs = case.inputs(np.random.default_rng(0))
    function = tcir.define(case.source, f"{case.name}.tc")[case.entry]
    outputs = function(*inputs, options=options)
    assert_matches(outputs, case.reference(*as_float64(inputs)))
