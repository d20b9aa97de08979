"""`mma.sync` (`poly-map-to-mma`) on the simulated GPU, TF32 (`allow_tf32`)
and half precision: the warp's fragments follow PTX's m16n8k8 and m16n8k16
layouts, a warp runs it whole, and contractions mapped onto it compute
numpy's numbers: exactly, with small integers (TF32 and the half types
hold them), at every layout the pass picks."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
import pytest

import tcir
from tcir.backends.cuda_sim.launch import Launch, _tf32
from tcir.compiler.defaults import default_options
from tcir.errors import KernelFault
from tcir.runtime.signature import bind

EXAMPLES = Path(__file__).parents[3] / "examples"
O = tcir.MappingOptions


def _launch(threads: int) -> Launch:
    launch = Launch("k", ["`mma`"], (1, 1, 1), (threads, 1, 1), np.random.default_rng(0))
    launch.epoch = np.zeros(threads, np.int64)
    launch.wave_blocks = 1
    return launch


def test_fragments_follow_ptx_m16n8k8_layout():
    """Each lane's registers, as the PTX ISA lays out m16n8k8 .tf32: the
    result is A B + C of the matrices they make up, per warp."""
    _check_fragments(
        k=8, dtype=np.float32,
        a=lambda A, w, g, t: [A[w, g, t], A[w, g + 8, t], A[w, g, t + 4], A[w, g + 8, t + 4]],
        b=lambda B, w, g, t: [B[w, t, g], B[w, t + 4, g]],
    )  # fmt: skip


def _check_fragments(k: int, dtype: type, a: Any, b: Any, warps: int = 2) -> None:
    """`mma_sync` on the registers that `a` and `b` pick of random 16 x `k` A
    and `k` x 8 B of `dtype` (by warp w, g = lane / 4, t = lane % 4), the
    lanes in any order, gives each lane its registers of A B + C."""
    rng = np.random.default_rng(1)
    A = rng.integers(-4, 4, (warps, 16, k)).astype(dtype)
    B = rng.integers(-4, 4, (warps, k, 8)).astype(dtype)
    C = rng.integers(-4, 4, (warps, 16, 8)).astype(np.float32)
    lane = np.arange(32 * warps)
    w, g, t = lane // 32, lane % 32 // 4, lane % 4
    c = [C[w, g, 2 * t], C[w, g, 2 * t + 1], C[w, g + 8, 2 * t], C[w, g + 8, 2 * t + 1]]
    order = np.random.default_rng(2).permutation(lane.size)
    registers = [[x[order] for x in xs] for xs in (a(A, w, g, t), b(B, w, g, t), c)]
    d = _launch(32 * warps).mma_sync(lane[order], *registers, 0)
    D = A.astype(np.float32) @ B.astype(np.float32) + C
    expected = [D[w, g, 2 * t], D[w, g, 2 * t + 1], D[w, g + 8, 2 * t], D[w, g + 8, 2 * t + 1]]
    for got, want in zip(d, expected, strict=True):
        np.testing.assert_array_equal(got, want[order])


def test_operands_are_read_as_tf32():
    """A and B keep their top 19 bits (10 of mantissa); C is not rounded."""
    x = np.float32(1 + 2**-10 + 2**-11 + 2**-20)
    assert _tf32(np.array([x, -x]))[0] == np.float32(1 + 2**-10)
    assert _tf32(np.array([-x]))[0] == -np.float32(1 + 2**-10)
    assert np.isinf(_tf32(np.array([np.inf]))[0]) and np.isnan(_tf32(np.array([np.nan]))[0])
    lane = np.arange(32)
    one = np.ones(32, np.float32)
    d = _launch(32).mma_sync(lane, [np.full(32, x)] * 4, [one, one], [np.full(32, 2**-20, np.float32)] * 4, 0)
    np.testing.assert_array_equal(d[0], np.float32(8 * (1 + 2**-10) + 2**-20))


def test_a_warp_runs_it_whole():
    with pytest.raises(KernelFault, match="divergent mma.sync .* without all the threads of its warp"):
        _launch(64).mma_sync(np.arange(40), [0.0] * 4, [0.0] * 2, [0.0] * 4, 0)
    with pytest.raises(KernelFault, match="not whole warps"):
        _launch(48).mma_sync(np.arange(48), [0.0] * 4, [0.0] * 2, [0.0] * 4, 0)


CASES = [
    # Two mmas in a row over 16 points (float4 reads), one block's tile.
    ((64, 64), (64, 64), O(tile=[32, 32, 32], threads=[4, 16], max_private_elements=64, allow_tf32=True)),
    # 40 points: one mma per 8 (float2 reads), a ragged last k tile.
    ((64, 40), (96, 40), O(tile=[32, 32, 32], threads=[4, 16], max_private_elements=64, allow_tf32=True)),
    # The TF32 default's shape: 4 x 64 threads, 128 x 128 tiles, cp.async double buffers.
    ((128, 64), (256, 64), O(tile=[128, 128, 32], threads=[4, 64], max_private_elements=64, num_stages=3,
                             async_copies=True, vector_width=4, copy_vector_width=4, max_shared_memory=90000,
                             allow_tf32=True)),
    # A warp per 32 x 64 sub-tile (4 x 8 x 8 threads).
    ((128, 64), (256, 64), O(tile=[128, 128, 32], threads=[4, 8], warps=[2, 4], max_private_elements=64,
                             num_stages=3, async_copies=True, vector_width=4, copy_vector_width=4,
                             max_shared_memory=90000, allow_tf32=True)),
    # Sub-tiles along one member only, 16 rows by 8 columns, a ragged grid.
    ((48, 32), (64, 32), O(tile=[16, 32, 16], threads=[4, 8], warps=[4], max_private_elements=64,
                           allow_tf32=True)),
    # Three buffers; split-K's slices into the private accumulators.
    ((64, 256), (96, 256), O(tile=[32, 32, 16], threads=[4, 16], max_private_elements=64, num_stages=4,
                             async_copies=True, copy_vector_width=4, split_k=2, allow_tf32=True)),
    # No shared memory: the fragments from global memory.
    ((64, 16), (64, 16), O(tile=[64, 64, 16], threads=[4, 32], max_private_elements=64, use_shared_memory=False,
                           allow_tf32=True)),
]


@pytest.mark.parametrize(("a_shape", "b_shape", "options"), CASES, ids=[str(i) for i in range(len(CASES))])
def test_tf32_contractions_compute_numpy_exactly(a_shape, b_shape, options):
    tmm = tcir.define((EXAMPLES / "tmm.tc").read_text()).tmm
    rng = np.random.default_rng(0)
    a = rng.integers(-8, 8, a_shape).astype(np.float32)
    b = rng.integers(-8, 8, b_shape).astype(np.float32)
    assert "nvgpu.mma.sync" in tmm.ir(a, b, backend="cuda-sim", options=options)
    np.testing.assert_array_equal(tmm(a, b, backend="cuda-sim", options=options), a @ b.T)


def test_tf32_matches_within_its_precision():
    """Random floats: TF32 products, within 2^-10 relative of the f32 result."""
    tmm = tcir.define((EXAMPLES / "tmm.tc").read_text()).tmm
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((64, 64), np.float32), rng.standard_normal((64, 64), np.float32)
    got = tmm(a, b, backend="cuda-sim", options=CASES[0][2])
    expected = a.astype(np.float64) @ b.T.astype(np.float64)
    assert np.abs(got - expected).max() <= 2**-10 * np.abs(a).max() * np.abs(b).max() * 64
    assert np.abs(got - expected).max() > 1e-6  # not the f32 path


def test_tf32_default_options():
    """`MappingOptions(allow_tf32=True)` alone asks for the defaults with
    TF32: two warpgroups of 4 x 8 x 4 threads a 128 x 128 x 32 tile of the
    large matmul, which the pass maps to wgmma, 4 buffers of its tiles."""
    from tcir.compiler.defaults import resolved_options

    tmm = tcir.define((EXAMPLES / "tmm.tc").read_text()).tmm
    binding = bind(tmm.definition, [np.zeros((128, 4096), np.float32), np.zeros((16384, 4096), np.float32)])
    options = resolved_options(tmm.definition, binding, O(allow_tf32=True))
    assert options.allow_tf32 and options.warpgroup_mma and options.block == [4, 8, 8]
    assert options.max_shared_memory == 4 * 2 * 128 * 32 * 4
    assert default_options(tmm.definition, binding).threads == [16, 16]
    assert resolved_options(tmm.definition, binding, O(allow_tf32=True, tile=[8])).tile == [8]
    source = tmm.ir(np.zeros((128, 4096), np.float32), np.zeros((16384, 4096), np.float32), backend="cuda",
                    options=O(allow_tf32=True))
    assert source.count("tc_wgmma_m64n128k32_tf32(") == 2 and "tc_mma_tf32(" not in source  # its definition, its call
    # Where 32 x 32 tiles fill the GPU: a warpgroup a 64 x 32 tile (m64n32k8); none where tiles are ragged.
    binding = bind(tmm.definition, [np.zeros((128, 1024), np.float32), np.zeros((1024, 1024), np.float32)])
    options = resolved_options(tmm.definition, binding, O(allow_tf32=True))
    assert options.tile == [64, 32, 32] and options.block == [4, 8, 4] and options.warpgroup_mma
    binding = bind(tmm.definition, [np.zeros((100, 1024), np.float32), np.zeros((1024, 1024), np.float32)])
    assert not resolved_options(tmm.definition, binding, O(allow_tf32=True)).warpgroup_mma


def test_wgmma_follows_ptx_m64nnk8_layout():
    """Each warpgroup's accumulators, as the PTX ISA lays out wgmma's D
    (warp w, g = lane / 4, t = lane % 4: rows 16w + g and + 8, columns
    8q + 2t and + 1), A and B read from shared memory at the descriptors'
    elements: the result is A B^T + C per warpgroup."""
    rng = np.random.default_rng(3)
    n, groups = 16, 2
    launch = _launch(128 * groups)
    A = rng.integers(-4, 4, (groups, 64, 8)).astype(np.float32)
    B = rng.integers(-4, 4, (groups, n, 8)).astype(np.float32)
    C = rng.integers(-4, 4, (groups, 64, n)).astype(np.float32)
    tiles = launch.shared((groups, 64 + n + 8, 16), "float32", "tiles")
    for k in range(groups):  # A at rows 0 .. 63, columns 8 .. 15; B from row 72, columns 0 .. 7
        tiles.data.reshape(groups, 64 + n + 8, 16)[k, :64, 8:] = A[k]
        tiles.data.reshape(groups, 64 + n + 8, 16)[k, 72:, :8] = B[k]
    tiles.initialized[:] = True
    lane = np.arange(128 * groups)
    k, l = lane // 128, lane % 128
    w, g, t = l // 32, l % 32 // 4, l % 4
    places = [(16 * w + g + 8 * h, 8 * q + 2 * t + e) for q in range(n // 8) for h in (0, 1) for e in (0, 1)]
    c = [C[k, r, col] for r, col in places]
    order = np.random.default_rng(4).permutation(lane.size)
    d = launch.warpgroup_mma(lane[order], (tiles, (k[order], 0, 8)), (tiles, (k[order], 72, 0)), [x[order] for x in c], 8, True, 0)
    D = A @ B.transpose(0, 2, 1) + C
    for got, (r, col) in zip(d, places, strict=True):
        np.testing.assert_array_equal(got, D[k, r, col][order])
    with pytest.raises(KernelFault, match="divergent wgmma .* without all the threads of its warpgroup"):
        _launch(256).warpgroup_mma(np.arange(200), (tiles, (0, 0, 8)), (tiles, (0, 72, 0)), [0.0] * 8, 8, True, 0)
    with pytest.raises(KernelFault, match="different descriptors"):
        launch.warpgroup_mma(lane, (tiles, (k, l // 64, 8)), (tiles, (k, 72, 0)), [0.0] * 8, 8, True, 0)


WGMMA_CASES = [
    # The TF32 default's shape: two warpgroups a 128 x 128 x 32 tile, 4 swizzled buffers by cp.async.
    ((128, 64), (256, 64), O(tile=[128, 128, 32], threads=[4, 8], warps=[1, 8], max_private_elements=64,
                             num_stages=5, async_copies=True, copy_vector_width=4, max_shared_memory=131072,
                             allow_tf32=True, warpgroup_mma=True)),
    # The default's shape where 32 x 32 tiles fill the GPU: a warpgroup a 64 x 32 tile, 4 buffers.
    ((128, 64), (96, 64), O(tile=[64, 32, 32], threads=[4, 8], warps=[1, 4], max_private_elements=64,
                            num_stages=5, async_copies=True, copy_vector_width=4, allow_tf32=True,
                            warpgroup_mma=True)),
    # One warpgroup a 64 x 24 tile (m64n24k8), synchronous scalar copies, a batch of two.
    ((2, 64, 32), (2, 48, 32), O(tile=[1, 64, 24, 32], threads=[4, 8], warps=[1, 4], allow_tf32=True,
                                 warpgroup_mma=True)),
]


@pytest.mark.parametrize(("a_shape", "b_shape", "options"), WGMMA_CASES, ids=["default", "narrow", "batched"])
def test_wgmma_contractions_compute_numpy_exactly(a_shape, b_shape, options):
    name = "tbmm" if len(a_shape) == 3 else "tmm"
    function = tcir.define((EXAMPLES / f"{name}.tc").read_text())[name]
    rng = np.random.default_rng(0)
    a = rng.integers(-8, 8, a_shape).astype(np.float32)
    b = rng.integers(-8, 8, b_shape).astype(np.float32)
    assert "nvgpu.warpgroup.mma" in function.ir(a, b, backend="cuda-sim", options=options)
    np.testing.assert_array_equal(function(a, b, backend="cuda-sim", options=options), a @ b.swapaxes(-1, -2))

# Half precision: m16n8k16 on float16 and bfloat16 operands, f32 accumulators,
# without `allow_tf32`, exactly on small integers, within the type's rounding
# on random values, by default where the shapes are whole mma tiles.

TMM = """def tmm({t}(M,K) A, {t}(N,K) B) -> (C) {{
  C(m,n) +=! A(m,kk) * B(n,kk)
}}"""
TYPES = {"float16": np.float16, "bfloat16": ml_dtypes.bfloat16}


def test_fragments_follow_ptx_m16n8k16_layout():
    """Each lane's registers, as the PTX ISA lays out m16n8k16 .f16: a0..a7
    at rows g, g, g+8, g+8 (then again) and columns 2t, 2t+1 (then + 8);
    b0..b3 at rows 2t, 2t+1, 2t+8, 2t+9 of column g."""
    _check_fragments(
        k=16, dtype=np.float16,
        a=lambda A, w, g, t: [A[w, g + 8 * r, 2 * t + 8 * h + q] for h in (0, 1) for r in (0, 1) for q in (0, 1)],
        b=lambda B, w, g, t: [B[w, 2 * t + 8 * h + q, g] for h in (0, 1) for q in (0, 1)],
    )  # fmt: skip


HALF_CASES = [
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
@pytest.mark.parametrize(("a_shape", "b_shape", "options"), HALF_CASES, ids=[str(i) for i in range(len(HALF_CASES))])
def test_half_contractions_compute_numpy_exactly(dtype, a_shape, b_shape, options):
    tmm = tcir.define(TMM.format(t=dtype)).tmm
    rng = np.random.default_rng(0)
    a = rng.integers(-4, 4, a_shape).astype(TYPES[dtype])
    b = rng.integers(-4, 4, b_shape).astype(TYPES[dtype])
    ir = tmm.ir(a, b, backend="cuda-sim", options=options)
    assert "nvgpu.mma.sync" in ir and "mmaShape = [16 : i64, 8 : i64, 16 : i64]" in ir
    expected = a.astype(np.float64) @ b.astype(np.float64).T
    np.testing.assert_array_equal(tmm(a, b, backend="cuda-sim", options=options).astype(np.float64), expected)


TBMM = """def tbmm({t}(B,M,K) X, {t}(B,N,K) Y) -> (Z) {{
  Z(b,m,n) +=! X(b,m,kk) * Y(b,n,kk)
}}"""

HALF_WGMMA_CASES = [
    # A batch of two, one warpgroup a 64 x 24 tile (m64n24k16, four a k tile), synchronous copies.
    ((2, 64, 128), (2, 48, 128), O(tile=[1, 64, 24, 64], threads=[4, 8], warps=[1, 4], warpgroup_mma=True)),
    # 96 points, the last k tile half full: one m64n32k16 a leader; two row tiles, 4 buffers by cp.async.
    ((128, 96), (64, 96), O(tile=[64, 32, 64], threads=[4, 8], warps=[1, 4], num_stages=5, async_copies=True,
                            copy_vector_width=8, warpgroup_mma=True)),
]


@pytest.mark.parametrize("dtype", TYPES)
@pytest.mark.parametrize(("a_shape", "b_shape", "options"), HALF_WGMMA_CASES, ids=["batched", "ragged"])
def test_half_wgmma_contractions_compute_numpy_exactly(dtype, a_shape, b_shape, options):
    function = tcir.define((TBMM if len(a_shape) == 3 else TMM).format(t=dtype))
    function = function["tbmm" if len(a_shape) == 3 else "tmm"]
    rng = np.random.default_rng(0)
    a = rng.integers(-4, 4, a_shape).astype(TYPES[dtype])
    b = rng.integers(-4, 4, b_shape).astype(TYPES[dtype])
    assert "nvgpu.warpgroup.mma" in function.ir(a, b, backend="cuda-sim", options=options)
    expected = (a.astype(np.float64) @ b.astype(np.float64).swapaxes(-1, -2)).astype(TYPES[dtype])
    np.testing.assert_array_equal(function(a, b, backend="cuda-sim", options=options), expected)


HALF_DEFAULTS = [
    # 128 x 256 x 64 tiles on wgmma, 4 buffers; 64 x 16 x 64 on wgmma; mma.sync where k tiles of 64 are ragged.
    ((4096, 4096, 4096), "nvgpu.warpgroup.mma", (128, 192), (256, 192)),
    ((128, 1024, 1024), "nvgpu.warpgroup.mma", (128, 192), (64, 192)),
    ((4096, 4096, 1008), "nvgpu.mma.sync", (64, 96), (128, 96)),
]


@pytest.mark.parametrize("dtype", TYPES)
@pytest.mark.parametrize(("large", "op", "a_shape", "b_shape"), HALF_DEFAULTS, ids=["128x256", "64x16", "mma.sync"])
def test_half_defaults_run_on_the_tensor_cores(dtype, large, op, a_shape, b_shape):
    """The defaults of half contractions are sm_90's wgmma where the
    reduction is whole 64-point tiles, else m16n8k16 mma.sync; on random
    values at a small size, sums in f32 rounded once, as the CPU reference,
    within one rounding of the type."""
    tmm = tcir.define(TMM.format(t=dtype)).tmm
    m, n, k = large
    zeros = np.zeros((m, k), TYPES[dtype]), np.zeros((n, k), TYPES[dtype])
    options = default_options(tmm.definition, bind(tmm.definition, zeros))
    assert options.threads == [4, 8] and options.warps and not options.allow_tf32
    assert options.warpgroup_mma == (op == "nvgpu.warpgroup.mma")
    rng = np.random.default_rng(0)
    a = rng.standard_normal(a_shape).astype(TYPES[dtype])
    b = rng.standard_normal(b_shape).astype(TYPES[dtype])
    assert op in tmm.ir(a, b, backend="cuda-sim", options=options)
    got = tmm(a, b, backend="cuda-sim", options=options).astype(np.float64)
    reference = tmm(a, b, backend="cpu").astype(np.float64)
    eps = float(ml_dtypes.finfo(TYPES[dtype]).eps)
    assert np.abs(got - reference).max() <= eps * np.abs(reference).max()


def test_mixed_precision_layer_runs_on_the_tensor_cores():
    """MLP1 on float16 inputs writes float32 (its `fmaxf`): a contraction of
    half operands into f32 without rounding, on the mma like a half one."""
    source = (EXAMPLES / "MLP1.tc").read_text().replace("float(", "float16(")
    mlp = tcir.define(source).MLP1
    assert mlp.definition.outputs[0].dtype == "float32"
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal(s).astype(np.float16) for s in ((32, 64), (64, 64), (64,))]
    options = O(tile=[32, 64, 64], threads=[4, 8], warps=[1, 2], num_stages=3, async_copies=True,
                vector_width=8, copy_vector_width=8)
    assert "nvgpu.mma.sync" in mlp.ir(*inputs, backend="cuda-sim", options=options)
    got = mlp(*inputs, backend="cuda-sim", options=options)
    np.testing.assert_allclose(got, mlp(*inputs, backend="cpu"), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(("batch", "op"), [(128, "nvgpu.warpgroup.mma"), (96, "nvgpu.mma.sync")])
def test_half_mlp_default_splits_k_on_the_tensor_cores(batch, op):
    """A float16 MLP1 of 128 (or 96) x 128 outputs (too few tiles for the
    GPU) sums its 2000 products in slices on 64 x 16 wgmma tiles (on
    32 x 32 m16n8k16 mma.sync tiles where the rows are no multiple of 64),
    added atomically into the f32 accumulators; on random values (a ragged
    last k tile), within one rounding of float16 of the CPU reference."""
    mlp = tcir.define((EXAMPLES / "MLP1.tc").read_text()).MLP1.astype("float16")
    zeros = [np.zeros(s, np.float16) for s in ((batch, 2000), (128, 2000), (128,))]
    options = default_options(mlp.definition, bind(mlp.definition, zeros))
    assert options.split_k > 1 and options.threads == [4, 8]
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal(s).astype(np.float16) for s in ((batch // 2, 288), (32, 288), (32,))]
    ir = mlp.ir(*inputs, backend="cuda-sim", options=options)
    assert op in ir and "atomic_rmw" in ir
    got = mlp(*inputs, backend="cuda-sim", options=options).astype(np.float64)
    reference = mlp(*inputs, backend="cpu").astype(np.float64)
    assert np.abs(got - reference).max() <= float(np.finfo(np.float16).eps) * np.abs(reference).max()


def test_tf32_wgmma_takes_k_major_operands_only():
    """`C(m,n) +=! A(m,kk) * B(kk,n)` in f32: B's shared tile has rows along
    kk (the reduction), not along n, and wgmma reads TF32 K-major only: it
    is not used though the tile's shape would fit, and the numbers stay
    exact."""
    matmul = tcir.define((EXAMPLES / "zoo" / "matmul.tc").read_text()).matmul_nn
    rng = np.random.default_rng(0)
    a = rng.integers(-4, 4, (128, 64)).astype(np.float32)
    b = rng.integers(-4, 4, (64, 64)).astype(np.float32)
    options = O(tile=[64, 32, 32], threads=[4, 8], warps=[1, 4], num_stages=5, async_copies=True,
                allow_tf32=True, warpgroup_mma=True)
    assert "nvgpu.warpgroup.mma" not in matmul.ir(a, b, backend="cuda-sim", options=options)
    np.testing.assert_array_equal(matmul(a, b, backend="cuda-sim", options=options), a.astype(np.float64) @ b)


MN_MAJOR = O(tile=[128, 64, 64], threads=[4, 8], warps=[1, 8], num_stages=4, async_copies=True, copy_vector_width=8,
             warpgroup_mma=True, use_private_memory=True, max_private_elements=64, max_shared_memory=98304)
BIAS_RELU = """def linear_nn({t}(M,K) A, {t}(K,N) B, {t}(N) bias) -> (C, D) {{
  C(m,n) +=! A(m,kk) * B(kk,n)
  D(m,n) = fmaxf(C(m,n) + bias(n), 0)
}}"""


@pytest.mark.parametrize("dtype", TYPES)
@pytest.mark.parametrize(("layout", "transposes"), [("nn", "B"), ("tn", "AB"), ("tt", "A")])
def test_half_wgmma_reads_mn_major_operands(dtype, layout, transposes):
    """Half operands whose shared tiles are MN-major (k along their rows: A
    of `A(kk,m)`, B of `B(kk,n)`) run on wgmma with transposeA/transposeB,
    their tiles in 128-byte column blocks (`memref<64x128xf16,
    #nvgpu.swizzle<128>>`); where B is, the output's columns are written
    where wgmma put them (its columns in order, not the mapping's). Exact
    numbers on the simulated GPU."""
    matmul = tcir.define((EXAMPLES / "zoo" / "matmul.tc").read_text())[f"matmul_{layout}"].astype(dtype)
    rng = np.random.default_rng(1)
    a = rng.integers(-4, 4, (256, 128) if layout[0] == "n" else (128, 256)).astype(TYPES[dtype])
    b = rng.integers(-4, 4, (128, 128) if layout[1] == "n" else (128, 128)).astype(TYPES[dtype])
    ir = matmul.ir(a, b, backend="cuda-sim", options=MN_MAJOR)
    (mma,) = [line for line in ir.splitlines() if "\"nvgpu.warpgroup.mma\"(" in line]
    assert ("transposeA" in mma) == ("A" in transposes) and ("transposeB" in mma) == ("B" in transposes)
    left = a.astype(np.float64) if layout[0] == "n" else a.astype(np.float64).T
    right = b.astype(np.float64) if layout[1] == "n" else b.astype(np.float64).T
    np.testing.assert_array_equal(matmul(a, b, backend="cuda-sim", options=MN_MAJOR), (left @ right).astype(TYPES[dtype]))


def test_batched_mn_major_b_runs_on():
    """A batched `Z(b,m,n) +=! X(b,m,k) * Y(b,k,n)` in float16 (attention's
    `P V`): each batch's B tile MN-major, its wgmma left running into the
    next k step (4 buffers); exact on the simulated GPU."""
    batched = tcir.define((EXAMPLES / "zoo" / "batch_matmul.tc").read_text()).batch_matmul.astype("float16")
    rng = np.random.default_rng(3)
    x, y = (rng.integers(-4, 4, shape).astype(np.float16) for shape in ((2, 128, 256), (2, 256, 128)))
    options = O(tile=[1, 64, 64, 64], threads=[4, 8], warps=[1, 4], num_stages=5, async_copies=True, copy_vector_width=8,
                warpgroup_mma=True, use_private_memory=True, max_private_elements=64, max_shared_memory=98304)
    ir = batched.ir(x, y, backend="cuda-sim", options=options)
    assert "transposeB" in ir and "waitGroup = 1" in ir and '"nvgpu.warpgroup.mma.wait"' in ir
    np.testing.assert_array_equal(batched(x, y, backend="cuda-sim", options=options), (x.astype(np.float64) @ y).astype(np.float16))


ROW_SUMS = """def matmul_rowsum(float16(M,K) A, float16(K,N) B, float(M,N) X) -> (C, R, S) {
  C(m,n) +=! A(m,kk) * B(kk,n)
  R(m) +=! C(m,n)
  S(m) +=! X(m,n)
}"""


def test_mn_major_b_leaves_other_tiles_alone():
    """A def whose output's tile is not the only private one (row sums of
    the output and of another tensor, rounded once as half where it is
    half) under options that put MN-major B tiles on wgmma: exact,
    whatever mapping the statements take."""
    function = tcir.define(ROW_SUMS).matmul_rowsum
    rng = np.random.default_rng(4)
    a, b = (rng.integers(-4, 4, shape).astype(np.float16) for shape in ((64, 64), (64, 64)))
    x = rng.integers(-4, 4, (64, 64)).astype(np.float32)
    c, r, s = function(a, b, x, backend="cuda-sim", options=MN_MAJOR)
    product = a.astype(np.float64) @ b
    np.testing.assert_array_equal(c, product.astype(np.float16))
    np.testing.assert_array_equal(r, c.astype(np.float32).sum(axis=1).astype(np.float16))
    np.testing.assert_array_equal(s, x.sum(axis=1))


def test_mn_major_b_relists_an_epilogue():
    """A bias indexed by the column in the statement after an MN-major B's
    wgmma is read where that statement's registers hold the column (the
    output's columns relisted alike); without private accumulators (no
    register tile to relist), mma.sync instead. Exact both ways."""
    linear = tcir.define(BIAS_RELU.format(t="float16")).linear_nn
    rng = np.random.default_rng(2)
    a, b = (rng.integers(-4, 4, shape).astype(np.float16) for shape in ((128, 64), (64, 128)))
    bias = rng.integers(-8, 8, 128).astype(np.float16)
    product = a.astype(np.float64) @ b
    for options, op in ((MN_MAJOR, "nvgpu.warpgroup.mma"), (replace(MN_MAJOR, use_private_memory=False), "nvgpu.mma.sync")):
        assert op in linear.ir(a, b, bias, backend="cuda-sim", options=options)
        c, d = linear(a, b, bias, backend="cuda-sim", options=options)
        np.testing.assert_array_equal(c, product.astype(np.float16))
        np.testing.assert_array_equal(d, np.maximum(product + bias, 0).astype(np.float16))
