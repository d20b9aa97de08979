"""Contractions of mapped scops as warpgroup-level `wgmma` (sm_90): TF32, f16, bf16.

A statement `C[.., i, j] += X[.., i, k] * Y[.., j, k]` of a kernel whose
block is `threads = [4, 8]` with `warps = [1, W]` (W a multiple of 4) owns,
per thread (x, y, z), the rows `16z + y` and `16z + y + 8` of the block's
tile and its columns `j ≡ x (mod 4)` (`poly-map-to-gpu`'s sub-tiles of 16
rows, dealt round-robin): the accumulators of `wgmma` m64nNk8 of the
warpgroup z / 4 (its warp z mod 4, lane 4y + x), N the tile's columns,
once the tile's columns are listed j0, j0+4, j0+1, j0+5, ... (the rows of
Y's shared tile are kept in that order: `SIGMA`). K, the k of one `wgmma`,
is 32 bytes of the operands' type: 8 f32 (TF32 products) or 16 halves.

`rewrite` makes one instance per thread and k step, the leader `(i, j, k)`
of `i mod 16 < 8`, `j mod N < 4`, `k mod K = 0`, do its thread's 2 x N/4 x K
instances by one `nvgpu.warpgroup.mma` of its warpgroup: A the 64 rows of
X's shared tile from row `i - i mod 64`, B the N rows of Y's from `j - j mod
N`, both at `k`. Both tiles then have rows of 128 bytes (32 f32 or 64
halves: the k tile) in the 128-byte swizzle; or, for a half tile whose rows
run along k (MN-major, `transposeA`/`transposeB`), 64 rows of the k tile
stored a 128-byte column block at a time, Y's columns in order and the
output's relisted instead (`_relisted_columns`). It does so only where that is exact: the groups
tile the statement's domain (a box), lie in one iteration of every loop
around the copies of the tiles, the 128 threads of each warpgroup run its
`wgmma` and each thread's accumulators are those the hardware gives it.
"""

from __future__ import annotations

from dataclasses import dataclass

import islpy as isl
from xdsl.dialects.builtin import AffineMapAttr, DictionaryAttr, IntegerAttr, MemRefType, StringAttr
from xdsl.ir import Attribute, BlockArgument, Region, SSAValue
from xdsl.ir.affine import AffineDimExpr, AffineExpr, AffineMap

from tcir.dialects.nvgpu import (
    SWIZZLE_BYTES,
    WGMMA_K_BYTES,
    WGMMA_M,
    SwizzleLayoutAttr,
    WarpgroupGenerateDescriptorOp,
    WarpgroupMmaOp,
    element_bytes,
)
from tcir.dialects.poly import ScopOp, StmtOp
from tcir.dialects.tc import ReadOp, UpdateOp
from tcir.ir.float_types import is_half
from tcir.lowering.tc_point import PROMOTED, PROMOTED_MAP, PROMOTED_SYMBOLS
from tcir.polyhedral.bands import value_bounds
from tcir.polyhedral.mma import (
    Contraction,
    contraction,
    groups_fit,
    instance_set,
    iterator_names,
    mapping_of,
    new_body,
    on_iterators,
    replace_statement,
    shifted,
    shifted_read,
    shifted_write,
    thread_extent,
    warp_of,
)
from tcir.polyhedral.promotion.affine import affine_map_to_isl
from tcir.polyhedral.promotion.promote import BUFFERS, PRIVATE_SPACE, SHARED_SPACE

WARPGROUP = 128
"""Threads of a warpgroup: 4 consecutive warps."""
ROWS_PER_WARP = 16
"""Rows of a warp's accumulators (g and g + 8)."""


@dataclass(frozen=True)
class WarpgroupLayout:
    """The row and column iterators of a contraction's `wgmma`s, the tile's
    columns N, the shared buffers of its operands and their element type."""

    row: int
    column: int
    n: int
    a_buffer: str
    b_buffer: str
    element: Attribute
    k: int
    """The k of a leader's `nvgpu.warpgroup.mma`: a k tile's whole row where
    its groups tile the statement, else one instruction's."""
    transposes: tuple[bool, bool] = (False, False)
    """Whether X's and Y's tiles are MN-major: k along their rows."""
    m: int = 0
    """X's tile's rows (the block's)."""

    @property
    def row_elements(self) -> int:
        """Elements of a row of the swizzled tiles: the k extent of a tile."""
        return SWIZZLE_BYTES // element_bytes(self.element)


def _extents(op: ReadOp, stmt: StmtOp) -> list[tuple[int, int]] | None:
    """The least and greatest buffer index, per dimension, of a promoted read."""
    index = op.attributes.get(PROMOTED_MAP)
    if not isinstance(index, AffineMapAttr):
        return None
    names = op.attributes.get(PROMOTED_SYMBOLS)
    symbols = [s.data for s in names.data] if names is not None else []  # pyright: ignore[reportAttributeAccessIssue]
    values = isl.Set(stmt.domain.data).apply(isl.Map.from_multi_aff(affine_map_to_isl(index.data, stmt.sym_name.data, symbols)))
    result = []
    for k in range(values.dim(isl.dim_type.set)):
        one = values.project_out(isl.dim_type.set, k + 1, values.dim(isl.dim_type.set) - k - 1).project_out(isl.dim_type.set, 0, k)
        bounds = value_bounds(isl.UnionSet.from_set(one.project_out(isl.dim_type.param, 0, one.dim(isl.dim_type.param))))
        if bounds is None:
            return None
        result.append(bounds)
    return result


def _shared_tile(
    op: ReadOp | None, stmt: StmtOp, buffers: dict[str, object], along: int, reduction: int
) -> tuple[str, int, bool] | None:
    """The shared buffer of an operand read whose indices cover R indices
    along iterator `along` from 0 and 128 bytes along `reduction` exactly,
    with R and whether it is MN-major: K-major, rows along `along` and
    columns along `reduction`; or, for half types, MN-major, rows along
    `reduction` and columns along `along`, R a multiple of 128 bytes. Else
    None."""
    name = op.attributes.get(PROMOTED) if op is not None else None
    index = op.attributes.get(PROMOTED_MAP) if op is not None else None
    if op is None or not isinstance(name, StringAttr) or not isinstance(index, AffineMapAttr):
        return None
    *_, rows, columns = index.data.results
    k_major = along in rows.used_dims() and reduction not in rows.used_dims() and columns.used_dims() == {reduction}
    mn_major = along in columns.used_dims() and reduction not in columns.used_dims() and rows.used_dims() == {reduction}
    kind = buffers.get(name.data)
    if not isinstance(kind, MemRefType) or kind.memory_space != IntegerAttr(SHARED_SPACE, 64) or len(kind.shape) < 2:
        return None
    if not k_major and not (mn_major and is_half(kind.element_type)):
        return None
    extents = _extents(op, stmt)
    row = SWIZZLE_BYTES // element_bytes(kind.element_type)
    if extents is None or any(low != high for low, high in extents[:-2]):
        return None
    k_extent, other = (extents[-1], extents[-2]) if k_major else (extents[-2], extents[-1])
    if k_extent != (0, row - 1) or other[0] != 0 or (mn_major and (other[1] + 1) % row):
        return None
    return name.data, other[1] + 1, not k_major


def layout(found: Contraction, scop: ScopOp) -> WarpgroupLayout | None:
    """Where `found`'s `wgmma`s lie, if its mapping fits them (see the module)."""
    stmt = found.stmt
    mapped = mapping_of(stmt, scop)
    buffers = scop.attributes.get(BUFFERS)
    if mapped is None or not isinstance(buffers, DictionaryAttr):
        return None
    owned, chain, context = mapped
    x, y, z = (thread_extent(context, f"thread_{d}") for d in "xyz")
    if x != 4 or y != 8 or z is None or z % (WARPGROUP // 32):
        return None
    domain = isl.Set(stmt.domain.data)
    params = ["thread_x", "thread_y", "thread_z"]
    in_range = f"0 <= thread_x < {x} and 0 <= thread_y < {y} and 0 <= thread_z < {z}"
    owned = owned.intersect(domain).intersect_params(instance_set(stmt, params, in_range).params())
    groups_of = warp_of(owned, x, y, WARPGROUP)
    names = iterator_names(stmt)
    for row in sorted(found.outputs):
        for column in sorted(found.outputs - {row}):
            a = _shared_tile(found.operand_of(row), stmt, dict(buffers.data), row, found.reduction)
            b = _shared_tile(found.operand_of(column), stmt, dict(buffers.data), column, found.reduction)
            if a is None or b is None or a[0] == b[0]:
                continue
            (a_buffer, rows, a_transposed), (b_buffer, n, b_transposed) = a, b
            if rows != ROWS_PER_WARP * z or n % 8 or n > 256:
                continue
            if b_transposed and _relisted_columns(scop, found, column) is None:
                continue
            lanes = instance_set(
                stmt, params,
                f"(thread_x + 4 * thread_y + 32 * thread_z) mod {WARPGROUP} = "
                f"32 * floor(({names[row]} mod 64) / 16) + 4 * ({names[row]} mod 8) + ({names[column]} mod 4)",
            )  # fmt: skip
            element = found.reads[0].tensor_type.scalar_type
            for k in (SWIZZLE_BYTES, WGMMA_K_BYTES):  # one commit and wait a k tile where its groups fit
                at = WarpgroupLayout(
                    row, column, n, a_buffer, b_buffer, element, k // element_bytes(element),
                    (a_transposed, b_transposed), rows,
                )  # fmt: skip
                if not owned.intersect(leaders(found, at)).is_subset(lanes.intersect(domain)):
                    continue
                if groups_fit(found, _groups(found, at), _same_mma(found, at), chain, groups_of):
                    return at
    return None


def leaders(found: Contraction, at: WarpgroupLayout) -> isl.Set:
    """The instances that issue the `wgmma`s, one per thread and k step."""
    names = iterator_names(found.stmt)
    row, column, k = names[at.row], names[at.column], names[found.reduction]
    condition = f"{row} mod 16 < 8 and {column} mod {at.n} < 4 and {k} mod {at.k} = 0"
    return isl.Set(found.stmt.domain.data).intersect(instance_set(found.stmt, [], condition))


def _related(found: Contraction, at: WarpgroupLayout, condition: str) -> isl.Map:
    """Leader -> instances of the same other iterators under `condition`
    (on r', c', k' and the leader's row, column, k)."""
    names = iterator_names(found.stmt)
    target = list(names)
    target[at.row], target[at.column], target[found.reduction] = "r'", "c'", "k'"
    row, column, k = names[at.row], names[at.column], names[found.reduction]
    stmt = found.stmt.sym_name.data
    text = condition.format(row=row, column=column, k=k, n=at.n, steps=at.k)
    return isl.Map(f"{{ {stmt}[{', '.join(names)}] -> {stmt}[{', '.join(target)}] : {text} }}")


def _groups(found: Contraction, at: WarpgroupLayout) -> isl.Map:
    """Leader -> the instances its `wgmma` does for its thread."""
    relation = _related(
        found, at,
        "(r' = {row} or r' = {row} + 8) and (c' - {column}) mod 4 = 0 and {column} <= c' < {column} + {n} "
        "and {k} <= k' < {k} + {steps}",
    )  # fmt: skip
    return relation.intersect_domain(leaders(found, at))


def _same_mma(found: Contraction, at: WarpgroupLayout) -> isl.Map:
    """Leader -> the leaders of the other threads of its `wgmma`."""
    relation = _related(found, at, "floor(r' / 64) = floor({row} / 64) and floor(c' / {n}) = floor({column} / {n}) and k' = {k}")
    return relation.intersect_domain(leaders(found, at)).intersect_range(leaders(found, at))


def sigma(r: AffineExpr) -> AffineExpr:
    """The row of Y's shared tile that holds the tile's column `r`: columns
    8q + t and 8q + t + 4 (t < 4) at rows 8q + 2t and 8q + 2t + 1, so that
    `wgmma`'s columns 2t, 2t + 1 of each 8 are thread t's columns t, t + 4."""
    return (r // 8) * 8 + (r % 4) * 2 + (r % 8) // 4


@dataclass(frozen=True)
class _Relisted:
    """A statement whose global accesses take `sigma` of iterator `column`."""

    stmt: StmtOp
    column: BlockArgument
    accesses: tuple[ReadOp | UpdateOp, ...]


def _relisted_columns(scop: ScopOp, found: Contraction, column: int) -> list[_Relisted] | None:
    """The statements to relist where Y's tile is MN-major, else None.

    Its tile's columns then stay in order, and `wgmma` gives thread t the
    columns 8q + 2t, 8q + 2t + 1 of each 8 where the mapping gave it 8q + t,
    8q + t + 4: the accumulators' tile column j holds the output's column
    `sigma(j)`. So every other statement that moves a private tile (indexed
    by its last subscript, a plain iterator, as the contraction's output is
    by its column) reads and writes its other tensors, in global or shared
    memory, at `sigma` of that iterator (the tiles of a block hold whole
    groups of 8 columns). None where the accumulators are not a private
    tile or the output's last subscript is not the column."""
    stmt = found.stmt
    if on_iterators(found.update, len(stmt.body.block.args)).results[-1] != AffineExpr.dimension(column):
        return None
    buffers = scop.attributes.get(BUFFERS)
    assert isinstance(buffers, DictionaryAttr)
    spaces = {name: kind.memory_space for name, kind in buffers.data.items() if isinstance(kind, MemRefType)}
    private = IntegerAttr(PRIVATE_SPACE, 64)
    accumulators = found.update.attributes.get(PROMOTED)
    if not isinstance(accumulators, StringAttr) or spaces.get(accumulators.data) != private:
        return None
    relisted = []
    for other, accesses in _moving_the_tile(scop, stmt, accumulators.data, spaces):
        space = {op: spaces.get(name.data) if isinstance(name := op.attributes.get(PROMOTED), StringAttr) else None for op in accesses}
        tiles = [op for op in accesses if space[op] == private]
        columns = set()
        for op in tiles:
            last = op.map.data.results[-1] if op.map.data.results else None
            if not isinstance(last, AffineDimExpr):
                return None
            columns.add(op.subscript_operands[last.position])
        (iterator, *more) = columns
        if more or not isinstance(iterator, BlockArgument):
            return None
        moved = tuple(op for op in accesses if space[op] != private)
        if moved:
            relisted.append(_Relisted(other, iterator, moved))
    return relisted


def _moving_the_tile(
    scop: ScopOp, stmt: StmtOp, accumulators: str, spaces: dict[str, Attribute]
) -> list[tuple[StmtOp, list[ReadOp | UpdateOp]]]:
    """The statements other than `stmt` that access the private buffer
    `accumulators` or, in turn, a private buffer such a statement accesses
    (the output's tile rounded, then copied out), with their accesses."""
    private = IntegerAttr(PRIVATE_SPACE, 64)
    accesses = {
        other: [op for op in other.body.walk() if isinstance(op, ReadOp | UpdateOp)]
        for other in scop.statements
        if other is not stmt
    }

    def tiles(other: StmtOp) -> set[str]:
        names = (op.attributes.get(PROMOTED) for op in accesses[other])
        return {name.data for name in names if isinstance(name, StringAttr) and spaces.get(name.data) == private}

    linked, found = {accumulators}, []
    while True:
        more = [other for other in accesses if other not in found and tiles(other) & linked]
        if not more:
            return [(other, accesses[other]) for other in found]
        found += more
        for other in more:
            linked |= tiles(other)


def _relist(relisted: list[_Relisted]) -> None:
    """Subscript the global and shared accesses of each statement by `sigma`
    of its column iterator, its access relations with them."""
    for entry in relisted:
        stmt, n = entry.stmt, len(entry.stmt.body.block.args)
        position = list(stmt.body.block.args).index(entry.column)
        shift = AffineMap(n, 0, tuple(
            sigma(AffineExpr.dimension(k)) if k == position else AffineExpr.dimension(k) for k in range(n)
        ))  # fmt: skip
        for op in entry.accesses:
            index = op.attributes.get(PROMOTED_MAP)
            if isinstance(index, AffineMapAttr):
                op.attributes[PROMOTED_MAP] = AffineMapAttr(index.data.compose(shift))
            old = op.map.data
            dims = [
                sigma(AffineExpr.dimension(p)) if v is entry.column else AffineExpr.dimension(p)
                for p, v in enumerate(op.subscript_operands)
            ]
            symbols = [AffineExpr.symbol(p) for p in range(old.num_symbols)]
            op.properties["map"] = AffineMapAttr(old.replace_dims_and_symbols(dims, symbols, old.num_dims, old.num_symbols))
        instances = isl.Set(stmt.domain.data)
        iterators = [instances.get_dim_name(isl.dim_type.set, k) for k in range(n)]
        domain = isl.UnionSet.from_set(instances)
        for field, kind in (("reads", ReadOp), ("writes", UpdateOp)):
            moved = [op for op in entry.accesses if isinstance(op, kind)]
            if not moved:
                continue
            names = {op.tensor.name_hint for op in moved}
            kept = isl.UnionMap.empty(domain.get_space())
            maps = isl.UnionMap(getattr(stmt, field).data).get_map_list()
            for access in (maps.get_at(k) for k in range(maps.n_map())):
                if access.get_tuple_name(isl.dim_type.out) not in names:
                    kept = kept.union(isl.UnionMap.from_map(access))
            for op in moved:
                access = isl.Map.from_multi_aff(affine_map_to_isl(on_iterators(op, n), stmt.sym_name.data, []))
                access = access.set_tuple_name(isl.dim_type.out, op.tensor.name_hint or "")
                for k, iterator in enumerate(iterators):
                    access = access.set_dim_name(isl.dim_type.in_, k, iterator)
                kept = kept.union(isl.UnionMap.from_map(access).intersect_domain(domain))
            setattr(stmt, field, StringAttr(str(kept.coalesce())))


def wgmma_statement(found: Contraction, at: WarpgroupLayout) -> StmtOp:
    """The statement whose leaders do `found`'s instances by `nvgpu.warpgroup.mma`."""
    stmt = found.stmt
    row, column = AffineExpr.dimension(at.row), AffineExpr.dimension(at.column)
    block = new_body(stmt)

    def descriptor(op: ReadOp | None, moves: dict[int, AffineExpr]) -> SSAValue:
        assert op is not None
        make = lambda subscripts: WarpgroupGenerateDescriptorOp(op.tensor, block.args, subscripts)  # noqa: E731
        return shifted(block, op, moves, make).result

    a = descriptor(found.operand_of(at.row), {at.row: row - row % WGMMA_M})
    b = descriptor(found.operand_of(at.column), {at.column: column - column % at.n})
    # Accumulator 4q + 2h + e: row + 8h, column + 8q + 4e (the column listing).
    places = [{at.row: row + 8 * h, at.column: column + 8 * q + 4 * e} for q in range(at.n // 8) for h in (0, 1) for e in (0, 1)]
    accumulators = [shifted_read(block, found.update, place).result for place in places]
    mma = WarpgroupMmaOp(a, b, accumulators, at.element, at.k, at.transposes)
    block.add_op(mma)
    for place, value in zip(places, mma.res):
        shifted_write(block, found.update, value, place)
    groups = isl.UnionMap.from_map(_groups(found, at))
    reads, writes = (str(groups.apply_range(isl.UnionMap(r)).coalesce()) for r in (stmt.reads.data, stmt.writes.data))
    result = StmtOp(stmt.sym_name.data, str(leaders(found, at)), reads, writes, Region(block))
    result.attributes |= stmt.attributes
    return result


def _swizzle_tiles(scop: ScopOp, at: WarpgroupLayout) -> None:
    """Give the operands' shared tiles rows of 128 bytes in the 128-byte
    swizzle (an MN-major one's columns unpadded, a row's worth at a time:
    `SwizzleLayoutAttr`), and list a K-major Y's rows by `sigma` (in every
    access of the scop)."""
    buffers = scop.attributes[BUFFERS]
    assert isinstance(buffers, DictionaryAttr)
    types = dict(buffers.data)
    for name, transposed, extent in ((at.a_buffer, at.transposes[0], at.m), (at.b_buffer, at.transposes[1], at.n)):
        kind = types[name]
        assert isinstance(kind, MemRefType)
        shape = [*kind.get_shape()[:-1], extent if transposed else at.row_elements]
        types[name] = MemRefType(kind.element_type, shape, SwizzleLayoutAttr(), kind.memory_space)
    scop.attributes[BUFFERS] = DictionaryAttr(types)
    if at.transposes[1]:
        return
    for op in scop.walk():
        index = op.attributes.get(PROMOTED_MAP)
        if op.attributes.get(PROMOTED) != StringAttr(at.b_buffer) or not isinstance(index, AffineMapAttr):
            continue
        results = list(index.data.results)
        results[-2] = sigma(results[-2])
        op.attributes[PROMOTED_MAP] = AffineMapAttr(AffineMap(index.data.num_dims, index.data.num_symbols, tuple(results)))


def rewrite(scop: ScopOp, allow_tf32: bool = True) -> int:
    """Give each contraction of `scop` that fits `wgmma` (a half one, or with
    `allow_tf32` an f32 one) its warpgroup statement, its shared tiles
    swizzled; the count."""
    done = 0
    for stmt in scop.statements:
        found = contraction(stmt)
        at = layout(found, scop) if found is not None and (found.half or allow_tf32) else None
        if found is None or at is None:
            continue
        relisted = _relisted_columns(scop, found, at.column) if at.transposes[1] else []
        assert relisted is not None  # layout checked it
        replace_statement(scop, stmt, wgmma_statement(found, at))
        _swizzle_tiles(scop, at)
        _relist(relisted)
        done += 1
    return done
