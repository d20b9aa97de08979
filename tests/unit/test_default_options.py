"""The default mapping's cost model (`tcir.compiler.defaults`): which rule
each kind of def gets at which shape, and that each rule's mapping computes
the right numbers on the simulated GPU (at small ragged shapes, where its
tiles are partial)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import tcir
from tcir.compiler.convolutions import convolution_image
from tcir.compiler.defaults import default_options
from tcir.frontend import ast as A
from tcir.frontend.reduction_order import taps_last
from tcir.frontend.subscripts import walk
from tcir.runtime.inputs import random_inputs
from tcir.runtime.numpy_reference import reference_outputs
from tcir.runtime.signature import NUMPY_DTYPES, Binding, bind

EXAMPLES = Path(__file__).parents[2] / "examples"


def function(name: str) -> tcir.api.Function:
    return tcir.define((EXAMPLES / f"{name}.tc").read_text())[name]


def zeros(fn: tcir.api.Function, shapes: tuple[tuple[int, ...], ...]) -> list[np.ndarray]:
    """Arrays of these shapes with the def's input dtypes."""
    return [np.zeros(s, NUMPY_DTYPES[p.dtype]) for s, p in zip(shapes, fn.definition.inputs)]


def options_at(name: str, *shapes: tuple[int, ...]) -> tcir.MappingOptions:
    fn = function(name)
    return default_options(fn.definition, bind(fn.definition, zeros(fn, shapes)))


RULES = {
    # Enough 128x128 output tiles for every SM: 8x8 register micro-tiles,
    # float4 reads and float4 copies (8 groups a row, 32 rows a pass of 256
    # threads: 4 passes over the 128 rows) by cp.async into double-buffered
    # tiles (72 KiB of shared memory).
    "large-matmul": (
        ("tmm", (128, 4096), (16384, 4096)),
        tcir.MappingOptions(
            tile=[128, 128, 32], threads=[16, 16], max_private_elements=64, max_shared_memory=73728,
            num_stages=3, async_copies=True, vector_width=4, copy_vector_width=4,
        ),
    ),
    # Enough 32x32 tiles: 4x2 accumulators a thread, float4 reads and copies,
    # double-buffered shared tiles.
    "matmul": (
        ("tmm", (128, 1024), (1024, 1024)),
        tcir.MappingOptions(
            tile=[32, 32, 32], threads=[16, 8], max_private_elements=16, num_stages=3, vector_width=4,
            copy_vector_width=4,
        ),
    ),
    # A small output with a long reduction (MLP1's 128x128): split-K, blocks
    # over 32x32 output tiles and 16 slices of 2000 points (one per 128),
    # float4 reads of k tiles of 16, copied by cp.async into double buffers.
    "split-k": (
        ("MLP1", (128, 2000), (128, 2000), (128,)),
        tcir.MappingOptions(
            tile=[32, 32, 16], threads=[16, 8], max_private_elements=16, num_stages=3, async_copies=True,
            vector_width=4, copy_vector_width=4, split_k=16,
        ),
    ),
    # 64 columns whose 128x64 tiles would not fill the GPU twice: 64x64
    # tiles, 8x4 accumulators a thread.
    "skinny-matmul": (
        ("tmm", (16384, 1024), (64, 1024)),
        tcir.MappingOptions(
            tile=[64, 64, 32], threads=[16, 8], num_stages=3, async_copies=True, vector_width=4,
            copy_vector_width=4,
        ),
    ),
    # A reduction that k tiles of 32 do not divide (C3's 1000 points) but
    # whose rows are whole float4 groups: the matmul's tiles, the last k
    # tile's float4 copies guarded, by cp.async into double buffers.
    "other-k": (
        ("C3", (128, 1000), (1024, 1000)),
        tcir.MappingOptions(
            tile=[32, 32, 32], threads=[16, 8], max_private_elements=16, num_stages=3, async_copies=True,
            vector_width=4, copy_vector_width=4,
        ),
    ),
    # Rows of 1001 points, not whole float4 groups: the same register tiles,
    # the copies scalar (4-byte cp.async) where a row's groups are not whole
    # (the defaults guide, "k rows that are no whole float4 groups").
    "ragged-k": (
        ("C3", (128, 1001), (1024, 1001)),
        tcir.MappingOptions(
            tile=[32, 32, 32], threads=[16, 8], max_private_elements=16, num_stages=3, async_copies=True,
            vector_width=4, copy_vector_width=4,
        ),
    ),
    # A small output with a shorter reduction: more, smaller blocks.
    "small-output": (
        ("MLP1", (128, 1000), (128, 1000), (128,)),
        tcir.MappingOptions(tile=[8, 32, 32], threads=[32, 8], num_stages=2),
    ),
    # A short reduction: the 26x26 plane in one block, two rows a thread; the
    # reduction (72, a multiple of 4) read as float4.
    "batched": (
        ("tbmm", (500, 26, 72), (500, 26, 72)),
        tcir.MappingOptions(tile=[1, 26, 26], threads=[26, 13], vector_width=4),
    ),
    # gconv on a 12 x 12 plane (too small for squares of pixels): segments of
    # 6 pixels of a row a thread, 4 filters each, 16 filters a block.
    "conv": (
        ("gconv", (32, 32, 16, 14, 14), (32, 16, 16, 3, 3), (32, 16)),
        tcir.MappingOptions(tile=[1, 1, 16, 12, 12, 8, 3, 3], threads=[2, 12, 4]),
    ),
    # A wide plane: 32 columns and 2x8 rows a block.
    "wide-conv": (
        ("gconv", (32, 32, 4, 56, 56), (32, 4, 4, 3, 3), (32, 4)),
        tcir.MappingOptions(tile=[1, 1, 4, 16, 32], threads=[32, 8]),
    ),
    # A sum whose 64 outputs cannot fill the GPU: its reduction spread over
    # blocks of 256 threads, 8192 points a block (64 x 8 blocks), atomic adds.
    "small-sum": (
        ("mv", (64, 65536), (65536,)),
        tcir.MappingOptions(parallel_reductions=True, tile=[1, 8192], threads=[256]),
    ),
    # An embedding (gathers through an index tensor): a row of 64 a block.
    "embedding": (("1LUT", (1000, 64), (128, 50)), tcir.MappingOptions(tile=[1, 64], threads=[64])),
    # Two embeddings: a row of each output a block, as wide as the wider.
    "embeddings": (
        ("2LUT", (1000, 16), (128, 50), (900, 16), (128, 20)),
        tcir.MappingOptions(tile=[1, 16], threads=[16]),
    ),
    # A 5 x 5 plane: a thread a row of it, for 8 filters (5 segments only).
    "odd-rows": (
        ("gconv", (32, 32, 32, 7, 7), (32, 32, 32, 3, 3), (32, 32)),
        tcir.MappingOptions(tile=[1, 1, 32, 5, 5, 8, 3, 3], threads=[1, 5, 4], max_private_elements=40),
    ),
}


def test_long_gathered_sums_are_no_embeddings():
    """An embedding of 100000 rows is a sum too long for one thread (a parallel
    reduction), a gathered contraction gets the contraction rule."""
    assert options_at("1LUT", (1000, 64), (4, 100000)).parallel_reductions
    gemm = tcir.define("def g(float(M,K) A, float(E,N) X, int(K) I) -> (O) { O(i,j) +=! A(i,k) * X(I(k),j) }").g
    binding = bind(gemm.definition, [np.zeros((2048, 2048), np.float32), np.zeros((4096, 2048), np.float32), np.zeros(2048, np.int32)])
    assert default_options(gemm.definition, binding).tile == [128, 128, 32]


def test_split_k_only_for_2d_outputs_slices_bounded_past_max_split_k():
    """A slice of 128 points up to 16384 points; past them, as many slices as
    give 1024 blocks (MLP1's 16 tiles of 32x32: 64 slices of 512 points)."""
    assert options_at("MLP1", (128, 1024), (128, 1024), (128,)).split_k == 8
    assert options_at("MLP1", (128, 16384), (128, 16384), (128,)).split_k == 128
    assert options_at("MLP1", (128, 32768), (128, 32768), (128,)).split_k == 64
    batched = options_at("tbmm", (2, 32, 2048), (2, 32, 2048))
    assert batched.split_k == 1 and not batched.parallel_reductions


def test_small_products_of_long_sums_split_k_on_tiles_not_an_output_a_block():
    """A 64x64 product of 65536 points (a covariance of 64 features) reads
    each operand element for 64 outputs: 32x32 tiles whose sums are split
    over blocks in k tiles of 32, not a block per output summing in parallel (a matrix-vector
    product's rule, whose outputs share nothing but `x`); the simulated GPU
    checks a ragged 17x17 one of 20000 points."""
    cov = tcir.define("def cov(float(N,D) X) -> (C) { C(i,j) +=! X(n,i) * X(n,j) }").cov
    options = default_options(cov.definition, Binding({"N": 65536, "D": 64}, ()))
    assert (options.tile, options.split_k, options.parallel_reductions) == ([32, 32, 32], 256, False)
    assert options_at("mv", (64, 65536), (65536,)).parallel_reductions
    x = random_inputs(cov.definition, {"N": 20000, "D": 17}, 0)[0]
    assert default_options(cov.definition, bind(cov.definition, [x])).split_k == 157
    np.testing.assert_allclose(cov(x, backend="cuda-sim"), x.T.astype(np.float64) @ x, rtol=1e-4, atol=1e-2)


@pytest.mark.parametrize("rule", RULES)
def test_rule(rule: str):
    (name, *shapes), expected = RULES[rule]
    assert options_at(name, *shapes) == expected


def test_no_reuse_no_tile_outside_the_plane():
    """tbmm's batch index is read by both operands: one batch a block."""
    assert options_at("tbmm", (500, 26, 72), (500, 26, 72)).tile[0] == 1


@pytest.mark.parametrize("shape", [(0, 5), (5, 0), (0, 0)])
def test_empty_outputs_keep_the_plain_mapping_and_run(shape):
    add = tcir.define("def add(float(M,N) A, float(M,N) B) -> (C) { C(i,j) = A(i,j) + B(i,j) }").add
    a = np.ones(shape, np.float32)
    assert default_options(add.definition, bind(add.definition, [a, a])) == tcir.MappingOptions()
    assert add(a, a, backend="cuda-sim").shape == shape


def test_defs_of_several_outputs():
    # MLP3's layers read each other's outputs: one kernel, 4 batch rows a block.
    mlp3 = options_at("MLP3", (128, 16), (8, 16), (8,), (4, 8), (4,), (2, 4), (2,))
    assert mlp3 == tcir.MappingOptions(fusion="outer", tile=[4, 64], threads=[4, 64])
    # A layer wider than 256, or a batch of fewer than 16 blocks of 4 rows: a
    # kernel per statement (isl's schedule of wide layers takes minutes).
    per_statement = tcir.MappingOptions(fusion="min", tile=[4, 32], threads=[32, 4])
    assert options_at("MLP3", (128, 16), (512, 16), (512,), (4, 512), (4,), (2, 4), (2,)) == per_statement
    assert options_at("MLP3", (60, 16), (8, 16), (8,), (4, 8), (4,), (2, 4), (2,)) == per_statement
    # A gather into a 3-D output is no embedding: the plane rule.
    gather3 = tcir.define("def g(float(E,D) T, int(B,L) I) -> (O) { O(b,l,d) = T(I(b,l),d) }").g
    binding = bind(gather3.definition, [np.zeros((9, 4), np.float32), np.zeros((3, 5), np.int32)])
    assert default_options(gather3.definition, binding).tile == [1, 5, 4]
    # A 1-D output has no plane to tile.
    assert options_at("mv", (64, 600), (600,)) == tcir.MappingOptions()


@pytest.mark.parametrize("rule", RULES)
def test_rule_computes_right_numbers_on_cuda_sim(rule: str):
    """Each rule's options on a small ragged problem of the same def."""
    (name, *_), options = RULES[rule]
    small = {
        "tmm": [(37, 29), (45, 29)],
        "MLP1": [(11, 300), (13, 300), (13,)],  # 3 slices of 19 k tiles of 16, the last partial
        "C3": [(9, 70), (21, 70)],  # 2 or 3 k tiles, the last partial
        "tbmm": [(2, 27, 9), (2, 30, 9)],
        "gconv": [(1, 2, 3, 9, 40), (2, 3, 3, 3, 3), (2, 3)],
        "mv": [(3, 9001), (9001,)],
        "1LUT": [(23, 70), (7, 5)],
        "2LUT": [(23, 70), (7, 5), (19, 70), (7, 3)],
    }[name]
    fn = function(name)
    binding = bind(fn.definition, zeros(fn, small))
    inputs = random_inputs(fn.definition, binding.sizes, 0)
    got = fn(*inputs, backend="cuda-sim", options=options)
    expected = reference_outputs(fn.definition, bind(fn.definition, inputs))
    for g, e in zip(got if isinstance(got, tuple) else (got,), expected, strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(
    ("name", "shapes", "options"),
    [
        ("tmm", [(64, 96), (32, 96)], tcir.MappingOptions(tile=[32, 32, 32], threads=[32, 8], num_stages=2)),
        ("tmm", [(128, 48), (128, 48)],
         tcir.MappingOptions(tile=[128, 128, 16], threads=[16, 16], max_private_elements=64, num_stages=2)),
        ("MLP1", [(16, 64), (32, 64), (32,)], tcir.MappingOptions(tile=[8, 32, 32], threads=[32, 8], num_stages=2)),
        ("tbmm", [(2, 32, 64), (2, 32, 64)],
         tcir.MappingOptions(tile=[1, 32, 32, 16], threads=[32, 8], num_stages=2)),
    ],
    ids=["matmul", "large-matmul", "small-output", "batched"],
)
def test_prefetched_copies_compute_right_numbers_on_cuda_sim(name, shapes, options):
    """`num_stages=2` (the contraction rules' choice) with full tiles, where
    `gpu-prefetch-copies` applies: the simulated GPU checks the numbers and
    that no thread races on the shared tiles now filled from registers."""
    fn = function(name)
    inputs = random_inputs(fn.definition, bind(fn.definition, [np.zeros(s, np.float32) for s in shapes]).sizes, 1)
    assert "float prefetch[" in fn.ir(*inputs, backend="cuda", options=options)
    got = fn(*inputs, backend="cuda-sim", options=options)
    expected = reference_outputs(fn.definition, bind(fn.definition, inputs))
    for g, e in zip(got if isinstance(got, tuple) else (got,), expected, strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(("batch", "fusion", "kernels"), [(65, "outer", 1), (7, "min", 3)])
def test_layer_chain_default_computes_right_numbers_on_cuda_sim(batch: int, fusion: str, kernels: int):
    """MLP3 at small ragged sizes with its default: one kernel, 4 batch rows a
    block, where the batch gives 16 blocks; else a part per layer (its sum
    and its bias and ReLU in one kernel)."""
    fn = function("MLP3")
    shapes = [(batch, 13), (11, 13), (11,), (9, 11), (9,), (5, 9), (5,)]
    binding = bind(fn.definition, [np.zeros(s, np.float32) for s in shapes])
    assert default_options(fn.definition, binding).fusion == fusion
    inputs = random_inputs(fn.definition, binding.sizes, 0)
    assert fn.ir(*inputs, backend="cuda").count("__global__") == kernels
    got = fn(*inputs, backend="cuda-sim")
    for g, e in zip(got, reference_outputs(fn.definition, bind(fn.definition, inputs)), strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-4)


def test_a_sum_that_atomics_cannot_combine_stays_serial():
    """An int64 row sum has no atomic add: no parallel reductions or split-K,
    no tuner gene for them."""
    from tcir.tuner.space import SearchSpace

    fn = tcir.define("def rowsum(int64(B,K) A) -> (s) { s(b) +=! A(b,k) }").rowsum
    binding = bind(fn.definition, [np.zeros((64, 65536), np.int64)])
    assert not default_options(fn.definition, binding).parallel_reductions
    names = SearchSpace.build(fn.definition, binding.sizes, "cuda").names
    assert "parallel_reductions" not in names and "split_k" not in names
    f32 = tcir.define("def rowsum(float(B,K) A) -> (s) { s(b) +=! A(b,k) }").rowsum
    assert "parallel_reductions" in SearchSpace.build(f32.definition, {"B": 64, "K": 65536}, "cuda").names


def _example(name: str) -> tcir.api.Function:
    path = Path(__file__).parents[2] / "examples" / f"{name}.tc"
    return tcir.define(path.read_text())[name]


@pytest.mark.parametrize(
    "name, sizes, threads",
    [("softmax", {"B": 4096, "N": 1024}, 64), ("rmsnorm", {"B": 4096, "N": 4096}, 256), ("layernorm", {"B": 256, "N": 37}, 32)],
)
def test_row_wise_chains_take_a_block_per_row(name: str, sizes: dict[str, int], threads: int):
    """16 points of a row a thread (32 to 1024 threads), the reductions spread
    over the block; with fewer rows than SMs, not this rule."""
    fn = _example(name)
    options = default_options(fn.definition, Binding(sizes, ()))
    assert options.block_reductions and options.threads == [threads] and not options.tile
    few = default_options(fn.definition, Binding({**sizes, "B": 16}, ()))
    assert not few.block_reductions


@pytest.mark.parametrize(
    "name, sizes, tile, blocks",
    [
        ("layernorm", {"B": 512, "N": 37}, [4], [128]),
        ("softmax", {"B": 65536, "N": 512}, [4], [16384]),
        ("zoo/attention", {"B": 32, "H": 12, "I": 197, "J": 197}, [1, 1, 4], [50, 12, 32]),
    ],
)
def test_short_rows_take_a_warp_each(name: str, sizes: dict[str, int], tile: list[int], blocks: list[int]):
    """Rows of at most 512 points, 512 rows or more: a warp a row, four rows
    a block (thread y), a grid over every row dimension."""
    fn = _example(name) if "/" not in name else tcir.define(
        (Path(__file__).parents[2] / "examples" / f"{name}.tc").read_text()
    ).attention_softmax
    options = default_options(fn.definition, Binding(sizes, ()))
    assert options.block_reductions and options.threads == [32, 4] and options.tile == tile
    assert options.blocks == blocks


def test_short_rows_tile_the_innermost_row_dimension_that_has_four():
    """Rows over (b, h) with one or three heads: the tile of four rows goes
    along b, so that no warp of a block idles."""
    fn = tcir.define(
        "def sm(float(B,H,N) X) -> (Y) {\n  mx(b,h) max=! X(b,h,n)\n  e(b,h,n) = exp(X(b,h,n) - mx(b,h))\n"
        "  s(b,h) +=! e(b,h,n)\n  Y(b,h,n) = e(b,h,n) / s(b,h)\n}"
    ).sm
    one = default_options(fn.definition, Binding({"B": 600, "H": 1, "N": 70}, ()))
    assert one.tile == [4, 1] and one.blocks == [150] and one.threads == [32, 4]
    three = default_options(fn.definition, Binding({"B": 300, "H": 3, "N": 70}, ()))
    assert three.tile == [4, 1] and three.blocks == [3, 75]


def test_rows_of_image_planes_spread_threads_over_both_dimensions():
    """An instance norm's rows are 56x56 planes: a warp-and-more along w
    alone would leave most of 256 threads idle; 56 x 4 threads cover both."""
    fn = tcir.define(
        "def inorm(float(N,C,H,W) X) -> (Y) {\n"
        "  mean(n,c) +=! X(n,c,h,w) / (H * W)\n"
        "  Y(n,c,h,w) = X(n,c,h,w) - mean(n,c)\n}"
    ).inorm
    options = default_options(fn.definition, Binding({"N": 32, "C": 64, "H": 56, "W": 56}, ()))
    assert options.block_reductions and options.threads == [56, 4] and options.blocks == [64, 32]


def test_column_sums_split_the_reduction_over_blocks():
    options = default_options(_example("colsum").definition, Binding({"B": 8192, "N": 8192}, ()))
    assert options.threads == [256] and options.tile == [256, 512] and options.split_k == 16


def test_column_maxima_split_the_reduction_over_blocks():
    """As a column sum, the partial maxima combined by atomics (a
    compare-and-swap loop); not a 64-bit integer maximum, which has none."""
    colmax = tcir.define((EXAMPLES / "zoo" / "reduction.tc").read_text()).colmax
    options = default_options(colmax.definition, Binding({"B": 8192, "N": 8192}, ()))
    assert options == tcir.MappingOptions(tile=[256, 512], threads=[256], split_k=16)
    wide = tcir.define("def lmax(int64(B,N) X) -> (m) { m(n) max=! X(b,n) }").lmax
    assert default_options(wide.definition, Binding({"B": 8192, "N": 8192}, ())).split_k == 1
    _run_on_cuda_sim(colmax, {"B": 300, "N": 70}, tcir.MappingOptions(tile=[32, 64], threads=[32], split_k=4))


def test_a_full_sum_has_no_column_rule():
    fn = tcir.define("def total(float(N) X) -> (Y) { Y() +=! X(n) }").total
    x = np.arange(1000, dtype=np.float32)
    assert fn(x, backend="cuda-sim") == pytest.approx(x.sum())


def test_a_batched_matmul_of_short_reductions_takes_register_tiles():
    fn = tcir.define("def bmm(float(B,M,K) X, float(B,N,K) Y) -> (Z) { Z(b,m,n) +=! X(b,m,k) * Y(b,n,k) }").bmm
    options = default_options(fn.definition, Binding({"B": 64, "M": 256, "N": 256, "K": 256}, ()))
    assert options.tile == [1, 128, 128, 32] and options.max_private_elements == 64


def test_batches_of_32x32_sums_take_four_rows_a_thread():
    fn = tcir.define("def bmm(float(B,M,K) X, float(B,N,K) Y) -> (Z) { Z(b,m,n) +=! X(b,m,k) * Y(b,n,k) }").bmm
    options = default_options(fn.definition, Binding({"B": 4096, "M": 32, "N": 32, "K": 32}, ()))
    assert options.tile == [1, 32, 32] and options.threads == [32, 8]
    # 8x8 outputs keep two rows a thread: four would leave 16 threads.
    options = default_options(fn.definition, Binding({"B": 4096, "M": 8, "N": 8, "K": 8}, ()))
    assert options.threads == [8, 4]


FILTER_GRADIENT_1X1 = "def dw(float(N,F,H,W) d_O, float(N,C,H,W) I) -> (d_Wt) { d_Wt(f, c) +=! d_O(n, f, h, w) * I(n, c, h, w) }"


def test_small_sums_over_several_reduction_indices_are_sliced():
    """A 1x1 convolution's filter gradient: its 64x256 output leaves SMs
    idle, so the images are dealt to slices of blocks (one thread looped
    over all 100352 products of a point before)."""
    fn = tcir.define(FILTER_GRADIENT_1X1).dw
    options = default_options(fn.definition, Binding({"N": 32, "F": 64, "H": 56, "W": 56, "C": 256}, ()))
    assert options.tile == [32, 32, 1, 2, 56] and options.threads == [16, 8] and options.split_k == 32
    inputs = random_inputs(fn.definition, {"N": 5, "F": 36, "H": 15, "W": 17, "C": 40}, 0)
    options = default_options(fn.definition, bind(fn.definition, inputs))
    assert options.split_k == 5 and options.tile == [32, 32, 1, 7, 17]
    got = fn(*inputs, backend="cuda-sim")
    expected = reference_outputs(fn.definition, bind(fn.definition, inputs))
    np.testing.assert_allclose(got, expected[0], rtol=1e-4, atol=1e-4)


def test_sums_of_mixed_layouts_into_channels_are_spread():
    """A channel scale's gradient reads channels-last and NCHW images alike
    (`d(c) +=! dY(n, h, w, c) * X(n, c, h, w)`): not every read ends in the
    innermost reduction index, so the spread-sum rule passed it by, and its
    64 outputs took the plain mapping (a thread summing 100,352 products).
    One read that ends there is enough now."""
    fn = tcir.define("def ds(float(N,H,W,C) dY, float(N,C,H,W) X) -> (d) { d(c) +=! dY(n,h,w,c) * X(n,c,h,w) }").ds
    options = default_options(fn.definition, Binding({"N": 32, "C": 64, "H": 56, "W": 56}, ()))
    assert options == tcir.MappingOptions(tile=[1, 2, 56, 56], threads=[56, 8], parallel_reductions=True)
    _run_on_cuda_sim(fn, {"N": 3, "C": 5, "H": 24, "W": 32}, None)


def test_attention_is_mapped_in_parts():
    """The scores and the weighted values are contractions of their own; the
    softmax between them keeps a block per row (128x64 tiles for the 64
    features of the values)."""
    from tcir.compiler.defaults import default_partition
    from tcir.compiler.partition import split_def

    fn = _example("attention")
    binding = Binding({"B": 64, "L": 512, "D": 64}, ())
    groups = default_partition(fn.definition, binding)
    assert groups == [[0], [1, 2, 3], [4, 5]]
    parts = split_def(fn.definition, groups)
    assert [[p.name for p in part.outputs] for part in parts] == [["S"], ["P", "Z"], ["O"]]
    mappings = [default_options(part, binding) for part in parts]
    assert mappings[0].tile == [1, 128, 128, 32] and mappings[1].block_reductions and mappings[2].tile == [1, 128, 64, 32]
    # A block per batch entry and tile: the one column tile of 64 features is
    # no member to map (the grid's x is the row tiles; a grid of x = 1 put every
    # tile and batch entry on 4 blocks: 12x eager on an H100).
    assert [m.blocks for m in mappings] == [[4, 4, 64], [128, 64], [4, 64]]
    assert mappings[1].threads == [32, 4] and mappings[1].tile == [1, 4]  # rows of 512 scores: a warp each
    assert default_partition(_example("softmax").definition, Binding({"B": 4096, "N": 1024}, ())) is None


POOL = "def pool(float(N,C,H,W) I) -> (O) { O(n,c) +=! I(n,c,h,w) / (H * W) }"
POINTWISE = "def pw(float(N,C,H,W) I, float(F,C) Wt) -> (O) { O(n,f,h,w) +=! I(n,c,h,w) * Wt(f,c) }"


def test_short_rows_take_a_thread_per_row():
    """A global average pool's 7x7 rows: a thread a row, 128 rows a block;
    a softmax over short rows keeps a block per row (several statements)."""
    fn = tcir.define(POOL).pool
    options = default_options(fn.definition, Binding({"N": 32, "C": 2048, "H": 7, "W": 7}, ()))
    assert options == tcir.MappingOptions(tile=[1, 128], threads=[128])
    long_rows = default_options(fn.definition, Binding({"N": 32, "C": 2048, "H": 9, "W": 9}, ()))
    assert long_rows.block_reductions
    softmax = default_options(_example("softmax").definition, Binding({"B": 65536, "N": 48}, ()))
    assert softmax.block_reductions
    x = np.random.default_rng(0).standard_normal((2, 300, 3, 5)).astype(np.float32)
    np.testing.assert_allclose(fn(x, backend="cuda-sim"), x.mean(axis=(2, 3)), rtol=1e-5, atol=1e-6)


def test_convolutions_take_register_tiles():
    """64 filters x 2 rows x the row's pixels a block, 4 x 2 x 2-4 a thread
    (8 x 2 x 2 with 1x1 filters), a block per tile of the image, filters and
    rows, 8 channels (and all taps) a step, 64 with 1x1 filters; images
    narrower than 32 pixels and fewer than 16 filters keep the plane rule."""
    fn = tcir.define(POINTWISE).pw
    options = default_options(fn.definition, Binding({"N": 32, "C": 256, "H": 56, "W": 56, "F": 64}, ()))
    assert options == tcir.MappingOptions(tile=[1, 64, 2, 56, 64], blocks=[28, 32], threads=[28, 1, 8])
    narrow = default_options(fn.definition, Binding({"N": 32, "C": 512, "H": 14, "W": 14, "F": 128}, ()))
    assert narrow.tile[:4] == [1, 16, 14, 14] and len(narrow.threads) == 2
    conv = tcir.define((EXAMPLES / "zoo" / "conv.tc").read_text())
    sizes = {"N": 32, "C": 64, "H": 56, "W": 56, "F": 64, "KH": 3, "KW": 3}
    options = default_options(conv.conv2d.definition, Binding(sizes, ()))
    assert options == tcir.MappingOptions(tile=[1, 64, 2, 54, 8, 3, 3], blocks=[27, 32], threads=[18, 1, 16])
    # 7x7 taps: 2 channels a step keep the filters' tile within 6144 elements.
    assert default_options(conv.conv2d.definition, Binding({**sizes, "KH": 7, "KW": 7}, ())).tile[4:] == [1, 7, 7]
    # Ragged everywhere: 20 filters (3 threads of 8), 3 rows, 34 pixels (17 threads of 2), 9 channels.
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal((2, 9, 3, 34)).astype(np.float32), rng.standard_normal((20, 9)).astype(np.float32)
    assert default_options(fn.definition, bind(fn.definition, [x, w])).threads == [17, 1, 3]
    np.testing.assert_allclose(fn(x, w, backend="cuda-sim"), np.einsum("nchw,fc->nfhw", x, w), rtol=1e-4, atol=1e-4)
    # 70 channels: a step of 64, then a ragged one of 6.
    x, w = rng.standard_normal((1, 70, 2, 32)).astype(np.float32), rng.standard_normal((16, 70)).astype(np.float32)
    assert default_options(fn.definition, bind(fn.definition, [x, w])).tile == [1, 16, 2, 32, 64]
    np.testing.assert_allclose(fn(x, w, backend="cuda-sim"), np.einsum("nchw,fc->nfhw", x, w), rtol=1e-4, atol=1e-4)
    # A padded 3x3 convolution of 20 filters over 2 rows: guards cut the rows' loops.
    x, w = rng.standard_normal((1, 3, 5, 32)).astype(np.float32), rng.standard_normal((20, 3, 3, 3)).astype(np.float32)
    expected = _correlation(np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1))), w)
    np.testing.assert_allclose(conv.conv2d_pad1(x, w, backend="cuda-sim"), expected, rtol=1e-4, atol=1e-4)


NHWC_CONV = "def conv(float(N,H,W,C) X, float(F,KH,KW,C) Wt) -> (Y) { Y(n,h,w,f) +=! X(n,h+kh,w+kw,c) * Wt(f,kh,kw,c) }"


def test_channels_last_convolutions_take_register_tiles():
    """Channels-last, the same tiles with threads along the filters (4 a
    thread), and rows enough for 112 pixels a block; the default lowering
    sums the channels before the taps, so the channels are tiled (8 a step)
    and the image and filters staged in shared memory."""
    fn = tcir.define(NHWC_CONV).conv
    ordered = taps_last(fn.definition)
    assert ordered.stmts[0].reduction_indices == ["c", "kh", "kw"]
    sizes = {"N": 32, "H": 56, "W": 56, "C": 64, "F": 64, "KH": 3, "KW": 3}
    options = default_options(ordered, Binding(sizes, ()))
    assert options == tcir.MappingOptions(tile=[1, 2, 54, 64, 8, 3, 3], blocks=[27, 32], threads=[16, 18, 1])
    narrow = default_options(ordered, Binding({**sizes, "H": 30, "W": 30, "C": 128, "F": 128}, ()))
    assert narrow.tile[:4] == [1, 4, 28, 64] and narrow.threads == [16, 7, 2]
    line = default_options(ordered, Binding({**sizes, "H": 3, "W": 3}, ()))  # one output row of one pixel
    assert line.tile[:4] == [1, 1, 1, 64] and line.threads == [16, 1, 1]
    rng = np.random.default_rng(2)
    x, w = rng.standard_normal((2, 11, 37, 12)).astype(np.float32), rng.standard_normal((20, 3, 3, 12)).astype(np.float32)
    assert "__shared__ float shared_X" in fn.ir(x, w, backend="cuda")
    windows = np.lib.stride_tricks.sliding_window_view(x, (3, 3), axis=(1, 2))
    expected = np.einsum("nhwcij,fijc->nhwf", windows, w)
    np.testing.assert_allclose(fn(x, w, backend="cuda-sim"), expected, rtol=1e-4, atol=1e-4)


def test_one_dimensional_convolutions_take_register_tiles():
    """A 1-D convolution: 64 filters x 128 points a block, 8 x 8 a thread,
    32 channels (all taps) a step, a block per tile and batch entry, its
    1022 points padded to 1024 (whole tiles); a product of two reads
    without taps is no convolution (attention's weighted values)."""
    fn = tcir.define("def c1(float(B,C,T) X, float(F,C,K) W) -> (Y) { Y(b,f,t) +=! X(b,c,t+k) * W(f,c,k) }").c1
    options = default_options(fn.definition, Binding({"B": 32, "C": 256, "T": 1024, "F": 256, "K": 3}, ()))
    assert options == tcir.MappingOptions(
        tile=[1, 64, 128, 32, 3], pad_tiles=True, blocks=[8, 4, 32], threads=[16, 8], max_private_elements=64
    )
    wide = default_options(fn.definition, Binding({"B": 32, "C": 256, "T": 1024, "F": 256, "K": 7}, ()))
    assert wide.tile[3:] == [8, 7], "the filters' tile within 6144 elements: a power of two of channels"
    _run_on_cuda_sim(fn, {"B": 2, "C": 37, "T": 150, "F": 20, "K": 3}, None)
    _run_on_cuda_sim(fn, {"B": 2, "C": 5, "T": 1024, "F": 64, "K": 3}, None)  # padded
    pv = tcir.define("def pv(float(B,I,J) P, float(B,J,D) V) -> (O) { O(b,i,d) +=! P(b,i,j) * V(b,j,d) }").pv
    assert convolution_image(pv.definition.stmts[0]) is None


def test_long_sums_into_narrow_outputs_take_64x64_tiles_on_one_block_an_sm():
    """A linear attention's states, `KV(b,h,d,e) +=! K(b,h,t,d) * V(b,h,t,e)`
    over 1024 tokens: 128 tiles of 64 x 64, where a shorter sum needs twice
    as many to leave the 32 x 32 tiles."""
    fn = tcir.define("def kv(float(B,H,T,D) K, float(B,H,T,E) V) -> (KV) { KV(b,h,d,e) +=! K(b,h,t,d) * V(b,h,t,e) }").kv
    sizes = {"B": 8, "H": 16, "T": 1024, "D": 64, "E": 64}
    assert default_options(fn.definition, Binding(sizes, ())).tile == [1, 1, 64, 64, 32]
    assert default_options(fn.definition, Binding({**sizes, "T": 512}, ())).tile == [1, 1, 32, 32, 32]
    _run_on_cuda_sim(fn, {"B": 2, "H": 1, "T": 70, "D": 33, "E": 65}, None)


def test_short_sums_into_wide_outputs_take_register_tiles():
    """An outer product of 16 points into a 4096 x 4096 output writes it
    from 64 x 64 register tiles (4 x 8 a thread), as a longer sum does."""
    fn = tcir.define("def nt(float(M,K) A, float(N,K) B) -> (C) { C(m,n) +=! A(m,k) * B(n,k) }").nt
    options = default_options(fn.definition, Binding({"M": 4096, "N": 4096, "K": 16}, ()))
    assert options.tile == [64, 64, 32] and options.threads == [16, 8] and options.vector_width == 4
    _run_on_cuda_sim(fn, {"M": 70, "N": 90, "K": 8}, None)


def test_narrow_convolutions_take_squares_of_pixels():
    """Rows under 32 pixels with taps: 16 filters on the whole output plane
    a block, a 2x2 square of pixels a thread (3x3 where 2 does not divide
    the plane: 8 filters), 8 channels a step (a strided plane's image, too
    large for shared memory, read through L1), the next step's copied by
    `cp.async` into a second buffer; a plane that such squares
    tile in fewer than 64 threads (14 x 14, 7 x 7) takes segments of 7
    pixels of a row a thread (4 filters each, 8 on the 7 x 7 plane's 7
    segments); 1x1 filters keep the plane rule. It computes the right
    numbers on ragged channels and filters."""
    conv = tcir.define((EXAMPLES / "zoo" / "conv.tc").read_text())
    sizes = {"N": 32, "C": 128, "H": 28, "W": 28, "F": 128, "KH": 3, "KW": 3}
    options = default_options(conv.conv2d.definition, Binding(sizes, ()))
    assert options == tcir.MappingOptions(
        tile=[1, 16, 26, 26, 8, 3, 3], threads=[13, 13], max_private_elements=64, num_stages=3, async_copies=True
    )
    strided = default_options(conv.conv2d_stride2.definition, Binding({**sizes, "C": 64, "H": 56, "W": 56}, ()))
    # a strided plane's image (55 x 55 points a channel) is not staged; its filters are, 8 channels a step
    assert strided.tile == [1, 8, 27, 27, 8, 3, 3] and strided.threads == [9, 9] and strided.max_private_elements == 72
    small = default_options(conv.conv2d.definition, Binding({**sizes, "H": 16, "W": 16}, ()))
    assert small == tcir.MappingOptions(tile=[1, 32, 14, 14, 8, 3, 3], threads=[2, 14, 8])
    smaller = default_options(conv.conv2d.definition, Binding({**sizes, "C": 512, "F": 512, "H": 9, "W": 9}, ()))
    assert smaller == tcir.MappingOptions(tile=[1, 64, 7, 7, 8, 3, 3], threads=[1, 7, 8], max_private_elements=56)
    pointwise = default_options(tcir.define(POINTWISE).pw.definition, Binding({"N": 32, "C": 128, "H": 28, "W": 28, "F": 128}, ()))
    assert pointwise.tile == [1, 16, 28, 28]
    rng = np.random.default_rng(2)
    x, w = rng.standard_normal((2, 11, 18, 18)).astype(np.float32), rng.standard_normal((20, 11, 3, 3)).astype(np.float32)
    assert default_options(conv.conv2d.definition, bind(conv.conv2d.definition, [x, w])).threads == [8, 8]
    np.testing.assert_allclose(conv.conv2d(x, w, backend="cuda-sim"), _correlation(x, w), rtol=1e-4, atol=1e-4)
    x, w = x[:, :, :9, :9], w[:17]  # a 7 x 7 plane: segments of rows
    assert default_options(conv.conv2d.definition, bind(conv.conv2d.definition, [x, w])).threads == [1, 7, 3]
    np.testing.assert_allclose(conv.conv2d(x, w, backend="cuda-sim"), _correlation(x, w), rtol=1e-4, atol=1e-4)


def test_3d_convolutions_take_two_filters_a_block_on_the_generic_rule():
    """No template takes a 3-D convolution (`Y(n, f, d, h, w)`): the generic
    rule's tiles of its depth, rows and columns, 2 filters a block (which
    read the same image points), each thread's 2 x 14 x 2 points in
    registers (not accumulated in global memory: 12x slower on an H100);
    layers without taps keep one."""
    conv3d = tcir.define(
        "def c(float(N,C,D,H,W) X, float(F,C,KD,KH,KW) Wt) -> (Y) { Y(n,f,d,h,w) +=! X(n,c,d+kd,h+kh,w+kw) * Wt(f,c,kd,kh,kw) }"
    ).c
    sizes = {"N": 8, "C": 32, "D": 16, "H": 32, "W": 32, "F": 32, "KD": 3, "KH": 3, "KW": 3}
    options = default_options(conv3d.definition, Binding(sizes, ()))
    assert options == tcir.MappingOptions(tile=[1, 2, 14, 30, 30], threads=[30, 15], max_private_elements=56)
    inputs = [np.zeros((8, 32, 16, 32, 32), np.float32), np.zeros((32, 32, 3, 3, 3), np.float32)]
    assert "float private_Y[1][2][14][2][1];" in conv3d.ir(*inputs, backend="cuda", options=options)
    pointwise = tcir.define("def p(float(N,C,D,H,W) X, float(F,C) Wt) -> (Y) { Y(n,f,d,h,w) +=! X(n,c,d,h,w) * Wt(f,c) }").p
    options = default_options(pointwise.definition, Binding({"N": 8, "C": 32, "D": 16, "H": 32, "W": 32, "F": 32}, ()))
    assert options.tile[:2] != [1, 2]


def test_strided_convolutions_take_planes_or_fewer_channels():
    """A strided NCHW convolution whose 2x2 squares cover its plane in at
    most 256 threads takes the plane rule though its rows are 32 wide;
    wider ones keep the row rule, 8 channels a step where the image rows of
    32 channels (twice the pixels) would not fit in shared memory. Both
    compute the right numbers on cuda-sim."""
    conv = tcir.define((EXAMPLES / "zoo" / "conv.tc").read_text())
    fn = conv.conv2d_stride2
    plane = default_options(fn.definition, Binding({"N": 16, "C": 64, "H": 66, "W": 66, "F": 128, "KH": 3, "KW": 3}, ()))
    assert plane == tcir.MappingOptions(
        tile=[1, 16, 32, 32, 8, 3, 3], threads=[16, 16], max_private_elements=64, num_stages=3, async_copies=True
    )
    rows = default_options(fn.definition, Binding({"N": 32, "C": 64, "H": 114, "W": 114, "F": 128, "KH": 3, "KW": 3}, ()))
    assert rows.tile == [1, 64, 2, 56, 8, 3, 3] and rows.threads == [14, 1, 8]
    unstrided = default_options(conv.conv2d.definition, Binding({"N": 32, "C": 64, "H": 58, "W": 58, "F": 128, "KH": 3, "KW": 3}, ()))
    assert unstrided.tile[2:4] == [2, 56] and unstrided.tile[4] == 32  # the image rows of 32 channels fit
    _run_on_cuda_sim(fn, {"N": 1, "C": 3, "H": 66, "W": 66, "F": 17, "KH": 3, "KW": 3}, None)
    _run_on_cuda_sim(fn, {"N": 1, "C": 12, "H": 81, "W": 81, "F": 16, "KH": 3, "KW": 3}, None)


def test_narrow_convolutions_too_tall_for_a_block_take_the_generic_mapping():
    """A narrow plane whose squares or row segments need more than 1024
    threads (a stride-2 5x7 convolution's 36 x 25 output in segments of 5
    pixels: 5 x 36 x 8 threads; 2000 rows of 20 pixels in 2x2 squares)
    takes the generic mapping, not options a launch rejects."""
    conv = tcir.define((EXAMPLES / "zoo" / "conv.tc").read_text())
    strided = Binding({"N": 8, "C": 49, "H": 75, "W": 55, "F": 47, "KH": 5, "KW": 7}, ())
    tall = Binding({"N": 2, "C": 8, "H": 2002, "W": 22, "F": 16, "KH": 3, "KW": 3}, ())
    for fn, binding in ((conv.conv2d_stride2, strided), (conv.conv2d, tall)):
        options = default_options(fn.definition, binding)
        assert math.prod(options.threads) <= 1024 and len(options.tile) == 4


def _correlation(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """A stride-1 correlation of NCHW `x` by FCKhKw `w` (no padding), by numpy."""
    kh, kw = w.shape[2:]
    windows = np.lib.stride_tricks.sliding_window_view(x, (kh, kw), axis=(2, 3))
    return np.einsum("nchwij,fcij->nfhw", windows, w)


def test_elementwise_layers_take_four_points_a_thread():
    """A layer without reductions whose rows have 128 points or more: 8 x
    128 tiles, a warp a row, 4 points of it a thread; narrower rows keep the
    plane rule. The mapping's numbers on cuda-sim at a ragged size."""
    zoo = tcir.define((EXAMPLES / "zoo" / "elementwise.tc").read_text())
    add_col_row = zoo.add_col_row
    options = default_options(add_col_row.definition, bind(add_col_row.definition, [np.zeros(8192, np.float32)] * 2))
    assert options == tcir.MappingOptions(tile=[8, 128], threads=[32, 8])
    narrow = default_options(add_col_row.definition, bind(add_col_row.definition, [np.zeros(64, np.float32)] * 2))
    assert narrow.tile != [8, 128]
    col, row = np.arange(37, dtype=np.float32), np.arange(300, dtype=np.float32)
    np.testing.assert_allclose(add_col_row(col, row, backend="cuda-sim", options=options), add_col_row(col, row, backend="cpu"))


def test_elementwise_chains_through_temporaries_take_the_elementwise_tiles():
    """bias then GELU through a temporary at the same indices: one 8 x 128
    mapping for both statements; right numbers on cuda-sim."""
    bias_gelu = tcir.define((EXAMPLES / "zoo" / "elementwise.tc").read_text()).bias_gelu
    shapes = [np.zeros((4096, 1024), np.float32), np.zeros(1024, np.float32)]
    options = default_options(bias_gelu.definition, bind(bias_gelu.definition, shapes))
    assert options == tcir.MappingOptions(tile=[8, 128], threads=[32, 8])
    rng = np.random.default_rng(0)
    x, bias = rng.standard_normal((19, 260)).astype(np.float32), rng.standard_normal(260).astype(np.float32)
    np.testing.assert_allclose(bias_gelu(x, bias, backend="cuda-sim", options=options),
                               bias_gelu(x, bias, backend="cpu"), rtol=1e-5, atol=1e-6)


def _run_on_cuda_sim(fn: tcir.api.Function, sizes: dict[str, int], options: tcir.MappingOptions | None) -> None:
    inputs = random_inputs(fn.definition, sizes, 0)
    got = fn(*inputs, backend="cuda-sim", options=options)
    expected = reference_outputs(fn.definition, bind(fn.definition, inputs))
    for g, e in zip(got if isinstance(got, tuple) else (got,), expected, strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-5)


CHANNEL_MEAN = "def channel_mean(float(N,C,H,W) X) -> (S) { S(c) +=! X(n,c,h,w) / (N * H * W) }"


def test_sums_of_several_reduction_dimensions_spread_over_blocks():
    """Per-channel statistics of NCHW images: each block sums whole 56x56
    planes of 4 images (about 8 blocks an SM), its threads along the rows,
    partial sums added atomically; the same mapping at small ragged sizes
    computes the right numbers."""
    fn = tcir.define(CHANNEL_MEAN).channel_mean
    options = default_options(fn.definition, Binding({"N": 32, "C": 128, "H": 56, "W": 56}, ()))
    assert options == tcir.MappingOptions(parallel_reductions=True, tile=[1, 4, 56, 56], threads=[56, 8])
    _run_on_cuda_sim(fn, {"N": 5, "C": 3, "H": 7, "W": 9}, options)


def test_channels_last_statistics_are_column_sums():
    """The same sum over NHWC images reads along the output: the column rule."""
    fn = tcir.define("def nhwc_mean(float(N,H,W,C) X) -> (S) { S(c) +=! X(n,h,w,c) / (N * H * W) }").nhwc_mean
    options = default_options(fn.definition, Binding({"N": 32, "C": 128, "H": 56, "W": 56}, ()))
    assert not options.parallel_reductions and options.split_k > 1 and options.threads == [128]


def test_transposed_matrix_vector_products_are_column_sums():
    """`y(n) +=! A(k, n) * x(k)` reads A down its columns: no block a row
    (uncoalesced), but threads along n and the k rows split over blocks."""
    fn = tcir.define("def gemv_t(float(K,N) A, float(K) x) -> (y) { y(n) +=! A(k,n) * x(k) }").gemv_t
    options = default_options(fn.definition, Binding({"K": 8192, "N": 8192}, ()))
    assert options == tcir.MappingOptions(tile=[256, 512], threads=[256], split_k=16)
    sizes = {"K": 300, "N": 70}
    _run_on_cuda_sim(fn, sizes, default_options(fn.definition, Binding(sizes, ())))


def test_long_rows_take_up_to_1024_threads():
    """A softmax over a vocabulary: 1024 threads a row, 50 points of it a
    thread in registers."""
    options = default_options(_example("softmax").definition, Binding({"B": 128, "N": 50257}, ()))
    assert options.threads == [1024] and options.max_private_elements == 50 and options.block_reductions


def test_contractions_short_of_blocks_split_the_reduction():
    """32 rows through a 4096x4096 layer: 128 tiles of 32x32, k split in 8
    slices of 512 points; not where the reduction is short (128x1024x1024)
    or another statement follows the sum (a bias and ReLU)."""
    tmm = _example("tmm")
    options = default_options(tmm.definition, Binding({"M": 32, "K": 4096, "N": 4096}, ()))
    assert options.tile == [32, 32, 32] and options.split_k == 8
    assert default_options(tmm.definition, Binding({"M": 128, "K": 1024, "N": 1024}, ())).split_k == 1
    linear = tcir.define(
        "def linear_relu(float(B,I) X, float(O,I) W, float(O) bias) -> (Y) {\n"
        "  Y(b,o) +=! X(b,i) * W(o,i)\n  Y(b,o) = fmaxf(Y(b,o) + bias(o), 0)\n}"
    ).linear_relu
    assert default_options(linear.definition, Binding({"B": 32, "I": 4096, "O": 4096}, ())).split_k == 1
    _run_on_cuda_sim(tmm, {"M": 9, "K": 600, "N": 45}, options)


def test_medium_register_tiles_where_128_rows_leave_sms_idle():
    """A 1000x1000 output (64 tiles of 128x128, a ragged edge) takes 64x64
    tiles; 768x768 of 3072 products each, split-K over them as well, and
    256x256 of 8192 products; a
    2000x2000 output too (ragged), where 2048x2048 takes 128x128; 64 rows
    in one 128-row tile keep it; 32 rows keep 32x32 tiles."""
    tmm = _example("tmm")

    def options(m: int, k: int, n: int) -> tcir.MappingOptions:
        return default_options(tmm.definition, Binding({"M": m, "K": k, "N": n}, ()))

    assert options(1000, 1024, 1000).tile == [64, 64, 32] and options(1000, 1024, 1000).split_k == 1
    assert options(768, 3072, 768).tile == [64, 64, 32] and options(768, 3072, 768).split_k == 6
    assert options(2000, 1024, 2000).tile == [64, 64, 32]
    assert options(2048, 1024, 2048).tile == [128, 128, 32]
    assert options(64, 1024, 16384).tile == [128, 128, 32]
    assert options(32, 4096, 4096).tile == [32, 32, 32]
    # 256x256 of 8192 products (a Gram matrix): 16 tiles of 64x64 in 8
    # slices, one block an SM, instead of 64 tiles of 32x32 in 64 slices.
    assert (options(256, 8192, 256).tile, options(256, 8192, 256).split_k) == ([64, 64, 32], 8)
    # 96 64x64 tiles or more (a 128 x 4096 layer's 128), unsplit: 64x64, not
    # 32x32; fewer (128 x 2048's 64) keep 32x32.
    assert options(128, 1024, 4096).tile == [64, 64, 32] and options(128, 1024, 4096).split_k == 1
    assert options(128, 1024, 2048).tile == [32, 32, 32]


def test_scatters_into_large_tables_take_16_points_a_thread():
    """An embedding's gradient (a scatter into a table of 64 columns or
    more) takes 64 x 64 tiles of 16 x 16 threads, atomics; a narrower
    table keeps the pass's choice. Both compute the right numbers."""
    fn = tcir.define(
        "def g(float(E,D) T, int(B,L) I, float(B,D) gO) -> (float(E,D) gT) { gT(I(b,k), d) +=! gO(b,d) }"
    ).g
    wide = bind(fn.definition, [np.zeros((70, 66), np.float32), np.zeros((9, 5), np.int32), np.zeros((9, 66), np.float32)])
    assert default_options(fn.definition, wide) == tcir.MappingOptions(parallel_reductions=True, tile=[64, 64], threads=[16, 16])
    narrow = bind(fn.definition, [np.zeros((70, 8), np.float32), np.zeros((9, 5), np.int32), np.zeros((9, 8), np.float32)])
    assert default_options(fn.definition, narrow) == tcir.MappingOptions(parallel_reductions=True)
    for binding in (wide, narrow):
        inputs = random_inputs(fn.definition, binding.sizes, 4)
        expected = reference_outputs(fn.definition, bind(fn.definition, inputs))
        np.testing.assert_allclose(fn(*inputs, backend="cuda-sim"), expected[0], rtol=1e-4, atol=1e-4)


def test_long_sums_of_one_operand_not_k_major_take_groups_along_both_tiles():
    """128x128 tiles of a one-statement contraction whose rows' operand is
    k-major and columns' is stored k x n (NN) with 512 products or more a
    point give a thread groups of 4 rows and columns and lay both tiles out
    along them (`[k][m]`, `[k][n]`), and so does TT (rows stored k x m,
    columns k-major) where the rows fill a tile; TT on fewer rows keeps the
    round-robin threads with the k x m operand's tile transposed to `[m][k]`,
    and short sums keep both tiles; two k-major operands (NT) keep both
    tiles; two operands stored k x n (TN) take the groups without a
    transposed tile."""
    matmul = tcir.define((EXAMPLES / "zoo" / "matmul.tc").read_text())

    def grouped(name: str, k: int, m: int = 2048, n: int = 2048) -> tuple[list[int], bool]:
        options = default_options(matmul[name].definition, Binding({"M": m, "K": k, "N": n}, ()))
        assert options.tile == [128, 128, 32]
        return options.size_per_thread, options.transpose_copies

    assert grouped("matmul_nn", 2048) == grouped("matmul_tt", 2048) == ([4, 4], True)
    assert grouped("matmul_tt", 1024, m=64, n=16384) == ([], True)
    assert grouped("matmul_nt", 2048) == grouped("matmul_nn", 256) == ([], False)
    assert grouped("matmul_tn", 2048) == ([4, 4], False)


def test_a_def_lowered_in_parts_specializes_each_part_to_its_own_sizes():
    """A linear layer and exact GELU through a temporary, split by the
    default mapping: the GELU part has no size I, and `tc-specialize` is not
    given it (it warned of an unknown size on every first call)."""
    import warnings

    from tcir.compiler.lowering import default_parts
    from tcir.runtime.signature import bind as bind_inputs

    fn = tcir.define(
        "def linear_gelu(float(B,I) X, float(O,I) W) -> (Y) {\n"
        "  H(b,o) +=! X(b,i) * W(o,i)\n"
        "  Y(b,o) = 0.5 * H(b,o) * (1 + erf(H(b,o) * 0.7071067811865476))\n}"
    ).linear_gelu
    shapes = ((8192, 768), (3072, 768))
    arrays = [np.empty(s, np.float32) for s in shapes]
    assert len(default_parts(fn.definition, bind_inputs(fn.definition, arrays), None, "cuda-sim")[1]) == 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert "gpu.launch_func" in fn.ir(*arrays, backend="cuda-sim")


FEED_FORWARD = """def ffn(float(B,I) X, float(H,I) W1, float(H) b1, float(O,H) W2, float(O) b2) -> (Y) {
  A(b,h) +=! X(b,i) * W1(h,i)
  G(b,h) = 0.5 * (A(b,h) + b1(h)) * (1 + tanh(0.7978845608 * ((A(b,h) + b1(h)) + 0.044715 * (A(b,h) + b1(h)) * (A(b,h) + b1(h)) * (A(b,h) + b1(h)))))
  Y(b,o) +=! G(b,h) * W2(o,h)
  Y(b,o) = Y(b,o) + b2(o)
}"""


def test_feed_forward_blocks_are_lowered_in_parts():
    """Two linear layers through temporaries (no row-wise chain, no layer
    chain of outputs): each contraction, with its bias, a part with the
    contraction rule's register tiles, the GELU between them a part of its
    own; MLP3's narrow chain keeps its one kernel. The parts compute the
    right numbers on the simulated GPU."""
    from tcir.compiler.defaults import default_partition

    fn = tcir.define(FEED_FORWARD).ffn
    binding = Binding({"B": 4096, "I": 768, "H": 3072, "O": 768}, ())
    assert default_partition(fn.definition, binding) == [[0], [1], [2, 3]]
    mlp3 = _example("MLP3")
    assert default_partition(mlp3.definition, Binding({"B": 128, "N": 128, "O": 64, "P": 32, "Q": 2}, ())) is None
    inputs = random_inputs(fn.definition, {"B": 70, "I": 40, "H": 72, "O": 66}, 0)
    expected = reference_outputs(fn.definition, bind(fn.definition, inputs))[0]
    got = fn(*inputs, backend="cuda-sim")
    assert np.max(np.abs(got - expected)) <= 1e-5 * np.max(np.abs(expected))


BATCH_NORM = """def batch_norm(float(N,C,H,W) X, float(C) g, float(C) b) -> (Y) {
  mean(c) +=! X(n,c,h,w) / (N * H * W)
  d(n,c,h,w) = X(n,c,h,w) - mean(c)
  var(c) +=! d(n,c,h,w) * d(n,c,h,w) / (N * H * W)
  Y(n,c,h,w) = d(n,c,h,w) * rsqrt(var(c) + 1e-5) * g(c) + b(c)
}"""


def test_a_def_no_template_maps_whole_is_lowered_tensor_by_tensor():
    """Batch normalization in training (no row-wise chain: `d` is not at the
    statistics' row): one mapping of the whole def is the plain one, so each
    tensor is a part with its own template (the statistics spread sums, the
    rest elementwise), computing the right numbers on the simulated GPU;
    2LUT's embeddings keep their one mapping."""
    from tcir.compiler.defaults import default_partition

    fn = tcir.define(BATCH_NORM).batch_norm
    sizes = {"N": 32, "C": 64, "H": 56, "W": 56}
    assert default_partition(fn.definition, Binding(sizes, ())) == [[0], [1], [2], [3]]
    lut = _example("2LUT")
    lut_sizes = {"E1": 1000, "D": 64, "B": 128, "L1": 50, "E2": 900, "L2": 20}
    assert default_partition(lut.definition, Binding(lut_sizes, ())) is None
    _run_on_cuda_sim(fn, {"N": 3, "C": 5, "H": 6, "W": 7}, None)


def test_elementwise_temporaries_between_parts_are_recomputed_where_read():
    """Batch norm's `d = X - mean` is recomputed in the variance's and the
    output's parts (reading X again costs less than writing and reading d);
    an activation read by a contraction (at every output column) is not."""
    from tcir.compiler.defaults import default_partition
    from tcir.compiler.lowering import default_parts
    from tcir.compiler.partition import recomputed

    fn = tcir.define(BATCH_NORM).batch_norm
    sizes = {"N": 32, "C": 64, "H": 56, "W": 56}
    groups = default_partition(fn.definition, Binding(sizes, ()))
    definition, kept = recomputed(fn.definition, groups)
    assert kept == [[0], [2], [3]]
    _, parts = default_parts(fn.definition, Binding(sizes, ()), None, "cuda")
    assert [[p.name for p in part.inputs] for part in parts] == [["X"], ["X", "mean"], ["X", "g", "b", "mean", "var"]]
    assert not any(read.tensor == "d" for s in definition.stmts[2:] for read in walk(s.rhs) if isinstance(read, A.Access))
    ffn = tcir.define(
        "def ffn(float(B,I) X, float(H,I) W1, float(H) b1, float(O,H) W2) -> (Y) {\n"
        "  A(b,h) +=! X(b,i) * W1(h,i)\n  G(b,h) = fmaxf(A(b,h) + b1(h), 0.0)\n  Y(b,o) +=! G(b,h) * W2(o,h)\n}"
    ).ffn
    ffn_groups = default_partition(ffn.definition, Binding({"B": 4096, "I": 768, "H": 3072, "O": 768}, ()))
    assert recomputed(ffn.definition, ffn_groups)[1] == ffn_groups == [[0], [1], [2]]
    scatter = tcir.define(
        "def f(float(B,D) X, int32(B) I, float(N,D) E) -> (float(N,D) G) {\n"
        "  J(b) = I(b) + 0\n  G(J(b), d) +=! X(b, d)\n}"
    ).f
    assert recomputed(scatter.definition, [[0], [1]])[1] == [[0], [1]]  # J indexes the scatter's target
    _run_on_cuda_sim(fn, {"N": 3, "C": 5, "H": 6, "W": 7}, None)


def test_unrelated_gradients_are_lowered_apart():
    """A convolution's derived backward: the padded output gradient, the
    input's gradient (a convolution of the padded output gradient) and the
    filters' gradient; each is a part with its own template (before, the
    pair of gradients was a "row-wise chain" of 4-D rows too many for a
    grid, mapped whole by the plain rule: 37x eager autograd)."""
    from tcir.compiler.defaults import default_partition

    fn = tcir.define(_example("conv2d").gradient()).conv2d_grad
    sizes = {"B": 32, "IP": 64, "H": 56, "W": 56, "OP": 64, "KH": 3, "KW": 3}
    binding = Binding({**sizes, "out_2": 54, "out_3": 54}, ())
    groups = [[0], [1], [2]]
    assert default_partition(fn.definition, binding) == groups
    from tcir.compiler.partition import split_def

    d_in = split_def(fn.definition, groups)[1]
    assert default_options(d_in, binding).tile[:4] == [1, 64, 2, 56]  # the convolution template
    _run_on_cuda_sim(fn, {"B": 2, "IP": 3, "H": 6, "W": 7, "OP": 4, "KH": 3, "KW": 3, "out_2": 4, "out_3": 5}, None)


def test_gradients_with_scatters_are_lowered_apart():
    """A strided convolution's derived backward: the input's gradient is a
    scatter (its stride-2 subscripts have no inverse), the filters' a sum.
    A def with a scatter took the scatters' plain mapping whole, the filter
    gradient included (215x eager autograd on an H200); now each gradient
    is a part, the filters' taking its template."""
    from tcir.compiler.defaults import default_partition
    from tcir.compiler.partition import split_def

    conv = tcir.define((EXAMPLES / "zoo" / "conv.tc").read_text()).conv2d_stride2
    fn = tcir.define(conv.gradient()).conv2d_stride2_grad
    binding = Binding({"N": 32, "C": 64, "H": 56, "W": 56, "F": 128, "KH": 3, "KW": 3, "O_2": 27, "O_3": 27}, ())
    assert default_partition(fn.definition, binding) == [[0], [1]]
    d_weight = split_def(fn.definition, [[0], [1]])[1]
    assert default_options(d_weight, binding).split_k == 32  # the filter-gradient template
    _run_on_cuda_sim(fn, {"N": 2, "C": 3, "H": 9, "W": 11, "F": 4, "KH": 3, "KW": 3, "O_2": 4, "O_3": 5}, None)


def test_filter_gradients_split_the_images():
    """A convolution's filter gradient sums over images and pixels into
    filters x channels x taps: split-K over the images, 32 x 32 x every
    tap a block, a thread one channel at one tap for 32 filters (16
    channels with 7x7 taps, 784 threads); the same template on odd rows
    and ragged channels and filters computes the right numbers. Its input
    gradient reads a padded copy of the output gradient, so it is a
    convolution of its own, 8 filters a thread at 4 pixels."""
    fn = tcir.define(_example("conv2d").gradient()).conv2d_grad
    groups = [[0], [1], [2]]
    sizes = {"B": 32, "IP": 64, "H": 56, "W": 56, "OP": 64, "KH": 3, "KW": 3, "out_2": 54, "out_3": 54}
    from tcir.compiler.partition import split_def

    d_in, d_weight = split_def(fn.definition, groups)[1:]
    binding = Binding(sizes, ())
    assert default_options(d_weight, binding) == tcir.MappingOptions(
        tile=[32, 32, 3, 3, 1, 3, 54], threads=[3, 3, 32], split_k=32, vector_width=2
    )
    assert default_options(d_in, binding).threads == [14, 1, 8]
    seven = default_options(d_weight, Binding({**sizes, "KH": 7, "KW": 7, "out_2": 50, "out_3": 50}, ()))
    assert seven.threads == [7, 7, 16]
    small = {"B": 3, "IP": 37, "H": 9, "W": 8, "OP": 35, "KH": 3, "KW": 2, "out_2": 7, "out_3": 7}
    options = default_options(d_weight, Binding(small, ()))
    assert options.split_k == 3 and options.threads == [2, 3, 32] and options.vector_width == 1
    _run_on_cuda_sim(fn, small, None)


def test_padded_convolution_gradients_take_the_convolution_templates():
    """A padded convolution's derived backward reads padded copies of the
    output gradient and of the image: its input gradient takes the
    convolution template, its filter gradient the filter-gradient one; the
    parts compute the right numbers on cuda-sim at ragged sizes."""
    from tcir.compiler.defaults import default_partition
    from tcir.compiler.partition import split_def

    fn = tcir.define(tcir.define((EXAMPLES / "zoo" / "conv.tc").read_text()).conv2d_pad1.gradient()).conv2d_pad1_grad
    binding = Binding({"N": 32, "C": 64, "H": 56, "W": 56, "F": 64, "KH": 3, "KW": 3}, ())
    groups = default_partition(fn.definition, binding)
    assert groups == [[0], [1], [2], [3]]
    d_in, d_weight = split_def(fn.definition, groups)[2:]
    assert default_options(d_in, binding).tile[:4] == [1, 64, 2, 56]
    assert default_options(d_weight, binding).split_k == 32
    _run_on_cuda_sim(fn, {"N": 2, "C": 3, "H": 7, "W": 9, "F": 5, "KH": 3, "KW": 3}, None)


def test_padded_convolutions_read_a_zero_padded_copy():
    """A convolution padded by a guard is lowered as a zero-padded copy of
    its image, then a convolution without a guard that takes the
    convolution template (with a bias and ReLU after it, in the same part);
    both compute the right numbers on cuda-sim at ragged sizes."""
    from tcir.compiler.lowering import default_parts

    conv_relu = tcir.define(
        "def conv_relu(float(N,C,H,W) I, float(F,C,KH,KW) Wt, float(F) B) -> (O) {\n"
        "  O(n,f,h,w) +=! (h + kh >= 1 && h + kh <= H && w + kw >= 1 && w + kw <= W)\n"
        "                 ? I(n,c,h + kh - 1,w + kw - 1) * Wt(f,c,kh,kw) : 0.0\n"
        "    where h in 0:H, w in 0:W, kh in 0:KH, kw in 0:KW\n"
        "  O(n,f,h,w) = fmaxf(O(n,f,h,w) + B(f), 0.0)\n}"
    ).conv_relu
    pad1 = tcir.define((EXAMPLES / "zoo" / "conv.tc").read_text()).conv2d_pad1
    binding = Binding({"N": 32, "C": 64, "H": 56, "W": 56, "F": 64, "KH": 3, "KW": 3}, ())
    for fn, statements in ((pad1, [1]), (conv_relu, [2])):
        whole, (copy, conv) = default_parts(fn.definition, binding, None, "cuda")
        assert [s.lhs for s in whole.stmts] == ["I_pad", *["O"] * statements[0]]
        assert [p.name for p in copy.outputs] == ["I_pad"] and len(conv.stmts) == statements[0]
        # 4 pixels and 8 filters a thread: 32 channels a step.
        assert default_options(conv, binding).tile == [1, 64, 2, 56, 32, 3, 3]
        _run_on_cuda_sim(fn, {"N": 2, "C": 3, "H": 7, "W": 9, "F": 5, "KH": 3, "KW": 3}, None)
    _run_on_cuda_sim(pad1, {"N": 1, "C": 35, "H": 3, "W": 32, "F": 16, "KH": 3, "KW": 3}, None)


def test_a_gathered_read_outside_the_sums_keeps_the_row_wise_chain():
    """Cross entropy: a row's log-sum-exp less its target logit, read
    through the target index: a block per row."""
    fn = tcir.define(
        "def cross_entropy(float(B,N) X, int32(B) T) -> (L) {\n"
        "  M(b) max=! X(b,n)\n  S(b) +=! exp(X(b,n) - M(b))\n  L(b) = M(b) + log(S(b)) - X(b,T(b))\n}"
    ).cross_entropy
    options = default_options(fn.definition, Binding({"B": 4096, "N": 32000}, ()))
    assert options.block_reductions and options.threads == [1024]
    sizes = {"B": 130, "N": 70}
    _run_on_cuda_sim(fn, sizes, default_options(fn.definition, Binding(sizes, ())))


def test_small_sums_of_whole_planes_spread_over_blocks():
    """Group normalization's statistics (32 x 32 groups of 8 x 28 x 28
    points): a group a block, its threads over the 28 x 28 planes."""
    fn = tcir.define("def gn(float(N,G,C,H,W) X) -> (S) { S(n,g) +=! X(n,g,c,h,w) / (C * H * W) }").gn
    options = default_options(fn.definition, Binding({"N": 32, "G": 32, "C": 8, "H": 28, "W": 28}, ()))
    assert options == tcir.MappingOptions(parallel_reductions=True, tile=[1, 1, 8, 28, 28], threads=[28, 14])
