"""Half-precision `mma.sync` (m16n8k16, f32 accumulators) on the simulated
GPU: the warp's fragments follow PTX's layout of m16n8k16 .f16/.bf16, and
float16 and bfloat16 contractions run on it without `allow_tf32`,
exactly on small integers, within the type's rounding on random values,
by default where the shapes are whole mma tiles."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import tcir
from tcir.backends.cuda_sim.launch import Launch
from tcir.compiler.defaults import default_options
from tcir.runtime.signature import bind

O = tcir.MappingOptions
TMM = """def tmm({t}(M,K) A, {t}(N,K) B) -> (C) {{
  C(m,n) +=! A(m,kk) * B(n,kk)
}}"""
TYPES = {"float16": np.float16, "bfloat16": ml_dtypes.bfloat16}


def _launch(threads: int) -> Launch:
    launch = Launch("k", ["`mma`"], (1, 1, 1), (threads, 1, 1), np.random.default_rng(0))
    launch.epoch = np.zeros(threads, np.int64)
    launch.wave_blocks = 1
    return launch


def test_fragments_follow_ptx_m16n8k16_layout():
    """Each lane's registers, as the PTX ISA lays out m16n8k16 .f16: a0..a7
    at rows g, g, g+8, g+8 (then again) and columns 2t, 2t+1 (then + 8);
    b0..b3 at rows 2t, 2t+1, 2t+8, 2t+9 of column g."""
    rng = np.random.default_rng(1)
    warps = 2
    A = rng.integers(-4, 4, (warps, 16, 16)).astype(np.float16)
    B = rng.integers(-4, 4, (warps, 16, 8)).astype(np.float16)
    C = rng.integers(-4, 4, (warps, 16, 8)).astype(np.float32)
    lane = np.arange(32 * warps)
    w, g, t = lane // 32, lane % 32 // 4, lane % 4
    a = [A[w, g + 8 * r, 2 * t + 8 * h + q] for h in (0, 1) for r in (0, 1) for q in (0, 1)]
    b = [B[w, 2 * t + 8 * h + q, g] for h in (0, 1) for q in (0, 1)]
    c = [C[w, g, 2 * t], C[w, g, 2 * t + 1], C[w, g + 8, 2 * t], C[w, g + 8, 2 * t + 1]]
    order = np.random.default_rng(2).permutation(lane.size)
    d = _launch(32 * warps).mma_sync(lane[order], [x[order] for x in a], [x[order] for x in b], [x[order] for x in c], 0)
    D = A.astype(np.float32) @ B.astype(np.float32) + C
    expected = [D[w, g, 2 * t], D[w, g, 2 * t + 1], D[w, g + 8, 2 * t], D[w, g + 8, 2 * t + 1]]
    for got, want in zip(d, expected, strict=True):
        np.testing.assert_array_equal(got, want[order])


CASES = [
    # Two mmas in a row over 32 points (8 halves a thread), one block's tile.
    ((64, 64), (64, 64), O(tile=[32, 32, 32], threads=[4, 16], max_private_elements=64)),
    # A warp per 64 x 32 sub-tile of 64 x 64 tiles on a 2 x 3 grid (private
    # accumulators indexed alike in every block), cp.async copies of 4 halves.
    ((128, 64), (192, 64), O(tile=[64, 64, 32], threads=[4, 8], warps=[1, 2], max_private_elements=64,
                             num_stages=3, async_copies=True, vector_width=4, copy_vector_width=4)),
    # 48 points: one mma per 16 (4 halves a thread).
    ((32, 48), (32, 48), O(tile=[32, 32, 16], threads=[4, 8], max_private_elements=32)),
]


@pytest.mark.parametrize("dtype", TYPES)
@pytest.mark.parametrize(("a_shape", "b_shape", "options"), CASES, ids=[str(i) for i in range(len(CASES))])
def test_half_contractions_compute_numpy_exactly(dtype, a_shape, b_shape, options):
    tmm = tcir.define(TMM.format(t=dtype)).tmm
    rng = np.random.default_rng(0)
    a = rng.integers(-4, 4, a_shape).astype(TYPES[dtype])
    b = rng.integers(-4, 4, b_shape).astype(TYPES[dtype])
    ir = tmm.ir(a, b, backend="cuda-sim", options=options)
    assert "nvgpu.mma.sync" in ir and "mmaShape = [16 : i64, 8 : i64, 16 : i64]" in ir
    expected = a.astype(np.float64) @ b.astype(np.float64).T
    np.testing.assert_array_equal(tmm(a, b, backend="cuda-sim", options=options).astype(np.float64), expected)


@pytest.mark.parametrize("dtype", TYPES)
@pytest.mark.parametrize("large", [(4096, 4096, 4096), (128, 1024, 1024)], ids=["128x128", "32x64"])
def test_half_defaults_run_on_the_tensor_cores(dtype, large):
    """The defaults of half contractions that fill the GPU with 128 x 128
    or 32 x 64 tiles are mma-shaped; on random values at a small size (a
    ragged last k tile too), sums in f32 rounded once, as the CPU
    reference, within one rounding of the type."""
    tmm = tcir.define(TMM.format(t=dtype)).tmm
    m, n, k = large
    zeros = np.zeros((m, k), TYPES[dtype]), np.zeros((n, k), TYPES[dtype])
    options = default_options(tmm.definition, bind(tmm.definition, zeros))
    assert options.threads == [4, 8] and options.warps and not options.allow_tf32
    rng = np.random.default_rng(0)
    a = rng.standard_normal((64, 96)).astype(TYPES[dtype])
    b = rng.standard_normal((128, 96)).astype(TYPES[dtype])
    assert "nvgpu.mma.sync" in tmm.ir(a, b, backend="cuda-sim", options=options)
    got = tmm(a, b, backend="cuda-sim", options=options).astype(np.float64)
    reference = tmm(a, b, backend="cpu").astype(np.float64)
    eps = float(ml_dtypes.finfo(TYPES[dtype]).eps)
    assert np.abs(got - reference).max() <= eps * np.abs(reference).max()


def test_mixed_precision_layer_runs_on_the_tensor_cores():
    """MLP1 on float16 inputs writes float32 (its `fmaxf`): a contraction of
    half operands into f32 without rounding, on the mma like a half one."""
    from pathlib import Path

    source = (Path(__file__).parents[3] / "examples" / "MLP1.tc").read_text().replace("float(", "float16(")
    mlp = tcir.define(source).MLP1
    assert mlp.definition.outputs[0].dtype == "float32"
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal(s).astype(np.float16) for s in ((32, 64), (64, 64), (64,))]
    options = O(tile=[32, 64, 64], threads=[4, 8], warps=[1, 2], num_stages=3, async_copies=True,
                vector_width=8, copy_vector_width=8)
    assert "nvgpu.mma.sync" in mlp.ir(*inputs, backend="cuda-sim", options=options)
    got = mlp(*inputs, backend="cuda-sim", options=options)
    np.testing.assert_allclose(got, mlp(*inputs, backend="cpu"), rtol=1e-5, atol=1e-5)
