"""The mapping a call uses without options: templates chosen by structure and size.

In the spirit of the paper's "reasonable guesses": each template is the
mapping that measured fastest on an H100 for the structure it serves; the
measurements that chose them are in the docs (`docs/guide/defaults.md`).
The first that applies:

- **Scatters** (`gE(I(b), d) +=! gO(b, d)`): `parallel_reductions`, on 64 x
  64 tiles of 16 x 16 threads where the outputs are 2-D and that large.
- **Embeddings** (2-D outputs, each a sum of fewer than 512 gathered rows):
  a block per output row of up to 64 points, a thread a point.
- **Row-wise chains** (softmax, norms: every statement's leading left-hand
  indices are its row, reads of what the def writes are at the reader's
  row), with rows enough for every SM and rows that read little of what
  other rows read: a block per row, 16 points of it a thread (32 to 1024
  threads; rows of several dimensions narrower than that along the
  innermost two), the reductions spread over the block (`block_reductions`);
  a one-statement sum of rows of at most 64 points (a global average
  pool): a thread per row.
- **Spread sums** (one sum over several reduction dimensions, 2048
  points or more, into an output of fewer than 8192 points, every read
  ending in the innermost reduction index: per-channel statistics of NCHW
  images, group-norm statistics):
  `parallel_reductions` over about 1024 blocks, each holding the innermost
  reduction dimensions whole as far as it can, threads along them.
- **Column sums** (every read's last subscript is the output's innermost
  index, or the read is a vector no output index reads: a transposed
  matrix-vector product): threads along the output, the reduction split
  over blocks (split-K), partial sums added atomically.
- **Contractions** (one reduction statement with a 2-D or 3-D output over
  at least 512 points, or a product of two reads each missing one of the
  output's last two indices, both of them 64 or more): register
  micro-tiles (128x128x32 on 16x16 threads, one operand that is not
  k-major, `B(k, n)`, copied transposed where the sum is long; 128x64x32 on 8x16 for 64
  columns or fewer, where such tiles fill the GPU, 64x64x32 on 16x8 where
  those 64 columns do not, where such tiles are whole or one covers the
  dimension; else 32x32x32 on 16x8, split over k where those give fewer
  than 1024 blocks and k is long),
  float4 reads and copies of the shared operands, their next k tiles
  copied by cp.async or staged in registers; with `allow_tf32`, sm_90's
  `wgmma` on whole tiles; split-K for 2-D outputs that even 32x32 tiles
  leave short of blocks.
- **Convolutions** (`O(n,f,h,w) +=! I(n,c,h+kh,w+kw) * W(f,c,kh,kw)`, 1x1,
  strided or padded; rows of 32 pixels or more, 16 filters or more):
  register tiles of 64 filters x 2 rows x up to 64 pixels a block, 4
  filters x 2 rows x 2-4 pixels a thread (1x1: 8 filters x 2 rows x 2
  pixels), 8 channels a step. Narrower rows (filters with taps), where
  squares of 2x2 (or 3x3) pixels tile the output plane in 64 threads or
  more: a block computes 16 (8) filters on the whole plane, a thread its
  square, 8 channels a step; smaller planes (14x14, 7x7): a thread a
  segment of 4-8 pixels of a row for 4 (or 8) filters (all in
  `tcir.compiler.convolutions`). A guard on the image in the sum (padding)
  becomes a zero-padded copy first (`tcir.compiler.lowering.default_parts`).
- **Elementwise layers** (no reduction, rows of 128 points or more; also
  chains of such statements through temporaries at the same indices): a
  block per 8 x 128 tile, a warp a row, 4 points of it a thread.
- **Other one-output layers** (narrower convolutions, small batched products): a
  block per tile of the two innermost output dimensions, a warp along the
  innermost, the next outer dimension tiled where an operand does not
  depend on it (its shared copy reused).
- **Sums too small to fill the GPU**: `parallel_reductions`.
- **Chains of layers** (MLP3): one kernel, blocks over batch rows
  (`fusion="outer"`), else a kernel per statement.

A row-wise chain whose rows read much of what other rows read (attention)
is lowered in parts (`default_partition`, `tcir.compiler.partition`), and
so is a def of several tensors with a sum that no template maps whole, a
part per tensor (batch norm in training, a feed-forward block).
Occupancy is kept by construction: at most 256 threads (1024 for a long
row) and 64 private elements a thread, promotion within `max_shared_memory`.
"""

from __future__ import annotations

import dataclasses
import math

from tcir.compiler.convolutions import (
    CONVOLUTION_FILTERS,
    CONVOLUTION_MIN_COLUMNS,
    convolution_image,
    convolution_options,
    filter_gradient_options,
    narrow_convolution_options,
    takes_plane,
)
from tcir.compiler.options import ATOMIC_DTYPES, DEFAULT, TF32_DEFAULT, MappingOptions
from tcir.compiler.tile_padding import pads_cheaply
from tcir.frontend import ast as A
from tcir.frontend.dtypes import HALF_TYPES
from tcir.frontend.subscripts import accesses, gathers, index_names, operand_reads, summed_shifts, walk
from tcir.polyhedral.gpu_mapping import mapped_grid
from tcir.polyhedral.unrolling import largest_divisor
from tcir.runtime.signature import Binding, evaluate
from tcir.transforms.poly_parallel_reduction import ATOMIC_UPDATES

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
GENERIC_CONVOLUTION_FILTERS = 2
"""Filters a block of a convolution that no template takes (a 3-D one) computes."""
SMALL_OUTPUT = 8192
"""Output points below which a sum's output alone leaves most of a GPU idle."""
SPLIT_REDUCTION = 8192
"""Reduction points from which a sum is spread over threads and blocks."""
K_TILE = 32
"""Reduction points of a contraction's k tile."""
SPLIT_K, MAX_SPLIT_K, K_SLICE = 1024, 16384, 128
"""Reduction points from (and up to) which a 2-D contraction whose output
tiles leave SMs idle is split over blocks, and the points of a slice."""
SPLIT_BLOCKS, MIN_SLICES, MAX_SLICES, SLICE_TILES = 8 * 128, 4, 8, 16
"""A one-statement 2-D contraction on 32x32 or 64x64 tiles short of `SPLIT_BLOCKS`
blocks has its reduction split into `MIN_SLICES` to `MAX_SLICES` slices of
`SLICE_TILES` k tiles at least, where it is that long."""
WIDE_CHAIN = MappingOptions(fusion="min", tile=[4, 32], threads=[32, 4])
"""A chain of layers too wide for one kernel, where it is not lowered in
parts (`default_partition`): a kernel per statement."""
CHAIN_WIDTH, CHAIN_ROWS, CHAIN_BLOCKS = 256, 4, 16
"""A chain of layers runs in one kernel (`fusion="outer"`) where no layer is
wider than `CHAIN_WIDTH` (isl's scheduling time grows fast with the width:
1.4 s at 256, minutes at 1024) and the batch gives at least `CHAIN_BLOCKS`
blocks of `CHAIN_ROWS` rows."""
POINTS_PER_THREAD = 8
"""Fewest reduction points a thread sums before its atomic add."""
ELEMENTWISE_ROWS, ELEMENTWISE_COLUMNS = 8, 128
"""A block's tile of an elementwise layer: 8 rows of 128 points, a warp a
row, 4 points of it a thread (32 apart: each load a warp's 128 bytes)."""
GATHER_ROW = 64
"""An embedding's block: a row of up to 64 points (two warps)."""
VECTOR_WIDTH = 4
"""Shared operands read as float4 (`vector_width`) where the reduction's
innermost loop allows: a quarter of the shared loads; and copied from
global memory as float4 (`copy_vector_width`) where the groups split evenly
over the threads (C3's k tiles of 40, whose 10 groups a row do not, would
lose the register staging of their copies). The timings are in the
defaults guide, "Contractions and the paper's layers"."""


SIZE_PER_THREAD = 4
"""Consecutive rows and columns a thread takes at a time in a register-tiled
contraction (`size_per_thread`), where its tile has a multiple of them: a
`[k][m]` shared tile's rows read four at a time (see the defaults guide,
"Register tiles of runs" and "Transposed tiles for groups")."""


def _size_per_thread(layer: A.Stmt, rows: int, columns: int, threads: list[int]) -> list[int]:
    """`size_per_thread` for a `rows` x `columns` tile of `layer` on
    `threads` (x first): `SIZE_PER_THREAD` along both output dimensions
    where operands are read along both (their last subscripts: MN-major
    `[k][m]` and `[k][n]` shared tiles, whose rows a thread then reads four
    at a time) and a thread has a multiple of that many points of each;
    else empty (a K-major tile read so loses, up to 2x; see the
    defaults guide, "Register tiles of runs")."""
    reads = operand_reads(layer)
    points = (columns // threads[0], rows // threads[1])
    along = (layer.lhs_indices[-1], layer.lhs_indices[-2])
    if all(p % SIZE_PER_THREAD == 0 and any(_ends_in(r, i) for r in reads) for p, i in zip(points, along)):
        return [SIZE_PER_THREAD, SIZE_PER_THREAD]
    return []


def _double_buffered_bytes(size: int, k_tile: int = K_TILE) -> int:
    """The shared bytes of two f32 operand tiles of `size` x `k_tile` (rows
    padded by a float4), each double-buffered."""
    return 2 * 2 * size * (k_tile + VECTOR_WIDTH) * 4


WGMMA_STAGES = 5
"""`num_stages` of contractions on `wgmma`: 4 shared buffers a tile, the
copies 3 k steps ahead (2 for half operands, whose `wgmma`s still run
while the next step starts: `gpu-prefetch-copies`)."""


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


WGMMA_ROWS, HALF_K_TILE = 64, 64
"""A warpgroup's rows, and a half k tile: one 128-byte swizzled row."""
HALF_K_SLICE = 256
"""Reduction points of a slice of a half contraction split over k on `wgmma`."""
HALF_WGMMA_COLUMNS = (128, 64, 32, 16)
"""Columns of the 64-row half `wgmma` tiles, the first that fills the GPU."""


def _half_wgmma_options(outer: list[int], rows: int, columns: int) -> MappingOptions:
    """`rows` x `columns` x 64 tiles of a half contraction on sm_90's
    `wgmma` (m64nNk16, four a k tile): a warpgroup of 4 x 8 x 4 threads per
    64 rows, each its 64 x `columns` part of the tile; the operands' tiles
    in 4 swizzled shared buffers filled by cp.async of 16 bytes, 2 k steps
    ahead of the step whose `wgmma`s run while the next step's start."""
    return MappingOptions(
        tile=[*outer, rows, columns, HALF_K_TILE],
        threads=[4, 8],
        warps=[1, rows // 16],
        max_private_elements=columns // 2,
        max_shared_memory=max(DEFAULT.max_shared_memory, (WGMMA_STAGES - 1) * (rows + columns) * HALF_K_TILE * 2),
        num_stages=WGMMA_STAGES,
        async_copies=True,
        copy_vector_width=HALF_VECTOR_WIDTH,
        warpgroup_mma=True,
    )


MMA_ROWS, MMA_COLUMNS, MMA_POINTS = 16, 8, 16
"""The m, n and k of a half-precision `mma.sync` (m16n8k16): a contraction
whose output and reduction are whole multiples runs on the tensor cores."""


def _half_contraction(definition: A.CheckedDef, layer: A.Stmt) -> bool:
    """Whether `layer` sums products of two reads of one half type over one
    reduction index, into a half or (mixed precision) a float32 tensor
    (what `poly-map-to-mma` runs as m16n8k16 `mma.sync` or m64nNk16 `wgmma`)."""
    rhs = layer.rhs
    if isinstance(rhs, A.Cast) and rhs.type == "float32":
        rhs = rhs.x
    if not (layer.op.startswith("+=") and len(layer.reduction_indices) == 1 and isinstance(rhs, A.Binary)):
        return False
    factors = (rhs.a, rhs.b)
    if rhs.op != "*" or not all(isinstance(f, A.Access) for f in factors):
        return False
    types = {definition.tensor(f.tensor).dtype for f in factors}  # pyright: ignore[reportAttributeAccessIssue]
    return len(types) == 1 and types <= set(HALF_TYPES)


def _half_mma_options(outer: list[int], rows: int, columns: int) -> MappingOptions:
    """`rows` x `columns` tiles of a half contraction on m16n8k16
    `mma.sync`: warps of 4 x 8 threads, each thread the accumulators of its
    warp's sub-tile, rows 8 apart and columns 4 apart: 128 x 128 x 32 tiles
    on 2 x 4 warps (64 accumulators), or, where those leave SMs idle,
    32 x 64 x 64 on 1 x 2 (32: twice the blocks of 64 x 64 tiles), or
    32 x 32 on one warp (split-K's slices). The
    operands' tiles are in shared memory (rows on 16-byte boundaries, read
    8 halves at once), filled by cp.async (16 bytes a copy)."""
    warps, k_tile = {128: ([2, 4], K_TILE), 32: ([1, columns // 32], 2 * K_TILE)}[rows]
    return MappingOptions(
        tile=[*outer, rows, columns, k_tile],
        threads=[4, 8],
        warps=warps,
        max_private_elements=(rows // warps[0] // 8) * (columns // warps[1] // 4),
        max_shared_memory=SMALL_HALF_TILE_SHARED if rows < 128 else DEFAULT.max_shared_memory,
        num_stages=3,
        async_copies=True,
        vector_width=HALF_VECTOR_WIDTH,
        copy_vector_width=HALF_VECTOR_WIDTH,
    )


SMALL_HALF_TILE_SHARED = 65536
"""Shared bytes allowed the 32 x 64 x 64 half tiles (double-buffered)."""
HALF_VECTOR_WIDTH = 8
"""16 bytes of a 16-bit type: a thread's loads and copies of half operands."""


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
    sizes = [binding.sizes[n] for n in definition.size_params]
    scatters = [s for s in definition.stmts if s.scatter is not None]
    if scatters:  # scatters add atomically, on every thread
        return _scatter_options(definition, sizes, scatters)
    if _embeddings(definition, sizes):
        widths = [evaluate(definition.tensor(s.lhs).dims[-1], sizes) for s in definition.stmts]
        x = max(1, min(max(widths), GATHER_ROW))
        return MappingOptions(tile=[1, x], threads=[x])
    spread = _spread_sum(definition, sizes)
    if spread is not None:
        return spread
    rows = _row_chain(definition)
    if rows is not None and _independent_rows(definition, sizes, rows):
        if len(definition.stmts) == 1 and _row_length(definition, sizes, rows) <= SHORT_ROW:
            return _short_rows_options(definition, sizes, rows)
        return _row_chain_options(definition, sizes, rows)
    column = _column_sum(definition)
    if column is not None:
        return _column_sum_options(definition, sizes, column)
    layer = _one_output_layer(definition)
    if layer is None:
        plane = _elementwise_chain(definition, sizes)
        if plane is not None and plane[-2] >= ELEMENTWISE_ROWS and plane[-1] >= ELEMENTWISE_COLUMNS:
            return _elementwise_options(plane)
        if _layer_chain(definition):
            if _short_chain(definition, sizes):
                return MappingOptions(fusion="outer", tile=[CHAIN_ROWS, 64], threads=[CHAIN_ROWS, 64])
            return WIDE_CHAIN
        return MappingOptions()
    extents = _extents(layer, sizes)
    out = [extents[i] for i in layer.lhs_indices]
    if any(e <= 0 for e in out):
        return MappingOptions()  # an empty output: nothing to tile
    reduction = math.prod(extents[i] for i in layer.reduction_indices)
    atomic = atomic_reduction(definition, layer)
    gradient = filter_gradient_options(layer, out, extents) if atomic else None
    if gradient is not None:
        return gradient
    if (
        atomic
        and len(layer.reduction_indices) == 1
        and math.prod(out) < SMALL_OUTPUT
        and reduction >= SPLIT_REDUCTION
        and not _reused_reads(layer, extents)
    ):
        slice_ = max(THREADS * POINTS_PER_THREAD, math.prod(out) * reduction // (4 * BLOCKS_TO_FILL_GPU))
        slice_ = -(-slice_ // THREADS) * THREADS
        return MappingOptions(parallel_reductions=True, tile=[*[1] * len(out), slice_], threads=[THREADS])
    convolution = convolution_image(layer)
    if convolution is not None and out[convolution.positions[0]] < CONVOLUTION_FILTERS // 4:
        convolution = None
    if convolution is not None and convolution.rows:
        if takes_plane(layer, convolution, out, definition.size_params):
            narrow = narrow_convolution_options(layer, convolution.image, out, extents)
            if narrow is not None:
                return narrow
        if out[convolution.positions[2]] >= CONVOLUTION_MIN_COLUMNS or convolution.filters_last:
            return convolution_options(layer, convolution, out, extents, definition.size_params)
    line = convolution if convolution is not None and not convolution.rows else None  # 1-D
    wide = layer.reduces and len(out) >= 2 and _wide_contraction(layer, out, reduction)
    if (layer.reduces and 2 <= len(out) <= 3 and reduction >= LARGE_REDUCTION) or (wide and len(out) <= 4):
        outer = [1] * (len(out) - 2)

        def grid(rows: int, columns: int) -> list[int]:
            """Blocks for the outermost three members when batched (a block per
            tile and batch entry, not a loop over the column tiles), else the
            pass's choice."""
            return mapped_grid([*out[:-2], -(-out[-2] // rows), -(-out[-1] // columns)]) if outer else []

        def blocks(tile: int, columns: int | None = None) -> int:  # of tile x columns outputs
            return math.prod(out[:-2]) * -(-out[-2] // tile) * -(-out[-1] // (columns or tile))

        def fills_gpu(tile: int, columns: int | None = None, times: int = 1) -> bool:
            return blocks(tile, columns) >= times * BLOCKS_TO_FILL_GPU

        # A ragged last k tile is staged in registers where its copies are
        # float4 groups (guarded: C3's 1000 points); with scalar copies it is
        # not (the defaults guide has C3's times).
        steps = extents[layer.reduction_indices[0]]
        whole = steps % K_TILE == 0

        def register_tiled(
            size: int, threads: list[int], private: int, asynchronous: bool, columns: int | None = None
        ) -> MappingOptions:
            shared = _double_buffered_bytes(max(size, columns or size))
            padded = pads_cheaply(out[-2:], [size, columns or size])
            # A thread's groups in a partial tile: its register tile's copy
            # out loops over them, and nvcc keeps it in local memory.
            whole_or_padded = padded or whole_tiles(size, columns or size)
            return MappingOptions(
                tile=[*outer, size, columns or size, K_TILE],
                pad_tiles=padded,
                blocks=grid(size, columns or size),
                threads=threads,
                size_per_thread=_size_per_thread(layer, size, columns or size, threads) if whole_or_padded else [],
                max_private_elements=private,
                max_shared_memory=max(DEFAULT.max_shared_memory, shared),
                num_stages=3,
                async_copies=asynchronous,
                vector_width=VECTOR_WIDTH,
                copy_vector_width=_copy_width(size, K_TILE, math.prod(threads)),
            )

        def whole_tiles(rows: int, columns: int) -> bool:  # every tile whole (wgmma's groups tile the output)
            return out[-2] % rows == 0 and out[-1] % columns == 0

        def edges(size: int) -> bool:
            """No partial `size`-row or -column tile but where one tile covers
            the dimension: ragged outputs run best on smaller tiles (see the
            defaults guide)."""
            return all(extent % size == 0 or extent < size for extent in out[-2:])

        def sliced(options: MappingOptions, tile: int) -> MappingOptions:
            """`options` with split-K where a one-statement 2-D sum on `tile`
            x `tile` blocks is short of `SPLIT_BLOCKS` blocks and long enough
            (a batch of 32 rows through a 4096 x 4096 layer)."""
            slices = min(MAX_SLICES, steps // (SLICE_TILES * K_TILE), -(-SPLIT_BLOCKS // blocks(tile)))
            if atomic and whole and len(out) == 2 and len(definition.stmts) == 1 and slices >= MIN_SLICES:
                return dataclasses.replace(options, split_k=slices)
            return options

        half = _half_contraction(definition, layer)
        if half and out[-2] % WGMMA_ROWS == 0 and steps % HALF_K_TILE == 0:
            tiles = [(2 * WGMMA_ROWS, 256)] if fills_gpu(2 * WGMMA_ROWS, 256, times=4) else []
            tiles += [(WGMMA_ROWS, c) for c in HALF_WGMMA_COLUMNS if fills_gpu(WGMMA_ROWS, c)]
            tiles = [t for t in tiles if whole_tiles(*t)] or [(WGMMA_ROWS, c) for c in HALF_WGMMA_COLUMNS[-1:] if whole_tiles(WGMMA_ROWS, c)]
            if tiles:
                return dataclasses.replace(_half_wgmma_options(outer, *tiles[0]), blocks=grid(*tiles[0]))
        mma = out[-2] % MMA_ROWS == 0 and out[-1] % MMA_COLUMNS == 0 and steps % MMA_POINTS == 0
        if mma and half:
            # Tiles of 32 x 64 where 128 x 128 leave SMs idle, if they fill half
            # of them; fewer blocks (an MLP's 128 x 128 outputs): split-K into
            # the f32 accumulators.
            for rows, columns in ((128, 128), (32, 64)):
                if fills_gpu(rows, columns) or (rows == 32 and 2 * blocks(rows, columns) >= BLOCKS_TO_FILL_GPU):
                    return dataclasses.replace(_half_mma_options(outer, rows, columns), blocks=grid(rows, columns))
            if len(out) == 2 and SPLIT_K <= reduction <= MAX_SPLIT_K and whole_tiles(WGMMA_ROWS, 16):
                # 64 x 16 wgmma tiles, slices of 256 points (the last k tile may be
                # ragged: one wgmma per 16 points there).
                options = _half_wgmma_options(outer, WGMMA_ROWS, 16)
                return dataclasses.replace(options, num_stages=3, split_k=-(-reduction // HALF_K_SLICE))
            if len(out) == 2 and SPLIT_K <= reduction <= MAX_SPLIT_K:
                return dataclasses.replace(
                    _half_mma_options(outer, 32, 32), tile=[32, 32, MMA_POINTS], split_k=-(-reduction // K_SLICE)
                )
        for rows, columns, filling in ((128, 128, 128), (64, 32, 32)) if allow_tf32 and whole else ():
            # Whole tiles, or padded to them where that adds little.
            padded = not whole_tiles(rows, columns) and pads_cheaply(out[-2:], [rows, columns])
            if fills_gpu(filling) and (whole_tiles(rows, columns) or padded):
                options = _wgmma_options(outer, rows, columns)
                return dataclasses.replace(options, blocks=grid(rows, columns), pad_tiles=padded)
        if out[-1] <= NARROW_OUTPUT and fills_gpu(128, NARROW_OUTPUT, times=2) and whole and edges(128):
            # 128x64 tiles, 8x8 a thread, where 128 columns would leave half of
            # them empty (blocks of 128 threads: two an SM at least).
            return register_tiled(128, [8, 16], 64, True, columns=NARROW_OUTPUT)
        if out[-1] > NARROW_OUTPUT and fills_gpu(128) and whole and edges(128):
            options = register_tiled(128, [16, 16], 64, True)
            if len(definition.stmts) != 1 or _transposed_operands(layer) != 1 or reduction < LARGE_REDUCTION:
                return options
            if any(_ends_in(read, layer.lhs_indices[-1]) for read in operand_reads(layer)) or out[-2] >= 128:
                # NN (`A(m, k) * B(k, n)`), or TT (`A(k, m) * B(n, k)`) whose
                # rows fill the tiles, and a long sum: groups of 4 rows and
                # columns a thread, read as float4s from tiles laid out along
                # them, `[k][m]` and `[k][n]` (see the defaults guide).
                groups = [SIZE_PER_THREAD, SIZE_PER_THREAD]
                return dataclasses.replace(options, size_per_thread=groups, transpose_copies=True)
            # TT on fewer rows than a tile (`A(k, m)`, read along k): its tile transposed to `[m][k]`.
            return dataclasses.replace(options, transpose_copies=True)
        if line is not None:  # short of whole 128x128 tiles
            return convolution_options(layer, line, out, extents, definition.size_params)
        medium = sliced(register_tiled(MEDIUM_TILE, [16, 8], 32, True), MEDIUM_TILE)
        if out[-1] > NARROW_OUTPUT and out[-2] >= MEDIUM_TILE and (
            blocks(MEDIUM_TILE) * medium.split_k >= (1 if medium.split_k > 1 else MEDIUM_BLOCKS_AN_SM) * BLOCKS_TO_FILL_GPU
        ):
            # 4x8 a thread, where 128x128 tiles would leave SMs idle (a 1000 x
            # 1000 output) or the last k tile is ragged (k rows of any length:
            # their copies scalar where not whole float4 groups), on three
            # quarters of a block an SM or more (a 128 x 4096 layer's 128
            # blocks, a 777 x 555 output's 117); a split sum's slices, on one
            # (a 256 x 256 output of 8192 points).
            return medium
        if out[-1] <= NARROW_OUTPUT and fills_gpu(NARROW_OUTPUT, times=1 if steps >= LONG_NARROW_SUM else 2):
            # 64x64 tiles, 8x4 a thread, where 128x64 would leave SMs with
            # one block (16384x64 outputs of 1024 products each); one block
            # an SM where the sum is long (a linear attention's 64x64 states).
            return register_tiled(NARROW_OUTPUT, [16, 8], 32, True, columns=NARROW_OUTPUT)
        if fills_gpu(32):
            # Whole k tiles staged in registers (tmm 128x1024x1024), a ragged
            # last tile by cp.async (C3, and k rows that are no whole float4
            # groups): what measured fastest for each (the defaults guide).
            return sliced(register_tiled(32, [16, 8], 16, not whole), 32)
        if atomic and len(out) == 2 and len(layer.reduction_indices) == 1 and reduction >= SPLIT_K:
            # A slice per `K_SLICE` points in k tiles of 16; past
            # `MAX_SPLIT_K` (a 64x64 covariance of 65536 samples), as many
            # slices as give `SPLIT_BLOCKS` blocks, in k tiles of 32.
            slices, k_tile = -(-reduction // K_SLICE), 16
            if reduction > MAX_SPLIT_K:
                slices, k_tile = min(slices, -(-SPLIT_BLOCKS // blocks(32))), K_TILE
            return MappingOptions(
                tile=[32, 32, k_tile],
                threads=[16, 8],
                max_private_elements=16,
                num_stages=3,
                async_copies=True,
                vector_width=VECTOR_WIDTH,
                copy_vector_width=_copy_width(32, k_tile, 16 * 8),
                split_k=slices,
            )
        if atomic and len(out) == 2 and len(layer.reduction_indices) >= 2 and reduction >= SPLIT_K:
            return _sliced_sum_options(layer, extents, blocks(32))
        return MappingOptions(tile=[*outer, 8, 32, 32], blocks=grid(8, 32), threads=[32, 8], num_stages=2)
    if line is not None:
        return convolution_options(layer, line, out, extents, definition.size_params)
    if len(out) < 2:  # a 1-D output that no rule above took: spread its sum where one read allows it
        return _spread_sum(definition, sizes, mixed=True) or MappingOptions()
    if not layer.reduces and out[-2] >= ELEMENTWISE_ROWS and out[-1] >= ELEMENTWISE_COLUMNS:
        return _elementwise_options(out)
    x = min(out[-1], INNER_THREADS)
    rows = out[-2] if out[-2] <= 2 * (MAX_THREADS // x) else min(out[-2], 2 * max(1, THREADS // x))
    y = rows // 2 if rows % 2 == 0 else rows
    if layer.reduces and rows % 4 == 0 and x * rows // 4 >= THREADS:
        # Sums of 32x32 outputs (batches of small matmuls): 4 rows a thread
        # where that still leaves 256 threads (the defaults guide).
        y = rows // 4
    tile = [1] * (len(out) - 2) + [rows, x]
    if len(out) >= 3 and layer.lhs_indices[-3] not in _indices_of_every_read(layer):
        tile[-3] = min(out[-3], REUSE_TILE)
        if len(out) >= 4 and layer.lhs_indices[-4] not in _indices_of_every_read(layer) and summed_shifts(layer):
            # A convolution that no template takes (3-D: `Y(n, f, d, h, w)`):
            # 2 filters a block, which read the same image points (the
            # defaults guide).
            tile[-4] = min(out[-4], GENERIC_CONVOLUTION_FILTERS)
    steps = extents[layer.reduction_indices[-1]] if layer.reduction_indices else 0
    vector = VECTOR_WIDTH if steps and steps % VECTOR_WIDTH == 0 else 1
    # A thread's points of the tile stay in registers (2 filters x 14 depths
    # x 2 rows of a 3-D convolution: 56).
    private = max(DEFAULT.max_private_elements, math.prod(tile) // (x * y))
    return MappingOptions(tile=tile, threads=[x, y], vector_width=vector, max_private_elements=private)


SCATTER_TILE = 64
"""Rows and columns of a block's tile (16 points a thread) of a scatter's 2-D
output of at least as many: the kernel that zeroes the output (a gradient
table's every row) keeps 16 stores a thread in flight."""


SLICED_ROWS = 128
"""Points of the innermost reduction indices that a block of a sliced sum
stages at a time (two rows of 56 pixels)."""


def _sliced_sum_options(layer: A.Stmt, extents: dict[str, int], output_blocks: int) -> MappingOptions:
    """A 2-D sum over several reduction indices whose 32x32 output tiles
    leave SMs idle (a 1x1 convolution's filter gradient, over images and
    pixels): 2x4 points a thread, the outermost reduction index dealt to
    slices of blocks (one value a step, as many slices as give four blocks
    an SM), the innermost ones staged `SLICED_ROWS` points at a time."""
    first, *middle, last = layer.reduction_indices
    inner = min(extents[last], SLICED_ROWS)
    steps = [1] * len(middle)
    if middle:
        steps[-1] = max(1, min(extents[middle[-1]], SLICED_ROWS // inner))
    slices = min(extents[first], -(-4 * BLOCKS_TO_FILL_GPU // output_blocks))
    return MappingOptions(tile=[32, 32, 1, *steps, inner], threads=[16, 8], max_private_elements=16, split_k=slices)


def _scatter_options(definition: A.CheckedDef, sizes: list[int], scatters: list[A.Stmt]) -> MappingOptions:
    """`parallel_reductions` (the scatters add atomically), on 64 x 64 tiles
    of 16 x 16 threads where every scatter's output is 2-D and that large."""
    shapes = [[evaluate(d, sizes) for d in definition.tensor(s.lhs).dims] for s in scatters]
    if all(len(shape) == 2 and min(shape) >= SCATTER_TILE for shape in shapes):
        threads = SCATTER_TILE // 4
        return MappingOptions(parallel_reductions=True, tile=[SCATTER_TILE, SCATTER_TILE], threads=[threads, threads])
    return MappingOptions(parallel_reductions=True)


def _elementwise_options(out: list[int]) -> MappingOptions:
    """8 x 128 tiles of the innermost two output dimensions, a warp a row."""
    tile = [1] * (len(out) - 2) + [ELEMENTWISE_ROWS, ELEMENTWISE_COLUMNS]
    return MappingOptions(tile=tile, threads=[INNER_THREADS, ELEMENTWISE_ROWS])


def _elementwise_chain(definition: A.CheckedDef, sizes: list[int]) -> list[int] | None:
    """The output extents shared by every statement of a def without
    reductions whose statements all write at the same indices over the same
    ranges (bias then GELU through a temporary), of 2 dimensions or more;
    else None."""
    first = definition.stmts[0]
    for stmt in definition.stmts:
        if stmt.reduces or stmt.lhs_indices != first.lhs_indices or stmt.ranges != first.ranges:
            return None
    if len(first.lhs_indices) < 2 or any(i not in first.ranges for i in first.lhs_indices):
        return None
    return [evaluate(first.ranges[i][1], sizes) - evaluate(first.ranges[i][0], sizes) for i in first.lhs_indices]


def _written_reads(stmt: A.Stmt, written: set[str]) -> list[A.Access]:
    """The reads of `stmt` of tensors that the def writes (not inputs)."""
    return [n for n in accesses(stmt.rhs) if n.tensor in written]


def _input_reads(stmt: A.Stmt, written: set[str]) -> list[A.Access]:
    """The reads of `stmt` of tensors not in `written`."""
    return [n for n in accesses(stmt.rhs) if n.tensor not in written]


def _is_index(e: A.Expr, name: str) -> bool:
    return isinstance(e, A.IndexVar) and e.name == name


def _transposed_operands(layer: A.Stmt) -> int:
    """How many operand reads of `layer` use its innermost reduction index
    elsewhere than in their last subscript (`B(k, n)`: not k-major)."""
    k = layer.reduction_indices[-1]
    return sum(k in index_names(read) and not _ends_in(read, k) for read in operand_reads(layer))


def _ends_in(read: A.Access, name: str) -> bool:
    """Whether `read`'s last subscript is the index `name` (threads along it read consecutive elements)."""
    return bool(read.subscripts) and _is_index(read.subscripts[-1], name)


def _extents(stmt: A.Stmt, sizes: list[int]) -> dict[str, int]:
    """The number of values of each index of `stmt`, in its ranges' order."""
    return {i: evaluate(hi, sizes) - evaluate(lo, sizes) for i, (lo, hi) in stmt.ranges.items()}


def _row_extents(stmt: A.Stmt, sizes: list[int], rows: int) -> list[int]:
    """The extents of `stmt`'s first `rows` left-hand indices, in its ranges' order."""
    return [e for i, e in _extents(stmt, sizes).items() if i in stmt.lhs_indices[:rows]]


def _row_reuse(definition: A.CheckedDef, sizes: list[int], rows: int) -> float:
    """How many times more elements a row reads from tensors that other rows
    read too (a read missing one of the row's indices: a matmul's operands)
    than from its own (reads at the row, and its outputs)."""
    own, shared = 1, 0
    for stmt in definition.stmts:
        extents = _extents(stmt, sizes)
        row = set(stmt.lhs_indices[:rows])
        own = max(own, math.prod(extents[i] for i in stmt.lhs_indices[rows:]))
        for read in _input_reads(stmt, set()):
            names = index_names(read) & set(extents)
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
    reduces, none that reduces gathers (a cross-entropy's gathered target
    logit is one read of a row); and each reduction's innermost reduction index
    is the last subscript of one of its reads, and of every read at the
    row that it indexes, so that threads spread over a row read consecutive
    elements. None where the def is not such a chain."""
    stmts = definition.stmts
    k = min(len(s.lhs_indices) for s in stmts)
    if k == 0 or not any(s.reduces for s in stmts) or any(s.reduces and gathers(s.rhs) for s in stmts):
        return None
    written = {s.lhs for s in stmts}
    for stmt in stmts:
        row = stmt.lhs_indices[:k]
        for read in _written_reads(stmt, written):
            if len(read.subscripts) < k or not all(_is_index(e, i) for e, i in zip(read.subscripts, row)):
                return None
        if stmt.reduces:
            last = stmt.reduction_indices[-1]
            reads = _input_reads(stmt, set())
            if not any(_ends_in(r, last) for r in reads):
                return None
            if any(
                {last, *row} <= index_names(r) and not _ends_in(r, last) for r in reads
            ):  # a row of a matrix read down its columns: `y(n) +=! A(k, n) * x(k)`
                return None
    return k


ROW_REUSE = 4
"""Most elements a row of a row-wise chain may read that other rows read too,
per element of its own (a norm's weights: 1 or 2; a matmul's operands: a
row per output point reads whole rows of both, and is no such chain)."""


def _independent_rows(definition: A.CheckedDef, sizes: list[int], rows: int) -> bool:
    """Whether a block per row pays: rows enough to give every SM blocks,
    rows of three dimensions at most (a grid's) and a warp's points at
    least (shorter sums stay in one thread: a depthwise convolution's 9
    taps), each row reading mostly its own elements."""
    if rows > 3 or _row_length(definition, sizes, rows) < INNER_THREADS:
        return False
    count = math.prod(_row_extents(definition.stmts[0], sizes, rows))
    return count >= BLOCKS_TO_FILL_GPU and _row_reuse(definition, sizes, rows) <= ROW_REUSE


def default_partition(definition: A.CheckedDef, binding: Binding) -> list[list[int]] | None:
    """Groups of statements that the default mapping lowers apart (see
    `tcir.compiler.partition`), or None: in a row-wise chain whose rows read
    much of what other rows read (attention), each wide contraction (with
    the statements after it that rescale its output in place) apart from
    the row-wise statements between them, which keep a block per row; so
    too in a def of several tensors that is no row-wise chain
    (`_layer_groups`). Copies that end the def into an output's layout
    (`_trailing_transposes`) are parts of their own after the rest's."""
    copies = _trailing_transposes(definition)
    if copies:  # the def before them as it would be alone, then each copy apart
        core = dataclasses.replace(definition, stmts=definition.stmts[: len(definition.stmts) - copies])
        groups = default_partition(core, binding) or [list(range(len(core.stmts)))]
        return groups + [[k] for k in range(len(core.stmts), len(definition.stmts))]
    sizes = [binding.sizes[n] for n in definition.size_params]
    rows = _row_chain(definition)
    if rows is None or not _independent_rows(definition, sizes, rows) and _unrelated_tensors(definition):
        return _layer_groups(definition, binding, sizes)
    if _row_reuse(definition, sizes, rows) <= ROW_REUSE:
        return None
    return _contraction_groups(definition, sizes)


def _trailing_transposes(definition: A.CheckedDef) -> int:
    """How many statements end `definition` that copy a temporary it writes
    before them into an output in another order (`O(b,l,h,d) =
    O_laid_out(b,h,l,d)`, as `contraction_layouts` writes them)."""
    temporaries = {p.name for p in definition.temporaries}
    count = 0
    for stmt in reversed(definition.stmts[1:]):
        read = stmt.rhs
        if not (
            stmt.op == "=" and isinstance(read, A.Access) and read.tensor in temporaries
            and all(isinstance(e, A.IndexVar) for e in read.subscripts)
            and sorted(e.name for e in read.subscripts) == sorted(stmt.lhs_indices)  # pyright: ignore[reportAttributeAccessIssue]
            and [e.name for e in read.subscripts] != stmt.lhs_indices  # pyright: ignore[reportAttributeAccessIssue]
        ):
            break
        count += 1
    return count


def _unrelated_tensors(definition: A.CheckedDef) -> bool:
    """Whether no statement reads a tensor that another tensor's statements
    write (a derived backward's gradients of each input)."""
    written = {s.lhs for s in definition.stmts}
    return not any(r.tensor != s.lhs for s in definition.stmts for r in _written_reads(s, written))


def _layer_groups(definition: A.CheckedDef, binding: Binding, sizes: list[int]) -> list[list[int]] | None:
    """Groups of a def of several tensors with a reduction, not a row-wise
    chain, that no template maps whole (its default would be the plain
    mapping, or a chain of layers too wide for one kernel): a transformer's
    feed-forward block (a linear layer, GELU, another linear layer), batch
    normalization in training (the statistics, then the normalized images).
    Each tensor's statements apart, as PyTorch runs an operator per tensor,
    each part then taking its own template (register tiles, spread sums,
    elementwise tiles)."""
    if _one_output_layer(definition) is not None or not any(s.reduces for s in definition.stmts):
        return None
    scatters = any(s.scatter is not None for s in definition.stmts)
    if not scatters and _default_options(definition, binding, False) not in (MappingOptions(), WIDE_CHAIN):
        return None
    groups: list[list[int]] = []
    for k, stmt in enumerate(definition.stmts):
        if groups and definition.stmts[groups[-1][-1]].lhs == stmt.lhs:
            groups[-1].append(k)
        else:
            groups.append([k])
    return groups if len(groups) > 1 else None


def _short_chain(definition: A.CheckedDef, sizes: list[int]) -> bool:
    """Whether a chain of layers runs in one kernel (`CHAIN_WIDTH`)."""
    shapes = [[evaluate(d, sizes) for d in p.dims] for p in definition.outputs]
    batch, widest = min(s[0] for s in shapes), max(s[1] for s in shapes)
    return widest <= CHAIN_WIDTH and -(-batch // CHAIN_ROWS) >= CHAIN_BLOCKS


def _contraction_groups(definition: A.CheckedDef, sizes: list[int]) -> list[list[int]] | None:
    """Each wide contraction with the statements after it that update its
    output in place, apart from the statements between them; None where
    that leaves one group."""
    groups: list[list[int]] = []
    contraction: A.Stmt | None = None
    for k, stmt in enumerate(definition.stmts):
        extents = _extents(stmt, sizes)
        out = [extents[i] for i in stmt.lhs_indices]
        reduction = math.prod(extents[i] for i in stmt.reduction_indices)
        if stmt.reduces and len(out) >= 2 and _wide_contraction(stmt, out, reduction):
            contraction = stmt
            groups.append([k])
        elif contraction is not None and (stmt.lhs, stmt.lhs_indices) == (contraction.lhs, contraction.lhs_indices):
            groups[-1].append(k)  # the contraction's epilogue
        else:
            if contraction is not None or not groups:
                groups.append([])
            contraction = None
            groups[-1].append(k)
    return groups if len(groups) > 1 else None


ROW_THREADS = 1024
"""Most threads of a block that reduces one row (all a block may have: a
long row's share of a thread then stays within `MAX_PRIVATE_ELEMENTS_A_ROW`
registers, as a vocabulary's 50257 points do)."""
ROW_SHARE = 16
"""Points of a row each of its threads takes, where the row is short enough
for fewer than `ROW_THREADS` threads (a power of two of them, a warp at
least): fewer threads a row, more rows at once on an SM."""


def _longest_row(definition: A.CheckedDef, sizes: list[int], rows: int) -> list[int]:
    """The extents of a row's dimensions (outermost first) in the statement
    of a row-wise chain that has the most points in one row."""
    longest: list[int] = []
    for stmt in definition.stmts:
        extents = _extents(stmt, sizes)
        row = [extents[i] for i in [*stmt.lhs_indices[rows:], *stmt.reduction_indices]]
        if math.prod(row) > math.prod(longest):
            longest = row
    return longest


def _row_length(definition: A.CheckedDef, sizes: list[int], rows: int) -> int:
    """The most points a statement of a row-wise chain has in one row."""
    return math.prod(_longest_row(definition, sizes, rows))


def _row_chain_options(definition: A.CheckedDef, sizes: list[int], rows: int) -> MappingOptions:
    """A block per row, its threads spread over the row, the reductions
    combined across them (`block_reductions`): the whole chain in one kernel;
    rows short enough for a warp go `WARP_ROWS_A_BLOCK` to a block.
    Rows of several dimensions take a grid of as many (x the innermost), and
    a row of several dimensions shorter than the block in the innermost one
    (an image's plane) spreads them over the next one too."""
    row = _longest_row(definition, sizes, rows)
    longest = math.prod(row)
    first = definition.stmts[0]
    extents = _row_extents(first, sizes, rows)
    grid = mapped_grid(extents) if rows > 1 else []
    share = -(-longest // ROW_SHARE)
    threads = min(ROW_THREADS, max(INNER_THREADS, 1 << (share - 1).bit_length()))
    private = min(MAX_PRIVATE_ELEMENTS_A_ROW, max(DEFAULT.max_private_elements, -(-longest // threads)))
    if len(row) > 1 and row[-1] < threads:
        return MappingOptions(
            blocks=grid, threads=[row[-1], min(row[-2], threads // row[-1])], block_reductions=True, max_private_elements=private
        )
    tiled = [k for k, extent in enumerate(extents) if extent >= WARP_ROWS_A_BLOCK]
    if threads == INNER_THREADS and tiled and math.prod(extents) >= WARP_ROWS_A_BLOCK * BLOCKS_TO_FILL_GPU:
        # A warp a row, `WARP_ROWS_A_BLOCK` rows a block (thread y) along the
        # innermost row dimension that has as many: more rows at once on an
        # SM than a block each allows.
        k = tiled[-1]
        tiles = [-(-e // WARP_ROWS_A_BLOCK) if j == k else e for j, e in enumerate(extents)]
        return MappingOptions(
            tile=[WARP_ROWS_A_BLOCK if j == k else 1 for j in range(rows)],
            blocks=mapped_grid(tiles),
            threads=[INNER_THREADS, WARP_ROWS_A_BLOCK],
            block_reductions=True,
            max_private_elements=private,
        )
    return MappingOptions(blocks=grid, threads=[threads], block_reductions=True, max_private_elements=private)


WARP_ROWS_A_BLOCK = 4
"""Rows of a block where a warp takes each (rows of up to `INNER_THREADS *
ROW_SHARE` points, and enough of them to give the GPU that many blocks)."""


SHORT_ROW = 64
"""Points of a row up to which a one-statement row-wise sum runs a thread
per row (a block per row would leave most of its threads idle: a global
average pool's 7x7 rows)."""
SHORT_ROWS_A_BLOCK = 128
"""Rows (threads) of a block where rows are short."""


def _short_rows_options(definition: A.CheckedDef, sizes: list[int], rows: int) -> MappingOptions:
    """A thread per row, `SHORT_ROWS_A_BLOCK` rows of the innermost row
    dimension a block: each thread runs the whole chain on its row."""
    first = definition.stmts[0]
    extents = _row_extents(first, sizes, rows)
    x = max(1, min(extents[-1], SHORT_ROWS_A_BLOCK))
    return MappingOptions(tile=[*[1] * (rows - 1), x], threads=[x])


MAX_PRIVATE_ELEMENTS_A_ROW = 64
"""Registers a thread may keep of its share of a row (a softmax's exponentials)."""


def _column_sum(definition: A.CheckedDef) -> A.Stmt | None:
    """The sum of a def whose one output sums its inputs along outer
    dimensions (`S(n) +=! X(b, n)`, also `y(n) +=! A(k, n) * x(k)`): every
    read's last subscript is the output's innermost index (none depends on a
    reduction index there), or the read depends on no output index (a vector
    that every thread reads alike)."""
    layer = _one_output_layer(definition)
    if layer is None or not layer.reduces or not layer.lhs_indices or not atomic_reduction(definition, layer):
        return None
    inner, outputs = layer.lhs_indices[-1], set(layer.lhs_indices)
    reads = _input_reads(layer, {layer.lhs})
    along = [r for r in reads if _ends_in(r, inner)]
    if not along or any(r not in along and index_names(r) & outputs for r in reads):
        return None
    return layer


SPREAD_BLOCKS = 8 * BLOCKS_TO_FILL_GPU
"""Blocks over which a sum of several reduction dimensions into a small
output is spread."""


def _spread_sum(definition: A.CheckedDef, sizes: list[int], mixed: bool = False) -> MappingOptions | None:
    """A sum over several reduction dimensions into an output too small to
    fill the GPU (per-channel statistics of NCHW images, `S(c) +=! X(n, c,
    h, w)`), whose reads all end in its innermost reduction index (with
    `mixed`, one of them: a channel scale's gradient reads channels-last and
    NCHW images alike): the reduction spread over about `SPREAD_BLOCKS`
    blocks (`parallel_reductions`), each a tile holding the innermost
    reduction dimensions whole as far as it can, its threads along the
    innermost two (coalesced), partial sums added atomically; None for other
    defs."""
    layer = _one_output_layer(definition)
    if layer is None or len(layer.reduction_indices) < 2 or not atomic_reduction(definition, layer):
        return None
    extents = _extents(layer, sizes)
    out = math.prod(extents[i] for i in layer.lhs_indices)
    reduced = [extents[i] for i in layer.reduction_indices]
    inner = layer.reduction_indices[-1]
    reads = [r for r in _input_reads(layer, {layer.lhs}) if index_names(r) & set(layer.reduction_indices)]
    if (
        out >= SMALL_OUTPUT
        or math.prod(reduced) < THREADS * POINTS_PER_THREAD
        or not reads
        or not (any if mixed else all)(_ends_in(r, inner) for r in reads)
    ):
        return None
    points = max(THREADS * POINTS_PER_THREAD, out * math.prod(reduced) // SPREAD_BLOCKS)
    tile, held = [1] * len(reduced), 1
    for k in reversed(range(len(reduced))):
        tile[k] = min(reduced[k], max(1, points // held))
        held *= tile[k]
        if tile[k] < reduced[k]:
            break
    x = min(tile[-1], THREADS)
    y = largest_divisor(tile[-2], max(1, 2 * THREADS // x))
    return MappingOptions(parallel_reductions=True, tile=[*[1] * len(layer.lhs_indices), *tile], threads=[x, y])


COLUMN_ROWS = 32
"""Fewest reduction points each thread of a column sum adds up."""


def _column_sum_options(definition: A.CheckedDef, sizes: list[int], stmt: A.Stmt) -> MappingOptions:
    """Threads along the output's innermost dimension (coalesced reads), the
    reduction split over blocks (split-K, partial sums added atomically)
    until about four blocks an SM run."""
    extents = _extents(stmt, sizes)
    out = [extents[i] for i in stmt.lhs_indices]
    reduction = math.prod(extents[i] for i in stmt.reduction_indices)
    threads = min(THREADS, max(INNER_THREADS, -(-out[-1] // INNER_THREADS) * INNER_THREADS))
    tiles = math.prod(out[:-1]) * -(-out[-1] // threads)
    slices = max(1, min(-(-4 * BLOCKS_TO_FILL_GPU // tiles), reduction // COLUMN_ROWS))
    slice_ = -(-reduction // slices)
    tile = [*[1] * (len(out) - 1), threads, slice_, *[1] * (len(stmt.reduction_indices) - 1)]
    return MappingOptions(tile=tile, threads=[threads], split_k=-(-reduction // slice_))


NARROW_OUTPUT = 64
"""Columns of a contraction's output up to which its tiles are 128x64 (an
attention's weighted values over 64 features)."""
MEDIUM_TILE = 64
"""Rows and columns of a contraction's register tiles where 128x128 ones
would leave SMs idle."""
MEDIUM_BLOCKS_AN_SM = 0.75
"""Unsplit 64x64 tiles a contraction takes from this many a block an SM
(most SMs one, against 32x32 tiles' four)."""
LONG_NARROW_SUM = 1024
"""Points of a sum from which a narrow output's 64x64 tiles may give one
block an SM (not two) rather than fall to 32x32 tiles."""
WIDE_OUTPUT = 64
"""Rows and columns of a contraction's output from which tiles of it in
registers pay even for a short reduction (a batched 256x256 matmul)."""
WIDE_MIN_POINTS = 8
"""Fewest points of such a reduction: an outer product of 8 or 16 points
writes its output from register tiles too (the defaults guide)."""


def _wide_contraction(layer: A.Stmt, out: list[int], reduction: int) -> bool:
    """Whether `layer` sums products of two reads over at least
    `WIDE_MIN_POINTS` points into an output whose last two dimensions are
    both `WIDE_OUTPUT` or more, each read missing one of those two indices
    (each operand is reused along the other's dimension)."""
    reads = operand_reads(layer)
    if reduction < WIDE_MIN_POINTS or min(out[-2:]) < WIDE_OUTPUT or len(reads) != 2:
        return False
    rows, columns = layer.lhs_indices[-2:]
    used = [index_names(r) for r in reads]
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
    extents = _extents(stmt, sizes)
    return math.prod(extents[i] for i in stmt.reduction_indices)


def atomic_reduction(definition: A.CheckedDef, stmt: A.Stmt) -> bool:
    """Whether `poly-parallel-reduction` may combine `stmt`'s reduction (a
    sum, maximum or minimum) by atomics."""
    return (
        stmt.op.startswith(ATOMIC_UPDATES)
        and stmt.reduces
        and definition.tensor(stmt.lhs).dtype in ATOMIC_DTYPES
    )


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


def _reused_reads(stmt: A.Stmt, extents: dict[str, int]) -> bool:
    """Whether every operand of `stmt`'s products misses an output index
    of `REUSE_TILE` points or more, so that a tile of outputs reads each of
    its elements for several (a matmul's, not a matrix-vector product's)."""
    reads = operand_reads(stmt)
    return len(reads) >= 2 and all(
        any(i not in index_names(read) and extents[i] >= REUSE_TILE for i in stmt.lhs_indices) for read in reads
    )


def _indices_of_every_read(stmt: A.Stmt) -> set[str]:
    """The indices that every tensor read by `stmt` (but its own output) depends on."""
    used = [index_names(read) for read in operand_reads(stmt)]
    return set.intersection(*used) if used else set(stmt.lhs_indices)
