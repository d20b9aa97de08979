"""Array tiles, reference grouping and the promotion pass on small cases."""

from pathlib import Path

import islpy as isl
import numpy as np

import tcir
from tcir.dialects.poly import ScopOp
from tcir.dialects.tc import ReadOp, UpdateOp
from tcir.passmanager import PassManager
from tcir.polyhedral.promotion.affine import aff_to_expr, function_of
from tcir.polyhedral.promotion.promote import _as_box
from tcir.polyhedral.promotion.references import group_references, references
from tcir.polyhedral.promotion.tiles import array_tile

TMM = """
def tmm(float(M,K) A, float(N,K) B) -> (C) {
  C(m,n) +=! A(m,kk) * B(n,kk)
}
"""


def test_tile_of_a_block_is_its_32x32_box():
    footprint = isl.Map(
        "{ [i, j] -> A[a, b] : 32i <= a < 32i + 32 and 32j <= b < 32j + 32 and 0 <= a < 100 }"
    )
    tile = array_tile(footprint)
    assert tile is not None and tile.sizes == (32, 32) and tile.strides == (1, 1)
    assert tile.offsets[0].plain_is_equal(isl.Aff("{ [i, j] -> [(32i)] }"))


def test_tile_takes_the_lower_bound_giving_the_smallest_box():
    # a >= 0 and a >= 32p - 2: the second bound gives 34 elements, the first none fixed.
    footprint = isl.Map(
        "{ [p] -> I[a] : 0 <= p < 4 and 32p - 2 <= a <= 32p + 31 and 0 <= a < 128 }"
    )
    tile = array_tile(footprint)
    assert tile is not None and tile.sizes == (34,)
    assert tile.offsets[0].plain_is_equal(isl.Aff("{ [p] -> [(-2 + 32p)] }"))


def test_strided_per_thread_tile_is_compressed():
    footprint = isl.Map(
        "[ty] -> { [p] -> C[a] : 0 <= ty < 8 and 32p <= a < 32p + 32 and exists (e : a = ty + 8e) }"
    )
    tile = array_tile(footprint)
    assert tile is not None and tile.sizes == (4,) and tile.strides == (8,)


def test_runs_of_a_thread_keep_their_elements_only():
    # `size_per_thread=[4]` on 16 threads: rows 4ty..4ty+3 and 64+4ty..64+4ty+3 of a 128-row tile.
    footprint = isl.Map(
        "[ty] -> { [p] -> C[a] : 0 <= ty < 16 and 128p <= a < 128p + 128 and exists (e, r : 0 <= r < 4 and a = 4ty + r + 64e) }"
    )
    tile = array_tile(footprint)
    assert tile is not None and tile.sizes == (8,) and tile.runs == ((4, 64),)
    index = tile.buffer_footprint(footprint)
    assert index.range().is_equal(isl.Set("[ty] -> { [b] : 0 <= b < 8 and 0 <= ty < 16 }"))
    # A ragged edge (rows below 200): some threads have one run, or part of one.
    ragged = array_tile(footprint.intersect_range(isl.Set("{ C[a] : a < 200 }")))
    assert ragged is not None and ragged.sizes == (8,) and ragged.runs == ((4, 64),)
    # Values that no runs cover (rows 0..3 and 6): the box.
    assert array_tile(isl.Map("{ [p] -> C[a] : 0 <= p < 2 and (0 <= a - 8p < 4 or a = 8p + 6) }")).sizes == (7,)


def test_unbounded_footprint_has_no_tile():
    assert array_tile(isl.Map("[N] -> { [p] -> A[a] : 0 <= a < N }")) is None

BATCH_MATMUL_NT = """
def bmm(float(B,M,K) X, float(B,N,K) Y) -> (Z) {
  Z(b,m,n) +=! X(b,m,k) * Y(b,n,k)
}
"""


def test_quasi_affine_functions_become_affine_expressions():
    aff = isl.Aff("[N] -> { S[m, n] -> [(m - 32 * floor(m / 32) + N)] }")
    assert str(aff_to_expr(aff, ["N"])) == "((d0 + s0) + ((d0 floordiv 32) * -32))"
    relation = isl.Map(
        "[ty] -> { S[m] -> [b] : 0 <= ty < 8 and exists (e : m = ty + 8e) and 8b <= m - ty < 8b + 8 }"
    )
    assert function_of(relation, ["ty"]).plain_is_equal(
        isl.MultiAff("{ S[m] -> [(floor((m)/8))] }")
    )


def test_batched_wgmma_tiles_on_two_row_blocks_keep_private_accumulators():
    """128x256 wgmma tiles of a batched product with two row tiles: isl bounds
    `m` through `256 floor((1 + block_x) / 2)`, and the private row index
    `(m / 8) mod 2` came out of `function_of` in three pieces until its
    equalities were made explicit (the accumulators stayed in global memory,
    6x slower on an H200)."""
    fn = tcir.define(BATCH_MATMUL_NT).bmm.astype("float16")
    options = tcir.MappingOptions(
        tile=[1, 128, 256, 64], blocks=[2, 2], threads=[4, 8], warps=[1, 8], max_private_elements=128,
        max_shared_memory=196608, num_stages=4, copy_vector_width=8, async_copies=True, warpgroup_mma=True,
    )
    rng = np.random.default_rng(0)
    x, y = (rng.integers(-3, 4, (2, 256, 64)).astype(np.float16) for _ in range(2))
    cuda = fn.ir(x, y, backend="cuda", options=options)
    assert "float private_Z_acc[1][2][64];" in cuda and "float* Z_acc" not in cuda
    got = fn(x, y, backend="cuda-sim", options=options)
    np.testing.assert_array_equal(got, np.einsum("bmk,bnk->bmn", x.astype(np.float32), y.astype(np.float32)))


def _mapped_tmm(promote: str = "poly-promote") -> ScopOp:
    """tmm (64x64x64) mapped to 32x8 threads, then `promote` if given."""
    module = tcir.define(TMM).tmm.def_ir.module.clone()
    pipeline = (
        'tc-specialize{sizes="M=64,K=64,N=64"},convert-tc-to-poly,poly-schedule{fusion=max},'
        "poly-tile{sizes=32,32,32},poly-sink,poly-map-to-gpu{blocks=0,0 threads=32,8}"
    )
    PassManager.parse(pipeline + (f",{promote}" if promote else "")).run(module)
    return next(o for o in module.walk() if isinstance(o, ScopOp))


def test_writes_overlapping_reads_are_grouped():
    scop = _mapped_tmm(promote="")
    refs = [r for r in references(scop.statements) if r.access is not None]
    c_refs = [r for r in refs if r.access.get_tuple_name(isl.dim_type.out) == "C"]
    assert len(c_refs) == 2  # S0's write and S1's update (a read and a write)
    tile = isl.Map(
        "{ [p] -> C[a, b] : 0 <= p < 2 and 32p <= a < 32p + 32 and 0 <= b < 64 }"
    )
    groups = group_references(c_refs, lambda r: tile)
    assert len(groups) == 1 and groups[0].writes and groups[0].tile.sizes == (32, 64)


def test_reads_merge_only_when_the_tile_shrinks():
    scop = _mapped_tmm(promote="")
    a_ref = next(
        r
        for r in references(scop.statements)
        if isinstance(r.op, ReadOp) and r.access.get_tuple_name(isl.dim_type.out) == "A"
    )
    near = isl.Map("{ [p] -> A[a, b] : 0 <= p < 4 and 32p <= a < 32p + 16 and b = 0 }")
    shifted = isl.Map(
        "{ [p] -> A[a, b] : 0 <= p < 4 and 32p + 8 <= a < 32p + 24 and b = 0 }"
    )
    far = isl.Map("{ [p] -> A[a, b] : 0 <= p < 4 and 32p <= a < 32p + 16 and b = 200 }")
    fake = [a_ref, a_ref]
    footprints = iter([near, shifted, near, far])
    merged = group_references(fake, lambda r: next(footprints))
    kept = group_references(fake, lambda r: next(footprints))
    assert len(merged) == 1 and merged[0].tile.sizes == (24, 1)
    assert len(kept) == 2


def test_promoted_accesses_name_their_buffers():
    scop = _mapped_tmm()
    buffers = {k: str(v) for k, v in scop.attributes["buffers"].data.items()}
    assert buffers == {
        "private_C_0": "memref<4x1xf32, 5 : i64>",
        "shared_A_0": "memref<32x33xf32, 3 : i64>",
        "shared_B_0": "memref<32x33xf32, 3 : i64>",
    }
    s1 = next(s for s in scop.statements if s.sym_name.data == "S1")
    promoted = [
        op.attributes["promoted"].data
        for op in s1.body.walk()
        if isinstance(op, ReadOp | UpdateOp)
    ]
    assert promoted == ["shared_A_0", "shared_B_0", "private_C_0"]
    names = [s.sym_name.data for s in scop.statements]
    # No copy into private_C: S0 writes every element before S1 reads it.
    assert names[2:] == ["read_shared_A_0", "read_shared_B_0", "write_private_C_0"]


def _promoted(source: str, name: str, sizes: str, tile: str, threads: str) -> ScopOp:
    module = tcir.define(source)[name].def_ir.module.clone()
    pipeline = (
        f'tc-specialize{{sizes="{sizes}"}},convert-tc-to-poly,poly-schedule{{fusion=max}},'
        f"poly-tile{{sizes={tile}}},poly-sink,poly-map-to-gpu{{blocks=0,0 threads={threads}}},"
        "poly-promote"
    )
    PassManager.parse(pipeline).run(module)
    return next(o for o in module.walk() if isinstance(o, ScopOp))


def test_accumulating_into_an_input_copies_it_in():
    source = "def acc(float(M,K) A, float(M) Init) -> (C) {\n  C(m) = Init(m)\n  C(m) += A(m,k)\n}"
    scop = _promoted(source, "acc", "M=64,K=64", "32,32", "32")
    names = [s.sym_name.data for s in scop.statements]
    assert "write_private_C_0" in names and "read_private_C_0" not in names
    source = "def acc(float(M,K) A) -> (C) {\n  C(m) += A(m,k)\n}"
    scop = _promoted(source, "acc", "M=64,K=64", "32,32", "32")
    names = [s.sym_name.data for s in scop.statements]
    assert "read_private_C_0" in names and "write_private_C_0" in names


LUT = "def lut(float(E,D) LUT, int(B,L) I) -> (O) {\n  O(i,j) +=! LUT(I(i,k),j)\n}"


def test_indirect_reads_are_promoted_through_the_index_tensor():
    scop = _promoted(LUT, "lut", "E=1000,D=64,B=16,L=20", "8,32,10", "32,8")
    buffers = {k: str(v) for k, v in scop.attributes["buffers"].data.items()}
    # The virtual array LUT_I[i, k, j] = LUT[I[i, k], j]: 8 rows x 10 lookups x 32 columns.
    assert buffers["shared_LUT_I_0"] == "memref<8x10x33xf32, 3 : i64>"
    assert not any(b.startswith("shared_I") for b in buffers)  # the copy reads I itself
    body = next(s for s in scop.statements if s.sym_name.data == "S1").body
    reads = {op.tensor.name_hint: op.attributes.get("promoted") for op in body.walk() if isinstance(op, ReadOp)}
    assert reads["LUT"].data == "shared_LUT_I_0" and reads["I"] is None
    copy = next(s for s in scop.statements if s.sym_name.data == "read_shared_LUT_I_0")
    ops = [op for op in copy.body.walk() if isinstance(op, ReadOp | UpdateOp)]
    assert [op.tensor.name_hint for op in ops] == ["I", "LUT", "LUT"]
    assert ops[1].subscript_operands[0] is ops[0].result  # LUT[I[a0, a1], a2]
    assert isl.UnionMap(copy.reads.data).is_equal(
        isl.UnionMap(
            "{ read_shared_LUT_I_0[p0, p1, p2, a0, a1, a2] -> I[a0, a1];"
            "  read_shared_LUT_I_0[p0, p1, p2, a0, a1, a2] -> LUT[o, a2] : 0 <= o < 1000 }"
        ).intersect_domain(isl.UnionSet(copy.domain.data))
    )


def test_indirect_reads_through_a_written_index_stay_in_global_memory():
    source = (
        "def lut(float(E,D) LUT, int(B,L) I0) -> (O, I) {\n"
        "  I(i,k) = I0(i,k)\n  O(i,j) +=! LUT(I(i,k),j)\n}"
    )
    scop = _promoted(source, "lut", "E=1000,D=64,B=16,L=20", "8,32,10", "32,8")
    assert not any("LUT" in b for b in scop.attributes["buffers"].data)


def test_mapping_options_drive_the_pass():
    options = tcir.MappingOptions(
        tile=[32, 32], use_private_memory=False, max_shared_memory=1000, max_private_elements=64
    )
    assert (
        "poly-promote{shared=true private=false max-shared-bytes=1000 max-private-elements=64}"
        in options.pipeline(backend="cuda")
    )
    off = tcir.MappingOptions(use_shared_memory=False, use_private_memory=False)
    assert "poly-promote" not in off.pipeline(backend="cuda")


def test_promotion_keeps_cuda_text_for_numpy_inputs():
    a, b = np.ones((64, 64), np.float32), np.ones((64, 64), np.float32)
    source = tcir.define(TMM).tmm.ir(
        a,
        b,
        backend="cuda",
        options=tcir.MappingOptions(tile=[32, 32, 32], threads=[32, 8]),
    )
    assert (
        source.count("__syncthreads();") >= 2
        and "__shared__ float shared_A[32][33];" in source
    )


STRIDED_FOOTPRINT = (
    # A stride-2 7x7 convolution's image columns for 64 output columns a
    # block, as the projection of the block ids gives them: pieces over
    # divisions, though each block reads one interval (0..132, 128..228).
    "{ [i0, 0, i2, i3, 0] -> I[i0, o1, o2, o3] : 0 <= i0 <= 31 and 0 <= i2 <= 55 and i3 >= 0"
    " and 0 <= o1 <= 2 and 4i2 <= o2 <= 8 + 4i2 and o3 <= 198 and o3 <= 102 + 128i3"
    " and ((o3 >= 7 + 128i3 and -23 - o3 <= 32*floor((6 - o3)/32) < -o3)"
    " or (o3 >= -25 + 128i3 and 32*floor((6 - o3)/32) >= -o3)"
    " or (2*floor((6 - o3)/32) >= -23 + 120i3 - o3 and 32*floor((6 - o3)/32) <= -24 - o3));"
    " [i0, 0, i2, 1, 0] -> I[i0, o1, o2, o3] : 0 <= i0 <= 31 and 0 <= i2 <= 55"
    " and 0 <= o1 <= 2 and 4i2 <= o2 <= 8 + 4i2 and 199 <= o3 <= 228;"
    " [i0, 0, i2, 0, 0] -> I[i0, o1, o2, o3] : 0 <= i0 <= 31 and 0 <= i2 <= 55"
    " and 0 <= o1 <= 2 and 4i2 <= o2 <= 8 + 4i2 and 103 <= o3 <= 132 }"
)


def test_footprint_that_is_a_box_loses_its_divisions():
    footprint = isl.Map(STRIDED_FOOTPRINT)
    plain = _as_box(footprint)
    assert plain.is_equal(footprint)
    assert all(m.dim(isl.dim_type.div) == 0 for m in plain.get_basic_maps())
    assert plain.intersect_domain(isl.Set("{ [0, 0, 0, 1, 0] }")).range().is_equal(
        isl.Set("{ I[0, o1, o2, o3] : 0 <= o1 <= 2 and 0 <= o2 <= 8 and 128 <= o3 <= 228 }")
    )


def test_footprint_that_is_no_box_keeps_its_divisions():
    footprint = isl.Map("{ [p] -> I[a] : 0 <= p < 4 and 8p <= a < 8p + 8 and a mod 2 = 0 }")
    assert _as_box(footprint) is footprint


STEM = """
def stem(float(N,C,H,W) I, float(F,C,KH,KW) Wt) -> (O) {
  O(n,f,h,w) +=! I(n,c,2 * h + kh,2 * w + kw) * Wt(f,c,kh,kw)
    where h in 0:OH, w in 0:112
}
"""


def test_strided_convolution_on_two_column_blocks_copies_boxes():
    """ResNet's stem (7x7, stride 2, 3 channels, 112 output columns in blocks
    of 64): the image's shared copy is lowered (isl's AST generation failed
    on the footprint's pieces) and computes the convolution."""
    rows = 16
    fn = tcir.define(STEM.replace("OH", str(rows))).stem
    rng = np.random.default_rng(0)
    image = rng.standard_normal((2, 3, 2 * rows + 5, 229)).astype(np.float32)
    filters = rng.standard_normal((16, 3, 7, 7)).astype(np.float32)
    options = tcir.MappingOptions(
        tile=[1, 16, 2, 64, 3, 7, 7], blocks=[2, 8, 2], threads=[16, 1, 8], max_private_elements=64
    )
    got = fn(image, filters, backend="cuda-sim", options=options)
    np.testing.assert_allclose(got, fn(image, filters, backend="cpu"), rtol=1e-4, atol=1e-4)


def test_filter_copy_whose_box_has_divisions_keeps_its_footprint():
    """A padded convolution of 2 filters on 17 x 3 threads: the filters'
    box, bounded by floors of the block ids, is not taken (the thread-loop
    analysis of its copy ran for minutes); the numbers hold."""
    conv = tcir.define((Path(__file__).parents[3] / "examples" / "zoo" / "conv.tc").read_text()).conv2d_pad1
    rng = np.random.default_rng(1)
    image = rng.standard_normal((9, 33, 2, 17)).astype(np.float32)
    filters = rng.standard_normal((2, 33, 2, 1)).astype(np.float32)
    got = conv(image, filters, backend="cuda-sim")
    np.testing.assert_allclose(got, conv(image, filters, backend="cpu"), rtol=1e-4, atol=1e-4)


def test_vector_copies_deal_the_rows_a_tile_spans_not_a_unit_dimension():
    """Sequence-first attention scores (`Q(i, b, d)`, one `b` a tile of 128
    rows `i`): the float4 groups of a row go to consecutive threads and the
    rows `i` to the next ones, 4 copies a thread of each 128x32 tile, not
    all 128 rows by the few threads whose ids match the block's `b`."""
    fn = tcir.define("def f(float(L,B,D) Q, float(L,B,D) K) -> (S) { S(b,i,j) +=! Q(i,b,d) * K(j,b,d) }").f
    q = np.zeros((512, 64, 64), np.float32)
    options = tcir.MappingOptions(
        tile=[1, 128, 128, 32], blocks=[4, 4, 64], threads=[16, 16], max_private_elements=64,
        max_shared_memory=73728, num_stages=3, vector_width=4, copy_vector_width=4, async_copies=True,
    )
    cuda = fn.ir(q, q, backend="cuda", options=options)
    assert cuda.count("tc_cp_async_16(&shared_Q") == 8  # 4 in the prologue, 4 in the loop
    small = [np.random.default_rng(0).standard_normal((37, 3, 40)).astype(np.float32) for _ in range(2)]
    expected = np.einsum("ibd,jbd->bij", *small)
    np.testing.assert_allclose(fn(*small, backend="cuda-sim", options=options), expected, rtol=1e-4, atol=1e-4)
