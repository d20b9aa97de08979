"""The tensor references of a scop's statements, and their grouping.

A reference is one `tc.read` or `tc.update` in a statement body; its access
relation is rebuilt from the op's subscripts, so that a promotion can rewrite
exactly that op. A read `T(.., X(x), ..)` of a tensor that no statement
writes, through a read-only index tensor `X`, accesses the virtual array
`T_X[x, ..]` (the paper's indirect promotion: its elements are indexed by the
index tensor's elements); other indirect subscripts leave it without one.

References to a tensor are grouped (the paper's appendix): those whose
footprints in a tile overlap when one of them writes must share a copy of
the data, and non-overlapping ones are merged when their common array tile
is smaller than their tiles together.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import islpy as isl
from xdsl.ir import SSAValue
from xdsl.ir.affine import AffineDimExpr

from tcir.dialects.poly import StmtOp
from tcir.dialects.tc import ReadOp, TensorType, UpdateOp
from tcir.lowering.tc_point import ATOMIC, BLOCK_REDUCTION
from tcir.polyhedral.affine_isl import IslAffineBuilder, NotAffine, relation
from tcir.polyhedral.promotion.affine import coalesced
from tcir.polyhedral.promotion.tiles import ArrayTile, array_tile

Access = ReadOp | UpdateOp


@dataclass(frozen=True)
class Indirection:
    """How a reference `T(.., X(x), ..)` reads `T`: through `index`, the read
    of `X(x)`, at subscript `position`; `rows` (`{ [o] }`) are the values the
    index may take; `tensor_name` and `index_name` are the scop's names of
    `T` and `X`."""

    index: ReadOp
    position: int
    rows: isl.Set
    tensor_name: str
    index_name: str

    @property
    def index_rank(self) -> int:
        assert isinstance(self.index.tensor.type, TensorType)
        return self.index.tensor.type.rank


@dataclass(frozen=True)
class Reference:
    """One access of a statement to a tensor; `access` is None when it is
    indirect and not promotable, the access to the virtual array when
    `indirection` is set."""

    stmt: StmtOp
    op: Access
    tensor: SSAValue
    access: isl.Map | None
    indirection: Indirection | None = None
    conditional: bool = False
    """Made in a branch of the body (a guarded ternary): it may not run, so
    its group is never promoted (nor those it overlaps, being grouped with it)."""

    @property
    def array(self) -> object:
        """What the reference accesses: its tensor, or the virtual array."""
        if self.indirection is None:
            return self.tensor
        return (self.tensor, self.indirection.index.tensor, self.indirection.position)

    @property
    def reads(self) -> bool:
        return isinstance(self.op, ReadOp) or self.op.kind.data != "="

    @property
    def writes(self) -> bool:
        return isinstance(self.op, UpdateOp)


def _scop_names(stmt: StmtOp, op: Access, access: isl.Map) -> set[str]:
    """The tuple names the statement's reads (or writes, for an update) give
    a tensor accessed as `access`: those whose relation holds it (one of a
    tensor's several reads; where the relation holds: a guarded read's holds
    only where its guard does, on the elements within the tensor)."""
    text = stmt.writes.data if isinstance(op, UpdateOp) else stmt.reads.data
    relations = isl.UnionMap(text).intersect_domain(isl.UnionSet(stmt.domain.data))
    found: set[str] = set()

    def match(candidate: isl.Map) -> None:
        name = candidate.get_tuple_name(isl.dim_type.out)
        if candidate.dim(isl.dim_type.out) != access.dim(isl.dim_type.out):
            return
        named = access.set_tuple_name(isl.dim_type.out, name)
        if named.intersect_domain(candidate.domain()).intersect_range(candidate.range()).is_subset(candidate):
            found.add(name)

    relations.foreach_map(match)
    return found


def _subscripts(
    stmt: StmtOp, op: Access, skip: int | None = None
) -> list[isl.PwAff] | None:
    """The subscripts of `op` (but `skip`) on its statement's iterators, or
    None if one is not affine."""
    space = isl.Set(stmt.domain.data).get_space()
    args = list(stmt.body.block.args)
    dims = [args.index(v) if v in args else None for v in op.subscript_operands]
    builder = IslAffineBuilder(space, dims, op.symbol_names)
    try:
        return [builder.build(e) for k, e in enumerate(op.subscripts) if k != skip]
    except NotAffine:
        return None


def _access(stmt: StmtOp, op: Access) -> isl.Map | None:
    domain = isl.Set(stmt.domain.data)
    outputs = _subscripts(stmt, op)
    if outputs is None:
        return None
    return relation(domain.get_space(), "T", outputs).intersect_domain(domain)


def _indirect_access(
    stmt: StmtOp, op: ReadOp, name: Callable[[SSAValue], str]
) -> tuple[isl.Map, Indirection] | None:
    """`{ S[i] -> T[x(i), ..] }` and the indirection of a read `T(.., X(x(i)), ..)`
    whose one indirect subscript is a value read from `X` at affine subscripts;
    `name` gives the scop's name of `X`."""
    operands = list(op.subscript_operands)
    found = [
        (k, e.position)
        for k, e in enumerate(op.subscripts)
        if isinstance(e, AffineDimExpr)
        and isinstance(index := operands[e.position].owner, ReadOp)
        and index.parent_block() is stmt.body.block
    ]
    if len(found) != 1:
        return None
    position, operand = found[0]
    index = operands[operand].owner
    assert isinstance(index, ReadOp)
    inner = _subscripts(stmt, index)
    others = _subscripts(stmt, op, skip=position)
    if inner is None or others is None:
        return None
    domain = isl.Set(stmt.domain.data)
    virtual = relation(domain.get_space(), "T", inner + others).intersect_domain(domain)
    # The values the index may take: the statement's read relations give the
    # indirect subscript its whole dimension (`convert-tc-to-poly`).
    assert isinstance(op.tensor.type, TensorType)
    rank = op.tensor.type.rank
    row = [*others[:position], None, *others[position:]]
    other_elements = relation(domain.get_space(), "T", others).intersect_domain(domain)
    candidates: list[isl.Map] = []
    reads = isl.UnionMap(stmt.reads.data).intersect_domain(
        isl.UnionSet.from_set(domain)
    )
    for read in _maps(reads):
        # The read of `T`: its other subscripts are the op's, at any row.
        anonymous = read.reset_tuple_id(isl.dim_type.out)
        if (
            read.dim(isl.dim_type.out) == rank
            and not read.is_single_valued()
            and anonymous.is_subset(
                relation(domain.get_space(), "T", row).reset_tuple_id(isl.dim_type.out)
            )
            and anonymous.project_out(isl.dim_type.out, position, 1).is_equal(
                other_elements.reset_tuple_id(isl.dim_type.out)
            )
        ):
            candidates.append(read)
    if len(candidates) != 1:
        return None  # not found, or ambiguous
    read = candidates[0]
    values = read.range().project_out(
        isl.dim_type.set, position + 1, rank - position - 1
    )
    values = values.project_out(isl.dim_type.set, 0, position).reset_tuple_id()
    tensor = read.get_tuple_name(isl.dim_type.out)
    indirection = Indirection(
        index, position, coalesced(values), tensor, name(index.tensor)
    )
    return virtual, indirection


def _maps(relations: isl.UnionMap) -> list[isl.Map]:
    found: list[isl.Map] = []
    relations.foreach_map(found.append)
    return found


def references(statements: Sequence[StmtOp]) -> list[Reference]:
    """The references of `statements` to tensors (0-d ones too), in order
    (not the updates of block reductions, which go to a thread's partial);
    access relations name each tensor as the scop's relations do (a virtual
    array `T_X` after its tensor and index tensor)."""
    found: list[tuple[StmtOp, Access, isl.Map | None]] = []
    for stmt in statements:
        for op in stmt.body.block.walk():
            if isinstance(op, ReadOp | UpdateOp) and BLOCK_REDUCTION not in op.attributes:
                assert isinstance(op.tensor.type, TensorType)
                found.append((stmt, op, _access(stmt, op)))
    # A tensor's name is the one every reference to it agrees on.
    candidates: dict[SSAValue, set[str]] = {}
    for stmt, op, access in found:
        if access is not None:
            matches = _scop_names(stmt, op, access)
            candidates[op.tensor] = candidates.get(op.tensor, matches) & matches
    # Two tensors read at the same subscripts match each other's relations:
    # the tensor's own name wins.
    names = {t: t.name_hint if t.name_hint in c else min(c) for t, c in candidates.items() if c}
    written = {op.tensor for _, op, _ in found if isinstance(op, UpdateOp)}

    def name(tensor: SSAValue) -> str:
        return names.get(tensor, f"T{id(tensor)}")

    result: list[Reference] = []
    for stmt, op, access in found:
        conditional = op.parent_block() is not stmt.body.block
        if access is not None:
            access = access.set_tuple_name(isl.dim_type.out, name(op.tensor))
            result.append(Reference(stmt, op, op.tensor, access, conditional=conditional))
            continue
        if conditional:
            result.append(Reference(stmt, op, op.tensor, None, conditional=True))
            continue
        indirect = (
            _indirect_access(stmt, op, name)
            if isinstance(op, ReadOp) and op.tensor not in written
            else None
        )
        if indirect is None or indirect[1].index.tensor in written:
            result.append(Reference(stmt, op, op.tensor, None))
            continue
        virtual, indirection = indirect
        array = f"{indirection.tensor_name}_{indirection.index_name}"
        virtual = virtual.set_tuple_name(isl.dim_type.out, array)
        result.append(Reference(stmt, op, op.tensor, virtual, indirection))
    return result


@dataclass
class Group:
    """References to one tensor promoted (or not) together, with their
    footprint `{ [p] -> T[a] }` in a tile and its array tile."""

    refs: list[Reference]
    footprint: isl.Map | None
    tile: ArrayTile | None

    @property
    def tensor(self) -> SSAValue:
        return self.refs[0].tensor

    @property
    def writes(self) -> bool:
        return any(r.writes for r in self.refs)

    @property
    def atomic(self) -> str | None:
        """The update (`+=`, `max=`, `min=`) of the group where it is the
        atomic reduction of `poly-parallel-reduction` (its references are
        updates combined across threads, nothing else); None otherwise."""
        ops = [r.op for r in self.refs]
        if not all(isinstance(op, UpdateOp) and ATOMIC in op.attributes for op in ops):
            return None
        kinds = {op.kind.data for op in ops if isinstance(op, UpdateOp)}
        return kinds.pop() if len(kinds) == 1 else None


Footprint = Callable[[Reference], isl.Map | None]


class _Tiles:
    """`array_tile` of footprints, each computed once per footprint text:
    references that access the same elements (`O(i) = O(i) + ...` reads and
    writes `O(i)`) have equal footprints, and so have their merges."""

    def __init__(self) -> None:
        self._known: dict[str, ArrayTile | None] = {}

    def group(self, refs: list[Reference], footprint: isl.Map | None) -> Group:
        if footprint is None:
            return Group(refs, None, None)
        key = footprint.to_str()
        if key not in self._known:
            self._known[key] = array_tile(footprint)
        return Group(refs, footprint, self._known[key])

    def merge(self, a: Group, b: Group) -> Group:
        footprint = None
        if a.footprint is not None and b.footprint is not None:
            footprint = coalesced(a.footprint.union(b.footprint))
        return self.group(a.refs + b.refs, footprint)


def _must_merge(a: Group, b: Group) -> bool:
    """Overlapping groups of which one writes (an indirect one overlaps all)."""
    if not (a.writes or b.writes):
        return False
    if a.footprint is None or b.footprint is None:
        return True
    return not a.footprint.intersect(b.footprint).is_empty()


def _merged(a: Group, b: Group, tiles: _Tiles) -> Group | None:
    """`a` and `b` as one group if they must be merged, or if their common
    tile is smaller than both tiles; else None."""
    if _must_merge(a, b):
        return tiles.merge(a, b)
    if a.tile is None or b.tile is None:
        return None
    merged = tiles.merge(a, b)
    if merged.tile is not None and merged.tile.elements < a.tile.elements + b.tile.elements:
        return merged
    return None


def group_references(refs: Sequence[Reference], footprint: Footprint) -> list[Group]:
    """Groups of `refs` (all to one tensor), with footprints from `footprint`.
    Pairs are merged first to last until none is left to merge; a pair's
    verdict is kept across the rounds (by the groups' identities, the groups
    kept alive with it)."""
    tiles = _Tiles()
    groups = [tiles.group([ref], footprint(ref)) for ref in refs]
    verdicts: dict[tuple[int, int], tuple[Group, Group, Group | None]] = {}
    merged = True
    while merged:
        merged = False
        pairs = [(i, j) for i in range(len(groups)) for j in range(i + 1, len(groups))]
        for i, j in pairs:
            a, b = groups[i], groups[j]
            key = (id(a), id(b))
            if key not in verdicts:
                verdicts[key] = (a, b, _merged(a, b, tiles))
            union = verdicts[key][2]
            if union is not None:
                groups[i] = union
                groups.pop(j)
                merged = True
                break
    return groups
