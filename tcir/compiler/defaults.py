"""The mapping a call uses without options: a small cost model per def and shape.

In the spirit of the paper's "reasonable guesses", but each rule is what
measured fastest on an H100 (the tables are in `tools/bench.py`'s notes):

- **A large contraction** (one reduction statement over at least 512 points
  with a 2-D or 3-D output, e.g. a matmul), its k tiles of 32 points: when
  the output has enough 128x128 tiles to give every SM a block, 128x128x32
  block tiles on 16x16 threads, so each thread keeps an 8x8 register
  micro-tile (tmm 128x4096x16384 471 us, against 600 us on 32x8 threads and
  614 us with k tiles of 16 and scalar reads; eager 345 us); else, where 32x32 tiles give the blocks,
  32x32x32 tiles on 16x8 threads (4x2 accumulators a thread: tmm
  128x1024x1024 18.8 us, against 29.2 us with four a thread and scalar
  reads; eager 16.1 us; on an H200 15.5 us with float4 copies and
  double-buffered tiles, `num_stages=3`, eager 15.8 us); both read their shared operands as float4
  (`vector_width=4`) and copy them from global memory as float4
  (`copy_vector_width=4`). A reduction that k tiles of 32 do not divide
  takes the 32x32x32 tiles too where its rows are whole float4 groups (a
  multiple of 4 points): the last k tile's copies are guarded float4 groups,
  still staged in registers (C3's 1000 points on an H200: 19.2 us, against
  22.2 us with k tiles of 40 on 8x16 threads and scalar copies, 19.6 us
  with k tiles of 64 and 36.4 us with k tiles of 40 and float4 copies, which
  do not split evenly; eager 15.3 us); else 32x32x32 tiles on 32x8 threads,
  scalar reads and copies (31.6 us). Else, for a 2-D
  output whose sum has one reduction index of `SPLIT_K` to `MAX_SPLIT_K`
  points that atomics can combine, split-K: blocks take slices of the
  reduction as well as 32x32 output tiles, on 16x8 threads, float4 reads of
  k tiles of 16, each block adding its partial sums atomically (`split_k`:
  a slice per `K_SLICE` points; MLP1 14.2 us, against 16.1 us with one
  128-point k tile a slice on 32x8 threads and scalar reads, eager 15.6
  us); else 8x32x32 tiles, one output a thread. The tiled kernels load the
  next k step's operand tiles while this step computes: into a second
  shared buffer by cp.async (`num_stages=3, async_copies=True`: tmm
  128x4096x16384 424 us on an H100, 445 us staged in registers, the
  buffers in 72 KiB of dynamic shared memory; C3 17.1 us, 17.7 us; MLP1
  14.1 us, 14.8 us), except the whole 32x32x32 tiles of tmm 128x1024x1024,
  staged in registers (15.4 us, 16.7 us by cp.async); the rest staged in
  registers, one buffer (`num_stages=2`).
  With `allow_tf32` (`MappingOptions(allow_tf32=True)` alone asks for
  these defaults), the 128x128x32 tiles run on sm_90's warpgroup `wgmma`
  (`warpgroup_mma`: `threads=[4, 8], warps=[1, 8]`, a warpgroup a 64x128
  half, 4 swizzled shared buffers filled by cp.async, `num_stages=5`; tmm
  128x4096x16384 110.0 us on an H100, against 143-145 us on warp-level
  `mma.sync` at any warp tile, hand-written ones with ldmatrix included;
  cuBLAS with TF32 103.3 us); where 32x32 tiles are what fill the GPU,
  64x32x32 tiles on one warpgroup each (tmm 128x1024x1024 11.5 us, against
  15.5 us in f32, 14.7 us on 64x64 tiles and 15.1-20.9 us split over k;
  cuBLAS with TF32 9.0 us). Both need whole tiles of the output and of k.
  GPUs before sm_90 run these kernels by plain shared loads: there
  `threads=[4, 64], tile=[128, 128, 64]` without `warpgroup_mma` gives
  `mma.sync`. The other contractions keep their f32 mapping (C3's ragged k
  tile; MLP1, 14.5 us against 22.0-29.7 us on wgmma tiles).
- **Any other one-output layer** (convolutions, batched small matmuls): a
  block computes a tile of the two innermost output dimensions, up to 32
  points wide along the innermost (one thread each: a warp reads a row) and
  two points a thread along the next (all of its rows where that takes at
  most 512 threads, else 2x256/32 rows). The output dimension just outside
  them is tiled by up to 16 where an operand does not depend on it, so that
  operand's shared copy is loaded once and reused (gconv's input plane
  across output channels). Reductions stay untiled inside a thread, read
  as float4 where the innermost one's extent is a multiple of 4 (tbmm).
- **A sum too small to fill the GPU** (`+=` over one reduction index of at
  least `SPLIT_REDUCTION` points, whose output has fewer than
  `SMALL_OUTPUT` points: a matrix-vector product with few rows, a row
  sum): the reduction is spread over blocks and threads as well
  (`parallel_reductions`), each block summing a slice of one output
  point's reduction on 256 threads, partial sums added atomically; the
  slices are as long as keeps about four blocks per SM, and at least 8
  points a thread.
- **Embeddings** (2-D outputs, each summing fewer than 512 rows gathered
  through an index tensor: 1LUT, 2LUT; checked first): a block per output row of up to 64 points, a thread
  a point, so that many blocks keep many gathers in flight (1LUT 4.0 us,
  2LUT 5.7 us on an H100; 4 rows a block: 4.1 and 7.6 us).
- **A chain of layers** (several 2-D outputs, a later statement reading an
  earlier one's output, MLP3): one kernel whose blocks each own 4 rows of
  the batch and run every layer on them (`fusion="outer"`: each layer's
  bias, sum and ReLU fused by output point, the layers fused along the
  batch), a layer's outputs on 4x64 threads between barriers, its operands
  in shared memory (MLP3: 6.8 us on an H100, against 8.6 us with a kernel
  per layer, 28.2 us with a kernel per statement and 83.5 us with `max`
  fusion, whose dependent layers run in few threads; eager 88 us). Where a
  layer is wider than 256 or the batch gives fewer than 16 such blocks, a
  kernel per statement in 4x32 tiles on 32x4 threads (28.2 us for MLP3).
- Everything else keeps `MappingOptions()` (one block per point of the
  outer parallel loops, 32x8 or 256 threads).

Occupancy is kept by construction: at most 256 threads and 64 private
elements a thread (registers), and promotion stays within
`max_shared_memory`, dropping what does not fit.
"""

from __future__ import annotations

import dataclasses
import math

from tcir.compiler.options import ATOMIC_SUM_DTYPES, DEFAULT, TF32_DEFAULT, MappingOptions
from tcir.frontend import ast as A
from tcir.frontend.subscripts import gathers, walk
from tcir.runtime.signature import Binding, evaluate

BLOCKS_TO_FILL_GPU = 128
"""Blocks of one launch that give every SM of a current GPU one (H100: 132)."""
LARGE_REDUCTION = 512
"""Reduction points from which staging operand tiles in shared memory pays."""
THREADS, MAX_THREADS = 256, 512
"""Threads of a block where the output allows; up to `MAX_THREADS` to cover
the two innermost output dimensions whole."""
INNER_THREADS = 32
"""Threads along the innermost output dimension: one warp reads a row."""
REUSE_TILE = 16
"""Points of a reused output dimension that one block computes."""
SMALL_OUTPUT = 8192
"""Output points below which a sum's output alone leaves most of a GPU idle."""
SPLIT_REDUCTION = 8192
"""Reduction points from which a sum is spread over threads and blocks."""
K_TILE = 32
"""Reduction points of a contraction's k tile."""
SPLIT_K, MAX_SPLIT_K, K_SLICE = 1024, 16384, 128
"""Reduction points from (and up to) which a 2-D contraction whose output
tiles leave SMs idle is split over blocks, and the points of a slice."""
CHAIN_WIDTH, CHAIN_ROWS, CHAIN_BLOCKS = 256, 4, 16
"""A chain of layers runs in one kernel (`fusion="outer"`) where no layer is
wider than `CHAIN_WIDTH` (isl's scheduling time grows fast with the width:
1.4 s at 256, minutes at 1024) and the batch gives at least `CHAIN_BLOCKS`
blocks of `CHAIN_ROWS` rows."""
POINTS_PER_THREAD = 8
"""Fewest reduction points a thread sums before its atomic add."""
GATHER_ROW = 64
"""An embedding's block: a row of up to 64 points (two warps)."""
VECTOR_WIDTH = 4
"""Shared operands read as float4 (`vector_width`) where the reduction's
innermost loop allows: a quarter of the shared loads (tmm 128x4096x16384
614 -> 471 us with 128x128x32 tiles on 16x16 threads, tbmm 8.7 -> 7.3 us);
and copied from global memory as float4 (`copy_vector_width`) where the
groups split evenly over the threads (on an H200: tmm 128x4096x16384 475
-> 459 us, tmm 128x1024x1024 19.2 -> 16.2 us, MLP1 14.0 -> 13.8 us; C3's
k tiles of 40, whose 10 groups a row do not, lose the register staging of
their copies: 22 -> 37 us)."""


def _double_buffered_bytes(size: int, k_tile: int = K_TILE) -> int:
    """The shared bytes of two f32 operand tiles of `size` x `k_tile` (rows
    padded by a float4), each double-buffered."""
    return 2 * 2 * size * (k_tile + VECTOR_WIDTH) * 4


WGMMA_STAGES = 5
"""`num_stages` of TF32 contractions on `wgmma`: 4 shared buffers a tile,
the copies 3 k steps ahead (tmm 128x4096x16384 110.0 us on an H100, 115.6
us with 3 buffers; cuBLAS with TF32 103.3 us)."""


def _wgmma_options(outer: list[int], rows: int, columns: int) -> MappingOptions:
    """`rows` x `columns` x 32 tiles of a contraction on sm_90's `wgmma`:
    a warpgroup of 4 x 8 x 4 threads per 64 rows, each its 64 x `columns`
    part of the tile, the operands' tiles in `WGMMA_STAGES - 1` swizzled
    shared buffers filled by cp.async."""
    return MappingOptions(
        tile=[*outer, rows, columns, K_TILE],
        threads=[4, 8],
        warps=[1, rows // 16],
        max_private_elements=64,
        max_shared_memory=(WGMMA_STAGES - 1) * (rows + columns) * K_TILE * 4,
        num_stages=WGMMA_STAGES,
        async_copies=True,
        copy_vector_width=VECTOR_WIDTH,
        warpgroup_mma=True,
    )


def _copy_width(rows: int, row: int, threads: int) -> int:
    """`VECTOR_WIDTH` where the copies of a `rows` x `row` operand tile in
    float4 groups split evenly over `threads` (each thread the same number
    of groups, so that `num_stages` can stage them in registers), else 1."""
    groups = row // VECTOR_WIDTH
    if row % VECTOR_WIDTH or threads % groups or rows % (threads // groups):
        return 1
    return VECTOR_WIDTH


def default_options(definition: A.CheckedDef, binding: Binding, allow_tf32: bool = False) -> MappingOptions:
    """The GPU mapping used without options (see the module docstring);
    with `allow_tf32`, that of contractions on the tensor cores where one fits."""
    options = _default_options(definition, binding, allow_tf32)
    return dataclasses.replace(options, allow_tf32=True) if allow_tf32 else options


def resolved_options(definition: A.CheckedDef, binding: Binding, options: MappingOptions | None) -> MappingOptions:
    """`options`, or the defaults where they are None or only `MappingOptions(allow_tf32=True)`."""
    if options is None or options == TF32_DEFAULT:
        return default_options(definition, binding, options is not None)
    return options


def _default_options(definition: A.CheckedDef, binding: Binding, allow_tf32: bool) -> MappingOptions:
    if any(s.scatter is not None for s in definition.stmts):  # scatters add atomically, on every thread
        return MappingOptions(parallel_reductions=True)
    sizes = [binding.sizes[n] for n in definition.size_params]
    if _embeddings(definition, sizes):
        widths = [evaluate(definition.tensor(s.lhs).dims[-1], sizes) for s in definition.stmts]
        x = max(1, min(max(widths), GATHER_ROW))
        return MappingOptions(tile=[1, x], threads=[x])
    rows = _row_chain(definition)
    if rows is not None and _independent_rows(definition, sizes, rows):
        return _row_chain_options(definition, sizes, rows)
    column = _column_sum(definition)
    if column is not None:
        return _column_sum_options(definition, sizes, column)
    layer = _one_output_layer(definition)
    if layer is None:
        if _layer_chain(definition):
            shapes = [[evaluate(d, sizes) for d in p.dims] for p in definition.outputs]
            batch, widest = min(s[0] for s in shapes), max(s[1] for s in shapes)
            if widest <= CHAIN_WIDTH and -(-batch // CHAIN_ROWS) >= CHAIN_BLOCKS:
                return MappingOptions(fusion="outer", tile=[CHAIN_ROWS, 64], threads=[CHAIN_ROWS, 64])
            return MappingOptions(fusion="min", tile=[4, 32], threads=[32, 4])
        return MappingOptions()
    extents = {i: evaluate(hi, sizes) - evaluate(lo, sizes) for i, (lo, hi) in layer.ranges.items()}
    out = [extents[i] for i in layer.lhs_indices]
    if any(e <= 0 for e in out):
        return MappingOptions()  # an empty output: nothing to tile
    reduction = math.prod(extents[i] for i in layer.reduction_indices)
    atomic = atomic_sum(definition, layer)
    if (
        atomic
        and len(layer.reduction_indices) == 1
        and math.prod(out) < SMALL_OUTPUT
        and reduction >= SPLIT_REDUCTION
    ):
        slice_ = max(THREADS * POINTS_PER_THREAD, math.prod(out) * reduction // (4 * BLOCKS_TO_FILL_GPU))
        slice_ = -(-slice_ // THREADS) * THREADS
        return MappingOptions(parallel_reductions=True, tile=[*[1] * len(out), slice_], threads=[THREADS])
    if layer.reduces and 2 <= len(out) <= 3 and (reduction >= LARGE_REDUCTION or _wide_contraction(layer, out, reduction)):
        outer = [1] * (len(out) - 2)

        def fills_gpu(tile: int) -> bool:  # enough blocks of tile x tile outputs
            return math.prod(out[:-2]) * -(-out[-2] // tile) * -(-out[-1] // tile) >= BLOCKS_TO_FILL_GPU

        # A ragged last k tile is staged in registers where its copies are
        # float4 groups (guarded: C3's 1000 points, 19.2 us on an H200); with
        # scalar copies it is not (31.6 us, 115 us with vector reads).
        steps = extents[layer.reduction_indices[0]]
        whole = steps % K_TILE == 0

        def register_tiled(size: int, threads: list[int], private: int, asynchronous: bool) -> MappingOptions:
            shared = _double_buffered_bytes(size)
            return MappingOptions(
                tile=[*outer, size, size, K_TILE],
                threads=threads,
                max_private_elements=private,
                max_shared_memory=max(DEFAULT.max_shared_memory, shared),
                num_stages=3,
                async_copies=asynchronous,
                vector_width=VECTOR_WIDTH,
                copy_vector_width=_copy_width(size, K_TILE, math.prod(threads)),
            )

        def whole_tiles(rows: int, columns: int) -> bool:  # wgmma's groups tile the output
            return out[-2] % rows == 0 and out[-1] % columns == 0

        if allow_tf32 and whole and fills_gpu(128) and whole_tiles(128, 128):
            return _wgmma_options(outer, 128, 128)
        if allow_tf32 and whole and fills_gpu(32) and whole_tiles(64, 32):
            return _wgmma_options(outer, 64, 32)
        if fills_gpu(128) and whole:
            return register_tiled(128, [16, 16], 64, True)
        if fills_gpu(32) and steps % VECTOR_WIDTH == 0:
            # Whole k tiles staged in registers (tmm 128x1024x1024 15.4 us on
            # an H100, 16.7 us by cp.async); C3's ragged last tile by cp.async
            # (17.1 us, 17.7 us with one buffer staged in registers).
            return register_tiled(32, [16, 8], 16, not whole)
        if fills_gpu(32):
            return MappingOptions(tile=[*outer, 32, 32, K_TILE], threads=[32, 8], num_stages=2)
        if atomic and len(out) == 2 and len(layer.reduction_indices) == 1 and SPLIT_K <= reduction <= MAX_SPLIT_K:
            return MappingOptions(
                tile=[32, 32, 16],
                threads=[16, 8],
                max_private_elements=16,
                num_stages=3,
                async_copies=True,
                vector_width=VECTOR_WIDTH,
                copy_vector_width=_copy_width(32, 16, 16 * 8),
                split_k=-(-reduction // K_SLICE),
            )
        return MappingOptions(tile=[*outer, 8, 32, 32], threads=[32, 8], num_stages=2)
    if len(out) < 2:
        return MappingOptions()
    x = min(out[-1], INNER_THREADS)
    rows = out[-2] if out[-2] <= 2 * (MAX_THREADS // x) else min(out[-2], 2 * max(1, THREADS // x))
    y = rows // 2 if rows % 2 == 0 else rows
    tile = [1] * (len(out) - 2) + [rows, x]
    if len(out) >= 3 and layer.lhs_indices[-3] not in _indices_of_every_read(layer):
        tile[-3] = min(out[-3], REUSE_TILE)
    steps = extents[layer.reduction_indices[-1]] if layer.reduction_indices else 0
    vector = VECTOR_WIDTH if steps and steps % VECTOR_WIDTH == 0 else 1
    return MappingOptions(tile=tile, threads=[x, y], vector_width=vector)


def _written_reads(stmt: A.Stmt, written: set[str]) -> list[A.Access]:
    """The reads of `stmt` of tensors that the def writes (not inputs)."""
    return [n for n in walk(stmt.rhs) if isinstance(n, A.Access) and n.tensor in written]


def _input_reads(stmt: A.Stmt, written: set[str]) -> list[A.Access]:
    """The reads of `stmt` of tensors not in `written`."""
    return [n for n in walk(stmt.rhs) if isinstance(n, A.Access) and n.tensor not in written]


def _is_index(e: A.Expr, name: str) -> bool:
    return isinstance(e, A.IndexVar) and e.name == name


def _index_names(read: A.Access) -> set[str]:
    return {n.name for sub in read.subscripts for n in walk(sub) if isinstance(n, A.IndexVar)}


def _row_reuse(definition: A.CheckedDef, sizes: list[int], rows: int) -> float:
    """How many times more elements a row reads from tensors that other rows
    read too (a read missing one of the row's indices: a matmul's operands)
    than from its own (reads at the row, and its outputs)."""
    own, shared = 1, 0
    for stmt in definition.stmts:
        extents = {i: evaluate(hi, sizes) - evaluate(lo, sizes) for i, (lo, hi) in stmt.ranges.items()}
        row = set(stmt.lhs_indices[:rows])
        own = max(own, math.prod(extents[i] for i in stmt.lhs_indices[rows:]))
        for read in _input_reads(stmt, set()):
            names = _index_names(read) & set(extents)
            points = math.prod(extents[i] for i in names - row)
            if row <= names:
                own = max(own, points)
            else:
                shared += points
    return shared / own


def _row_chain(definition: A.CheckedDef) -> int | None:
    """The number of row dimensions `k` where the def works on independent
    rows (softmax, norms): every statement's first `k` left-hand indices are
    its row, `k` the fewest left-hand indices of any statement; every read
    of a tensor the def writes is at the reader's row; some statement
    reduces, none gathers; and each reduction's innermost reduction index
    is the last subscript of one of its reads, so that threads spread over
    a row read consecutive elements. None where the def is not such a chain."""
    stmts = definition.stmts
    k = min(len(s.lhs_indices) for s in stmts)
    if k == 0 or not any(s.reduces for s in stmts) or any(gathers(s.rhs) for s in stmts):
        return None
    written = {s.lhs for s in stmts}
    for stmt in stmts:
        row = stmt.lhs_indices[:k]
        for read in _written_reads(stmt, written):
            if len(read.subscripts) < k or not all(_is_index(e, i) for e, i in zip(read.subscripts, row)):
                return None
        if stmt.reduces:
            last = stmt.reduction_indices[-1]
            if not any(r.subscripts and _is_index(r.subscripts[-1], last) for r in _input_reads(stmt, set())):
                return None
    return k


ROW_REUSE = 4
"""Most elements a row of a row-wise chain may read that other rows read too,
per element of its own (a norm's weights: 1 or 2; a matmul's operands: a
row per output point reads whole rows of both, and is no such chain)."""


def _independent_rows(definition: A.CheckedDef, sizes: list[int], rows: int) -> bool:
    """Whether a block per row pays: rows enough to give every SM blocks,
    each reading mostly its own elements."""
    count = math.prod(evaluate(hi, sizes) - evaluate(lo, sizes) for i, (lo, hi) in definition.stmts[0].ranges.items() if i in definition.stmts[0].lhs_indices[:rows])
    return count >= BLOCKS_TO_FILL_GPU and _row_reuse(definition, sizes, rows) <= ROW_REUSE


ROW_THREADS = 256
"""Threads of a block that reduces one row (fewer for rows shorter than that)."""


def _row_chain_options(definition: A.CheckedDef, sizes: list[int], rows: int) -> MappingOptions:
    """A block per row, its threads spread over the row, the reductions
    combined across them (`block_reductions`): the whole chain in one kernel."""
    longest = 1
    for stmt in definition.stmts:
        inner = [i for i in stmt.lhs_indices[rows:]] + stmt.reduction_indices
        extents = [evaluate(hi, sizes) - evaluate(lo, sizes) for i, (lo, hi) in stmt.ranges.items() if i in inner]
        longest = max(longest, math.prod(extents))
    threads = min(ROW_THREADS, max(INNER_THREADS, -(-longest // INNER_THREADS) * INNER_THREADS))
    private = min(MAX_PRIVATE_ELEMENTS_A_ROW, max(DEFAULT.max_private_elements, -(-longest // threads)))
    return MappingOptions(threads=[threads], block_reductions=True, max_private_elements=private)


MAX_PRIVATE_ELEMENTS_A_ROW = 64
"""Registers a thread may keep of its share of a row (a softmax's exponentials)."""


def _column_sum(definition: A.CheckedDef) -> A.Stmt | None:
    """The sum of a def whose one output sums its inputs along outer
    dimensions (`S(n) +=! X(b, n)`): every read's last subscript is the
    output's innermost index, none depends on a reduction index there."""
    layer = _one_output_layer(definition)
    if layer is None or not layer.reduces or not atomic_sum(definition, layer):
        return None
    inner = layer.lhs_indices[-1]
    reads = _input_reads(layer, {layer.lhs})
    if not reads or not all(r.subscripts and _is_index(r.subscripts[-1], inner) for r in reads):
        return None
    return layer


COLUMN_ROWS = 32
"""Fewest reduction points each thread of a column sum adds up."""


def _column_sum_options(definition: A.CheckedDef, sizes: list[int], stmt: A.Stmt) -> MappingOptions:
    """Threads along the output's innermost dimension (coalesced reads), the
    reduction split over blocks (split-K, partial sums added atomically)
    until about four blocks an SM run."""
    extents = {i: evaluate(hi, sizes) - evaluate(lo, sizes) for i, (lo, hi) in stmt.ranges.items()}
    out = [extents[i] for i in stmt.lhs_indices]
    reduction = math.prod(extents[i] for i in stmt.reduction_indices)
    threads = min(THREADS, max(INNER_THREADS, -(-out[-1] // INNER_THREADS) * INNER_THREADS))
    tiles = math.prod(out[:-1]) * -(-out[-1] // threads)
    slices = max(1, min(-(-4 * BLOCKS_TO_FILL_GPU // tiles), reduction // COLUMN_ROWS))
    slice_ = -(-reduction // slices)
    tile = [*[1] * (len(out) - 1), threads, slice_, *[1] * (len(stmt.reduction_indices) - 1)]
    return MappingOptions(tile=tile, threads=[threads], split_k=-(-reduction // slice_))


WIDE_OUTPUT = 64
"""Rows and columns of a contraction's output from which tiles of it in
registers pay even for a short reduction (a batched 256x256 matmul)."""


def _wide_contraction(layer: A.Stmt, out: list[int], reduction: int) -> bool:
    """Whether `layer` sums products of two reads over at least a k tile of
    points into an output whose last two dimensions are both `WIDE_OUTPUT`
    or more, each read missing one of those two indices (each operand is
    reused along the other's dimension)."""
    reads = [n for n in walk(layer.rhs) if isinstance(n, A.Access) and n.tensor != layer.lhs]
    if reduction < K_TILE or min(out[-2:]) < WIDE_OUTPUT or len(reads) != 2:
        return False
    rows, columns = layer.lhs_indices[-2:]
    used = [{n.name for sub in r.subscripts for n in walk(sub) if isinstance(n, A.IndexVar)} for r in reads]
    return any(rows in a and columns not in a and columns in b and rows not in b for a, b in (used, used[::-1]))


def _one_output_layer(definition: A.CheckedDef) -> A.Stmt | None:
    """The statement that does the work (the reduction, else the first) when
    every statement writes the same tensor at the same indices, else None."""
    first = definition.stmts[0]
    if any(s.lhs != first.lhs or s.lhs_indices != first.lhs_indices for s in definition.stmts):
        return None
    return next((s for s in definition.stmts if s.reduces), first)


def _embeddings(definition: A.CheckedDef, sizes: list[int]) -> bool:
    """Whether every statement writes a 2-D output and every sum gathers
    fewer than `LARGE_REDUCTION` rows (1LUT, 2LUT: longer sums are left to
    the contraction and reduction rules)."""
    sums = [s for s in definition.stmts if s.reduces]
    return (
        bool(sums)
        and all(len(definition.tensor(s.lhs).dims) == 2 for s in definition.stmts)
        and all(gathers(s.rhs) and _reduction_points(s, sizes) < LARGE_REDUCTION for s in sums)
    )


def _reduction_points(stmt: A.Stmt, sizes: list[int]) -> int:
    """The points of `stmt`'s reduction dimensions."""
    return math.prod(
        evaluate(hi, sizes) - evaluate(lo, sizes) for i, (lo, hi) in stmt.ranges.items() if i in stmt.reduction_indices
    )


def atomic_sum(definition: A.CheckedDef, stmt: A.Stmt) -> bool:
    """Whether `poly-parallel-reduction` may combine `stmt`'s sum by atomic adds."""
    return stmt.op.startswith("+=") and stmt.reduces and definition.tensor(stmt.lhs).dtype in ATOMIC_SUM_DTYPES


def _layer_chain(definition: A.CheckedDef) -> bool:
    """Whether every output is 2-D and a statement reads another statement's output."""
    if any(len(p.dims) != 2 for p in definition.outputs):
        return False
    outputs = {p.name for p in definition.outputs}
    return any(
        isinstance(node, A.Access) and node.tensor != stmt.lhs and node.tensor in outputs
        for stmt in definition.stmts
        for node in walk(stmt.rhs)
    )


def _indices_of_every_read(stmt: A.Stmt) -> set[str]:
    """The indices that every tensor read by `stmt` (but its own output) depends on."""
    reads = [node for node in walk(stmt.rhs) if isinstance(node, A.Access) and node.tensor != stmt.lhs]
    used = [
        {n.name for s in read.subscripts for n in walk(s) if isinstance(n, A.IndexVar)} for read in reads
    ]
    return set.intersection(*used) if used else set(stmt.lhs_indices)
