"""Every paper kernel through the CUDA backend with memory promotion on.

Without a GPU: the generated CUDA compiles with nvcc for sm_90, and promoted
buffers appear where the heuristic puts them. With one: results match numpy
in float64, outputs poisoned before each run (a missed copy shows as NaN).
"""

import numpy as np
import pytest
from cases import PAPER_KERNELS, Case, as_float64, assert_matches, f32, index_tensor
from cuda_checks import assert_nvcc_compiles, needs_gpu, needs_nvcc

import tcir

PROMOTED = {
    "default": tcir.MappingOptions(),
    "tiled": tcir.MappingOptions(tile=[16, 16, 8], threads=[16, 4]),
    "tmm-like": tcir.MappingOptions(tile=[32, 32, 32], threads=[32, 8]),
    "shared-only": tcir.MappingOptions(tile=[16, 16, 8], use_private_memory=False),
    "private-only": tcir.MappingOptions(tile=[16, 16, 8], use_shared_memory=False),
    "small-budget": tcir.MappingOptions(tile=[16, 16, 8], max_shared_memory=1024),
    "double-buffered": tcir.MappingOptions(
        tile=[32, 32, 32], threads=[16, 8], num_stages=3, vector_width=4, max_private_elements=16
    ),
    # 72 KiB of tiles where tmm's are full: dynamic shared memory.
    "dynamic-shared": tcir.MappingOptions(
        tile=[128, 128, 32], threads=[16, 16], num_stages=3, vector_width=4, max_private_elements=64,
        max_shared_memory=98304,
    ),
}

TMM = next(c for c in PAPER_KERNELS if c.name == "tmm")
GCONV = next(c for c in PAPER_KERNELS if c.name == "gconv")
LUT2 = next(c for c in PAPER_KERNELS if c.name == "2LUT")
LARGE = [
    Case(
        "tmm-large",
        TMM.source,
        "tmm",
        lambda r: [f32(r, 128, 256), f32(r, 192, 256)],
        TMM.reference,
    ),
    Case(
        "tmm-ragged",
        TMM.source,
        "tmm",
        lambda r: [f32(r, 70, 45), f32(r, 33, 45)],
        TMM.reference,
    ),
    # Full 128x128 tiles: the dynamic-shared variant's 72 KiB of double-buffered tiles.
    Case(
        "tmm-square",
        TMM.source,
        "tmm",
        lambda r: [f32(r, 256, 256), f32(r, 256, 256)],
        TMM.reference,
    ),
    Case(
        "gconv-large",
        GCONV.source,
        "gconv",
        lambda r: [f32(r, 4, 4, 8, 14, 14), f32(r, 4, 8, 8, 3, 3), f32(r, 4, 8)],
        GCONV.reference,
    ),
    # Tiles of several blocks: the rows gathered through the index tile.
    Case(
        "2LUT-large",
        LUT2.source,
        "2LUT",
        lambda r: [
            f32(r, 1000, 64),
            index_tensor(r, 1000, 48, 20),
            f32(r, 300, 64),
            index_tensor(r, 300, 48, 13),
        ],
        LUT2.reference,
    ),
]


def cuda_source(case: Case, options: tcir.MappingOptions) -> str:
    inputs = case.inputs(np.random.default_rng(0))
    return tcir.define(case.source, f"{case.name}.tc")[case.entry].ir(
        *inputs, backend="cuda", options=options
    )


@needs_nvcc
@pytest.mark.parametrize("variant", ["default", "tmm-like"])
@pytest.mark.parametrize("case", PAPER_KERNELS + LARGE, ids=lambda c: c.name)
def test_promoted_kernel_compiles(case, variant, tmp_path):
    source = cuda_source(case, PROMOTED[variant])
    assert_nvcc_compiles(source, tmp_path / f"{case.name}.cu")


def test_tmm_promotes_the_paper_way():
    source = cuda_source(LARGE[0], PROMOTED["tmm-like"])
    assert "__shared__ float shared_A[32][33];" in source
    assert "__shared__ float shared_B[32][33];" in source
    assert "float private_C[4][1];" in source
    # the kk tile loop, the first after the accumulators (C is not loaded:
    # the init writes every point first)
    loop = source.index("for (int ", source.index("float private_C[4][1];"))
    assert source.index("shared_A[", loop) < source.index(
        "__syncthreads();", source.index("shared_B[", loop)
    )
    # the promotion's barriers around the copies are the only ones: every
    # thread accumulates its own points of C (none in the kk point loop)
    assert source.count("__syncthreads();") == 2


def test_promotion_off_leaves_global_accesses():
    options = tcir.MappingOptions(
        tile=[32, 32, 32], use_shared_memory=False, use_private_memory=False
    )
    source = cuda_source(LARGE[0], options)
    assert "__shared__" not in source and "private_" not in source


def test_lut_gathers_rows_through_the_index_tile():
    source = cuda_source(LARGE[-1], PROMOTED["tiled"])
    assert "__shared__ float shared_LUT1_I1[16][" in source  # 16 rows of the batch tile, their gathered rows
    assert "__shared__ float shared_LUT2_I2[16][" in source
    assert "shared_I1[" not in source  # the gather reads I1 itself


@needs_gpu
@pytest.mark.parametrize("variant", PROMOTED)
@pytest.mark.parametrize("case", PAPER_KERNELS + LARGE, ids=lambda c: c.name)
def test_promoted_kernel_on_gpu(case, variant, monkeypatch):
    import cupy

    monkeypatch.setattr(
        "tcir.api.uninitialized",
        lambda xp, shape, dtype: xp.full(
            shape, np.nan if np.dtype(dtype).kind == "f" else -1, dtype
        ),
    )
    inputs = case.inputs(np.random.default_rng(0))
    device = [cupy.asarray(a) if isinstance(a, np.ndarray) else a for a in inputs]
    function = tcir.define(case.source, f"{case.name}.tc")[case.entry]
    outputs = function(*device, options=PROMOTED[variant])
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    assert_matches(
        tuple(cupy.asnumpy(o) for o in outputs), case.reference(*as_float64(inputs))
    )
