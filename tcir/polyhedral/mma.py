"""Contractions of mapped scops as warp-level `mma.sync`: TF32 m16n8k8 for
f32 operands, m16n8k16 for f16 and bf16 ones (f32 accumulators both).

A statement `C[.., i, j] += X[.., i, k] * Y[.., j, k]` (any affine layout of
the operands) of a kernel whose block is `threads = [4, Y]` (Y a multiple of
8) and whose threads own the points of `i ≡ thread_y (mod Y)` and
`j ≡ thread_x (mod 4)` of the block's tile (`poly-map-to-gpu`'s cyclic
mapping) already holds the accumulators of m16n8k8 fragments: the warp of
threads `thread_y` in `8w .. 8w+7` owns, per pair of its rows `i, i + Y`
and per 8 columns `j0 .. j0+7`, a 16x8 tile, thread (g = thread_y mod 8,
t = thread_x) the elements `(i, j0 + t)`, `(i, j0 + t + 4)`, `(i + Y, j0 + t)`,
`(i + Y, j0 + t + 4)`: those of `mma.sync`'s rows g and g + 8 and columns
2t and 2t + 1, once the tile's columns are listed as j0, j0+4, j0+1, j0+5...

`mma_statement` rewrites the statement so that one instance, the leader
`(i, j0 + t, k0)` of `i mod 2Y < Y`, `j mod 8 < 4`, `k mod 8S = 0`, does the
16S instances of its thread at `(i + {0, Y}, j + {0, 4}, k0 .. k0 + 4S - 1)`
by S/2 `mma.sync` with the warp's other threads (S = `Layout.steps`, 2 or
4): it reads its registers of the A fragments (`X[i + {0, Y}][k0 + St ..
k0 + St + S - 1]`: reduction points permuted alike in A and B, so that a
thread's are consecutive), of the B fragments
(`Y[j0 + g / 2 + 4 (g mod 2)][k0 + St .. k0 + St + S - 1]`, column g of the
listing) and its four accumulators, and writes back `nvgpu.mma.sync`'s
results. It does
so only where that is exact: every group lies in the statement's domain
(a box of whole groups), in one iteration of every loop around the copies
of its shared tiles (one block, one k step), and the threads own exactly
the points above, so that the 32 threads of each warp run each `mma.sync`
together.

Half operands (`Contraction.half`: reads of f16 or bf16 widened by
`arith.extf`) use the same rows, columns and accumulators; a thread's 4
consecutive reduction points of a row are the mma's k = 2t, 2t + 1,
2t + 8, 2t + 9 (A's registers a0..a7: rows g, g + 8, pairs of k), so a
leader does 16 (one mma) or 32 (two) points; the half values go to the
mma as they are read, unwidened.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

import islpy as isl
from xdsl.dialects import arith
from xdsl.dialects.builtin import AffineMapAttr, DictionaryAttr, Float32Type, IndexType, IntegerAttr, MemRefType, StringAttr
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.ir.affine import AffineDimExpr, AffineExpr, AffineMap
from xdsl.rewriter import Rewriter

from tcir.dialects.nvgpu import MmaSyncOp, element_bytes
from tcir.dialects.poly import BandOp, ContextOp, ExtensionOp, FilterOp, ScopOp, StmtOp
from tcir.dialects.tc import ReadOp, UpdateOp
from tcir.ir.float_types import is_half
from tcir.lowering.tc_point import ATOMIC, CLAMP, CLIP, PROMOTED, PROMOTED_MAP, PROMOTED_SYMBOLS
from tcir.polyhedral.bands import value_bounds
from tcir.polyhedral.promotion.affine import affine_map_to_isl
from tcir.polyhedral.promotion.promote import BUFFERS, SHARED_SPACE

COLUMN_THREADS = 4
"""Threads along the columns of an m16n8k8 tile (thread_x)."""
GROUP_ROWS = 8
"""Lanes along its rows per register (g = lane / 4)."""


@dataclass(frozen=True)
class Contraction:
    """A statement `C[..] += X[..] * Y[..]` of plain iterators, C of f32 and
    X, Y both of f32, or both of a half type read through `arith.extf` (as
    `tc-widen-half-precision` leaves them)."""

    stmt: StmtOp
    update: UpdateOp
    reads: tuple[ReadOp, ReadOp]
    outputs: frozenset[int]
    """Iterators (positions) in the output's subscripts."""
    reduction: int
    """The one iterator the operands share that the output does not use."""

    @property
    def half(self) -> bool:
        """Whether the operands are f16 or bf16 (m16n8k16), not f32 (TF32 m16n8k8)."""
        return not isinstance(self.reads[0].tensor_type.scalar_type, Float32Type)

    def operand_of(self, iterator: int) -> ReadOp | None:
        """The operand that uses `iterator` (a row or column of the output)
        where the other does not, else None."""
        first, second = (_iterators(r) for r in self.reads)
        if iterator in first - second:
            return self.reads[0]
        return self.reads[1] if iterator in second - first else None


def _iterators(op: ReadOp | UpdateOp) -> set[int]:
    """The positions, among its statement's iterators, of those `op`'s subscripts use."""
    args = list(op.parent_block().args)  # pyright: ignore[reportOptionalMemberAccess]
    return {args.index(v) for v in op.subscript_operands}  # pyright: ignore[reportArgumentType]


def _factor_read(value: SSAValue) -> ReadOp | None:
    """The read that a factor of the product is: the read's f32 result, or
    the `arith.extf` of a read of f16 or bf16 to f32."""
    owner = value.owner
    if isinstance(owner, arith.ExtFOp) and is_half(owner.input.type):
        owner = owner.input.owner
    return owner if isinstance(owner, ReadOp) else None


def contraction(stmt: StmtOp) -> Contraction | None:
    """`stmt` as a contraction, or None where it is not one."""
    ops = list(stmt.body.block.ops)
    reads = [o for o in ops if isinstance(o, ReadOp)]
    products = [o for o in ops if isinstance(o, arith.MulfOp)]
    updates = [o for o in ops if isinstance(o, UpdateOp)]
    widened = [o for o in ops if isinstance(o, arith.ExtFOp)]
    if len(ops) != 4 + len(widened) or len(reads) != 2 or len(products) != 1 or len(updates) != 1:
        return None
    (product,), (update,) = products, updates
    factors = [_factor_read(v) for v in product.operands]
    if set(factors) != set(reads) or len(set(factors)) != 2 or len(widened) not in (0, 2):
        return None
    if update.value != product.result or update.kind.data != "+=":
        return None
    if ATOMIC in update.attributes and PROMOTED not in update.attributes:
        return None  # split-K's atomic sums: only into the thread's private accumulators
    if any((CLAMP in o.attributes or CLIP in o.attributes) and PROMOTED not in o.attributes for o in (*reads, update)):
        return None  # padded to whole tiles (`poly-pad-tiles`): the fragments would access past the shapes
    element = reads[0].tensor_type.scalar_type
    if reads[1].tensor_type.scalar_type != element or isinstance(element, Float32Type) == bool(widened):
        return None  # f32 operands as they are, or one half type widened
    if not (isinstance(element, Float32Type) or is_half(element)):
        return None
    if not isinstance(update.tensor_type.scalar_type, Float32Type):
        return None
    args = set(stmt.body.block.args)
    for op in (*reads, update):
        if op.symbol_names or not set(op.subscript_operands).issubset(args) or PROMOTED_SYMBOLS in op.attributes:  # pyright: ignore[reportArgumentType]
            return None
    subscripts = update.subscripts
    if not all(isinstance(e, AffineDimExpr) for e in subscripts) or len(set(subscripts)) != len(subscripts):
        return None  # an output element a point: its subscripts are distinct iterators
    first, second, outputs = _iterators(reads[0]), _iterators(reads[1]), _iterators(update)
    shared = (first & second) - outputs
    if len(shared) != 1 or not (first | second) - shared <= outputs:
        return None
    if not first - second or not second - first:
        return None
    return Contraction(stmt, update, (reads[0], reads[1]), frozenset(outputs), shared.pop())


@dataclass(frozen=True)
class Layout:
    """Where the fragments of a contraction's mma lie: its row and column
    iterators (thread_y and thread_x own them) and the threads along y."""

    row: int
    column: int
    rows: int
    """Y: the block's threads along y (the rows of a thread are Y apart)."""
    steps: int
    """Consecutive reduction points a thread reads of a row of A or B, one
    vector load. TF32: 2, an mma's points k0 + 2t and k0 + 2t + 1 as its
    k = t and t + 4 (permuting k alike in A and B leaves their product), or
    4, those of two mmas in a row over 16 points, k0 + 4t + {0, 1} and
    k0 + 4t + {2, 3}. Half types: 4, an mma's points k0 + 4t .. k0 + 4t + 3
    as its k = 2t, 2t + 1, 2t + 8, 2t + 9, or 8, those of two mmas over 32."""
    per_mma: int = 2
    """Points a thread reads of a row for one mma: 2 (TF32), 4 (half types)."""

    @property
    def points(self) -> int:
        """Reduction points of one leader: 8 per TF32 mma, 16 per half one."""
        return 4 * self.steps


def iterator_names(stmt: StmtOp) -> list[str]:
    return [f"i{k}" for k in range(len(stmt.body.block.args))]


def instance_set(stmt: StmtOp, params: Sequence[str], condition: str) -> isl.Set:
    names = ", ".join(iterator_names(stmt))
    return isl.Set(f"[{', '.join(params)}] -> {{ {stmt.sym_name.data}[{names}] : {condition} }}")


def thread_filter(stmt: StmtOp, scop: ScopOp) -> tuple[FilterOp, isl.Set] | None:
    """The filter that deals `stmt`'s instances to threads, and its set for `stmt`."""
    name = stmt.sym_name.data
    for op in scop.schedule.walk():
        if isinstance(op, FilterOp) and "thread_x" in op.filter.data:
            pieces: list[isl.Set] = []
            isl.UnionSet(op.filter.data).foreach_set(
                lambda s: pieces.append(s) if s.get_tuple_name() == name else None
            )
            if pieces:
                return op, pieces[0]
    return None


def thread_extent(context: ContextOp, name: str) -> int | None:
    """The number of values of the parameter `name` in the kernel's context
    (None where it is not one of 0 .. n - 1)."""
    params = isl.Set(context.context.data)
    position = params.find_dim_by_name(isl.dim_type.param, name)
    if position < 0:
        return None
    values = isl.Set.from_params(params).move_dims(isl.dim_type.set, 0, isl.dim_type.param, position, 1)
    values = values.project_out(isl.dim_type.param, 0, values.dim(isl.dim_type.param))
    bounds = None if values.is_empty() else value_bounds(isl.UnionSet.from_set(values))
    return bounds[1] + 1 if bounds is not None and bounds[0] == 0 else None


def mapping_of(stmt: StmtOp, scop: ScopOp) -> tuple[isl.Set, list[Operation], ContextOp] | None:
    """`stmt`'s instances (thread ids as parameters), the ops around its
    thread filter and the kernel's context; None where it is not mapped."""
    located = thread_filter(stmt, scop)
    if located is None:
        return None
    node, owned = located
    chain = ancestors(node)
    context = next((op for op in chain if isinstance(op, ContextOp)), None)
    return None if context is None else (owned, chain, context)


def ancestors(op: Operation) -> list[Operation]:
    chain: list[Operation] = []
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, ScopOp):
        chain.append(parent)
        parent = parent.parent_op()
    return chain


def layout(found: Contraction, scop: ScopOp) -> Layout | None:
    """The rows and columns of `found`'s mma where its mapping fits one (see the module)."""
    stmt = found.stmt
    mapped = mapping_of(stmt, scop)
    if mapped is None:
        return None
    owned, chain, context = mapped
    x, y = thread_extent(context, "thread_x"), thread_extent(context, "thread_y")
    z = thread_extent(context, "thread_z") or 1
    if x != COLUMN_THREADS or y is None or y % GROUP_ROWS:
        return None
    domain = isl.Set(stmt.domain.data)
    params = ["thread_x", "thread_y", "thread_z"]
    in_range = f"0 <= thread_x < {x} and 0 <= thread_y < {y} and 0 <= thread_z < {z}"
    owned = owned.intersect(domain).intersect_params(instance_set(stmt, params, in_range).params())
    warps = warp_of(owned, x, y)
    owned = owned.project_out(isl.dim_type.param, owned.find_dim_by_name(isl.dim_type.param, "thread_z"), 1)
    names = iterator_names(stmt)
    for row in sorted(found.outputs):
        for column in sorted(found.outputs - {row}):
            a, b = found.operand_of(row), found.operand_of(column)
            if a is None or b is None or a is b:
                continue
            expected = instance_set(
                stmt, params[:2],
                f"({names[column]} - thread_x) mod {x} = 0 and ({names[row]} - thread_y) mod {y} = 0 "
                f"and 0 <= thread_x < {x} and 0 <= thread_y < {y}",
            ).intersect(domain)  # fmt: skip
            if owned.is_equal(expected):
                per_mma = 4 if found.half else 2
                for steps in (2 * per_mma, per_mma):
                    candidate = Layout(row, column, y, steps, per_mma)
                    if groups_fit(found, _groups(found, candidate), _same_mma(found, candidate), chain, warps):
                        return candidate
                return None
    return None


def warp_of(owned: isl.Set, x: int, y: int, size: int = 32) -> isl.Map:
    """Instance -> the warp (or group of `size` threads) that runs it
    (threads numbered x fastest), from `owned` (the instances, thread ids as
    parameters)."""
    n = owned.dim(isl.dim_type.set)
    ids = owned.insert_dims(isl.dim_type.set, n, 1)
    warp = isl.Set(
        f"[thread_x, thread_y, thread_z] -> {{ [{', '.join(f'i{k}' for k in range(n))}, w] : "
        f"w = floor((thread_x + {x} * thread_y + {x * y} * thread_z) / {size}) }}"
    )
    ids = ids.reset_tuple_id().intersect(warp.align_params(ids.get_space()))
    for name in ("thread_x", "thread_y", "thread_z"):
        ids = ids.project_out(isl.dim_type.param, ids.find_dim_by_name(isl.dim_type.param, name), 1)
    relation = isl.Map.from_domain(ids).move_dims(isl.dim_type.out, 0, isl.dim_type.in_, n, 1)
    return relation.set_tuple_name(isl.dim_type.in_, owned.get_tuple_name())


def leaders(found: Contraction, at: Layout) -> isl.Set:
    """The instances that run the mmas: the first of each group (`_groups`)."""
    names = iterator_names(found.stmt)
    row, column, k = names[at.row], names[at.column], names[found.reduction]
    condition = f"{row} mod {2 * at.rows} < {at.rows} and {column} mod 8 < 4 and {k} mod {at.points} = 0"
    return isl.Set(found.stmt.domain.data).intersect(instance_set(found.stmt, [], condition))


def _groups(found: Contraction, at: Layout) -> isl.Map:
    """Leader -> the instances its mmas do (32 a mma)."""
    names = iterator_names(found.stmt)
    target = list(names)
    target[at.row], target[at.column], target[found.reduction] = "r'", "c'", "k'"
    row, column, k = names[at.row], names[at.column], names[found.reduction]
    stmt = found.stmt.sym_name.data
    relation = isl.Map(
        f"{{ {stmt}[{', '.join(names)}] -> {stmt}[{', '.join(target)}] : "
        f"(r' = {row} or r' = {row} + {at.rows}) and (c' = {column} or c' = {column} + 4) "
        f"and {k} <= k' < {k} + {at.points} }}"
    )
    return relation.intersect_domain(leaders(found, at))


def _same_mma(found: Contraction, at: Layout) -> isl.Map:
    """Leader -> the leaders of the other lanes of its mma (the same rows
    but for their g = row mod 8, columns but for t = column mod 4)."""
    names = iterator_names(found.stmt)
    target = list(names)
    target[at.row], target[at.column] = "r'", "c'"
    row, column = names[at.row], names[at.column]
    stmt = found.stmt.sym_name.data
    relation = isl.Map(
        f"{{ {stmt}[{', '.join(names)}] -> {stmt}[{', '.join(target)}] : "
        f"floor(r' / {GROUP_ROWS}) = floor({row} / {GROUP_ROWS}) "
        f"and floor(c' / {COLUMN_THREADS}) = floor({column} / {COLUMN_THREADS}) }}"
    )
    return relation.intersect_domain(leaders(found, at)).intersect_range(leaders(found, at))


def groups_fit(
    found: Contraction, groups: isl.Map, same: isl.Map, chain: Sequence[Operation], warps: isl.Map
) -> bool:
    """Whether the groups (leader -> instances) tile the domain, each lies
    in one iteration of the loops around the copies of its statement's
    tiles, and one warp (`warps`: instance -> warp) runs each group and the
    groups of each mma (`same`: leader -> the leaders of its mma)."""
    domain = isl.Set(found.stmt.domain.data)
    covered = groups.range()
    if not covered.is_subset(domain) or not domain.is_subset(covered) or not domain.is_box():
        return False
    together = groups.union(same)
    if not together.apply_range(warps).is_subset(warps.intersect_domain(together.domain())):
        return False
    extensions = [k for k, op in enumerate(chain) if isinstance(op, ExtensionOp)]
    if not extensions:
        return False
    grouped = isl.UnionMap.from_map(groups)
    first = isl.UnionMap.from_map(groups.domain().identity())
    for op in chain[extensions[0] :]:
        if not isinstance(op, BandOp):
            continue
        schedule = isl.UnionMap.from_multi_union_pw_aff(isl.MultiUnionPwAff(op.schedule.data))
        schedule = schedule.intersect_domain(isl.UnionSet.from_set(domain))
        if not grouped.apply_range(schedule).is_subset(first.apply_range(schedule)):
            return False
    return True


def on_iterators(op: ReadOp | UpdateOp, n: int) -> AffineMap:
    """`op`'s subscripts as a map of all `n` iterators of its statement."""
    args = list(op.parent_block().args)  # pyright: ignore[reportOptionalMemberAccess]
    dims = [AffineExpr.dimension(args.index(v)) for v in op.subscript_operands]  # pyright: ignore[reportArgumentType]
    return op.map.data.replace_dims_and_symbols(dims, [], n, 0)  # pyright: ignore[reportAttributeAccessIssue]


def new_body(stmt: StmtOp) -> Block:
    """An empty block with the arguments (iterators) of `stmt`'s body."""
    block = Block(arg_types=[IndexType()] * len(stmt.body.block.args))
    for new, old in zip(block.args, stmt.body.block.args):
        new.name_hint = old.name_hint
    return block


OpT = TypeVar("OpT", bound=Operation)


def shifted(block: Block, old: ReadOp | UpdateOp, moves: dict[int, AffineExpr], make: Callable[[Sequence[AffineExpr]], OpT]) -> OpT:
    """`make(subscripts)` appended to `block` (a `new_body`): an access of
    `old`'s element at its statement's iterators moved by `moves` (iterator
    -> expression), with `old`'s attributes (`carry`)."""
    n = len(block.args)
    shift = AffineMap(n, 0, tuple(moves.get(k, AffineExpr.dimension(k)) for k in range(n)))
    new = make(on_iterators(old, n).compose(shift).results)
    carry(old, new, shift)  # pyright: ignore[reportArgumentType]
    block.add_op(new)
    return new


def shifted_read(block: Block, old: ReadOp | UpdateOp, moves: dict[int, AffineExpr]) -> ReadOp:
    """A read of `old`'s element at moved iterators (`shifted`)."""
    return shifted(block, old, moves, lambda subscripts: ReadOp(old.operands[0], subscripts, block.args))


def shifted_write(block: Block, update: UpdateOp, value: SSAValue, moves: dict[int, AffineExpr]) -> UpdateOp:
    """`update`'s element at moved iterators set to `value` (`shifted`)."""
    return shifted(block, update, moves, lambda subscripts: UpdateOp(update.tensor, "=", value, subscripts, block.args))


def mma_statement(found: Contraction, at: Layout) -> StmtOp:
    """The statement whose leaders do `found`'s instances by `nvgpu.mma.sync`."""
    stmt, n = found.stmt, len(found.stmt.body.block.args)
    d = [AffineExpr.dimension(k) for k in range(n)]
    row, column, k = d[at.row], d[at.column], d[found.reduction]
    lane_column = column % COLUMN_THREADS  # t: thread_x
    group = row % GROUP_ROWS  # g: thread_y mod 8
    block = new_body(stmt)
    reads: list[ReadOp] = []

    def read(op: ReadOp | UpdateOp, moves: dict[int, AffineExpr]) -> SSAValue:
        reads.append(shifted_read(block, op, moves))
        return reads[-1].result

    a_op, b_op = found.operand_of(at.row), found.operand_of(at.column)
    assert a_op is not None and b_op is not None
    # The registers of each mma, A and B read first, a row's points next to each other.
    point = k + lane_column * at.steps
    b_column = column - column % 8 + group // 2 + (group % 2) * 4
    a_rows = [[read(a_op, {at.row: row + at.rows * r, found.reduction: point + p}) for p in range(at.steps)] for r in (0, 1)]
    b_row = [read(b_op, {at.column: b_column, found.reduction: point + p}) for p in range(at.steps)]
    places = [{at.row: row + at.rows * r, at.column: column + 4 * e} for r in (0, 1) for e in (0, 1)]
    c: Sequence[SSAValue] = [read(found.update, place) for place in places]
    for chunk in range(0, at.steps, at.per_mma):
        if found.half:  # k = 2t, 2t + 1 (points chunk, chunk + 1), 2t + 8, 2t + 9 (the next two)
            a = [a_rows[r][chunk + 2 * h + q] for h in (0, 1) for r in (0, 1) for q in (0, 1)]
        else:  # k = t, t + 4: points chunk, chunk + 1
            a = [a_rows[r][chunk + q] for q in (0, 1) for r in (0, 1)]
        mma = MmaSyncOp(a, b_row[chunk : chunk + at.per_mma], c)
        block.add_op(mma)
        c = mma.res
    writes = [shifted_write(block, found.update, value, place) for place, value in zip(places, c)]
    domain = leaders(found, at)
    result = StmtOp(
        stmt.sym_name.data, str(domain), relation(stmt, reads), relation(stmt, writes), Region(block),
    )  # fmt: skip
    result.attributes |= stmt.attributes
    return result


def carry(old: ReadOp | UpdateOp, new: Operation, shift: AffineMap) -> None:
    """`old`'s attributes on `new` (a read of an atomic update's element is
    not atomic), its buffer index moved by `shift`."""
    new.attributes |= {k: v for k, v in old.attributes.items() if k != ATOMIC or isinstance(new, UpdateOp)}
    index = old.attributes.get(PROMOTED_MAP)
    if isinstance(index, AffineMapAttr):
        new.attributes[PROMOTED_MAP] = AffineMapAttr(index.data.compose(shift))


def relation(stmt: StmtOp, ops: Sequence[ReadOp | UpdateOp]) -> str:
    """The union of `ops`' accesses (isl text), from `stmt`'s instances."""
    result: isl.UnionMap | None = None
    domain = isl.Set(stmt.domain.data)
    for op in ops:
        access = isl.Map.from_multi_aff(affine_map_to_isl(op.map.data, stmt.sym_name.data, []))  # pyright: ignore[reportAttributeAccessIssue]
        access = access.set_tuple_name(isl.dim_type.out, op.operands[0].name_hint or "")
        for k in range(access.dim(isl.dim_type.in_)):
            access = access.set_dim_name(isl.dim_type.in_, k, domain.get_dim_name(isl.dim_type.set, k))
        piece = isl.UnionMap.from_map(access)
        result = piece if result is None else result.union(piece)
    assert result is not None
    return str(result.coalesce())


ROW_PADDING = (128, 64)
"""Row lengths of A's shared tile (bytes, modulus and residue) whose
quarter warps read rows g and g + 1 of a 16-byte fragment 16 banks apart."""
COLUMN_PADDING = (32, 16)
"""Row lengths of B's, whose quarter warps read rows j0 and j0 + 4 (the
column listing) 16 banks apart."""
FRAGMENT_BYTES = 16
"""What a thread reads of a row at once where the padding applies."""


def _pad_for_fragments(scop: ScopOp, found: Contraction, at: Layout) -> None:
    """Set the row length of the shared tiles that a layout reads 16 bytes
    a row at (TF32's float4, 8 halves) so that no quarter warp's loads
    share a bank (`ROW_PADDING`, `COLUMN_PADDING`): `poly-promote`'s padding
    suits one element per row and thread, not the fragments' 4 x 2 rows and
    columns per quarter warp. The buffers' indices stay; f32 rows only
    grow, half rows are the shortest that hold the fragments' points (the
    promoted rows, padded for 8-wide reads, would need to double)."""
    buffers = scop.attributes.get(BUFFERS)
    a_op, b_op = found.operand_of(at.row), found.operand_of(at.column)
    names = [op.attributes.get(PROMOTED) if op is not None else None for op in (a_op, b_op)]
    element = element_bytes(found.reads[0].tensor_type.scalar_type)
    if at.steps * element != FRAGMENT_BYTES or not isinstance(buffers, DictionaryAttr) or names[0] == names[1]:
        return
    types = dict(buffers.data)
    for op, name, (modulus, residue) in zip((a_op, b_op), names, (ROW_PADDING, COLUMN_PADDING)):
        kind = types.get(name.data) if isinstance(name, StringAttr) else None
        if not isinstance(kind, MemRefType) or kind.memory_space != IntegerAttr(SHARED_SPACE, 64) or len(kind.shape) < 2:
            continue
        shape = list(kind.get_shape())
        length = _row_extent(scop, name.data) if found.half else shape[-1]  # pyright: ignore[reportAttributeAccessIssue]
        if length is None:
            continue
        shape[-1] = length + (residue // element - length) % (modulus // element)
        types[name.data] = MemRefType(kind.element_type, shape, memory_space=kind.memory_space)
    scop.attributes[BUFFERS] = DictionaryAttr(types)


def _row_extent(scop: ScopOp, buffer: str) -> int | None:
    """One more than the largest last index of the promoted `buffer` that
    any access of `scop`'s statements uses (None where one is not known)."""
    extent = 0
    for stmt in scop.statements:
        for op in stmt.body.block.ops:
            if not isinstance(op, ReadOp | UpdateOp) or op.attributes.get(PROMOTED) != StringAttr(buffer):
                continue
            index = op.attributes.get(PROMOTED_MAP)
            if not isinstance(index, AffineMapAttr) or index.data.num_symbols:
                return None
            access = isl.Map.from_multi_aff(affine_map_to_isl(index.data, stmt.sym_name.data, []))
            image = isl.Set(stmt.domain.data).apply(access)
            if image.dim(isl.dim_type.param):
                return None
            if image.is_empty():
                continue
            last = image.project_out(isl.dim_type.set, 0, image.dim(isl.dim_type.set) - 1).lexmax().sample_point()
            extent = max(extent, last.get_coordinate_val(isl.dim_type.set, 0).to_python() + 1)
    return extent or None


def replace_statement(scop: ScopOp, stmt: StmtOp, replacement: StmtOp) -> None:
    """`replacement` in the place of `stmt`, its instances in the schedule's domain instead."""
    root = scop.schedule
    instances = isl.UnionSet(root.domain.data).subtract(isl.UnionSet.from_set(isl.Set(stmt.domain.data)))
    root.domain = StringAttr(str(instances.union(isl.UnionSet(replacement.domain.data))))
    Rewriter.replace_op(stmt, replacement)


def rewrite(scop: ScopOp, allow_tf32: bool = True) -> int:
    """Give each contraction of `scop` that fits `mma.sync` its mma statement,
    its shared tiles padded for the fragments; the count. Contractions of
    f32 operands only with `allow_tf32`."""
    done = 0
    for stmt in scop.statements:
        found = contraction(stmt)
        if found is not None and not (found.half or allow_tf32):
            continue
        at = layout(found, scop) if found is not None else None
        if found is None or at is None:
            continue
        _pad_for_fragments(scop, found, at)
        replace_statement(scop, stmt, mma_statement(found, at))
        done += 1
    return done
