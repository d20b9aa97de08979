"""`fusion="outer"` on the simulated GPU: MLP3's three layers in one kernel
whose blocks own slices of the batch, each layer on the block's threads
between barriers, against numpy at ragged sizes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tcir
from tcir.runtime.inputs import random_inputs
from tcir.runtime.numpy_reference import reference_outputs
from tcir.runtime.signature import bind

MLP3 = tcir.define((Path(__file__).parents[3] / "examples" / "MLP3.tc").read_text()).MLP3
SHAPES = [(7, 13), (11, 13), (11,), (9, 11), (9,), (5, 9), (5,)]


@pytest.mark.parametrize(
    "options",
    [
        tcir.MappingOptions(fusion="outer", tile=[4, 64], threads=[4, 64]),
        tcir.MappingOptions(fusion="outer", tile=[2, 4], threads=[4, 2]),
        tcir.MappingOptions(fusion="outer", tile=[3, 5, 2], threads=[3, 3], unroll=4),
        tcir.MappingOptions(fusion="outer", tile=[4, 8], threads=[4, 8], use_shared_memory=False),
    ],
    ids=["4x64", "threads-swapped", "ragged-unrolled", "no-shared"],
)
def test_layer_chain_in_one_kernel(options: tcir.MappingOptions):
    binding = bind(MLP3.definition, [np.zeros(s, np.float32) for s in SHAPES])
    inputs = random_inputs(MLP3.definition, binding.sizes, 0)
    assert MLP3.ir(*inputs, backend="cuda", options=options).count("__global__") == 1
    got = MLP3(*inputs, backend="cuda-sim", options=options)
    expected = reference_outputs(MLP3.definition, bind(MLP3.definition, inputs))
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-4)
