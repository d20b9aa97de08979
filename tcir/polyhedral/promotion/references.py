"""The tensor references of a scop's statements, and their grouping.

A reference is one `tc.read` or `tc.update` in a statement body; its access
relation is rebuilt from the op's subscripts, so that a promotion can rewrite
exactly that op. Indirect subscripts (`X(I(i))`) leave it without one.

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

from tcir.dialects.poly import StmtOp
from tcir.dialects.tc import ReadOp, TensorType, UpdateOp
from tcir.polyhedral.affine_isl import IslAffineBuilder, NotAffine, relation
from tcir.polyhedral.promotion.tiles import ArrayTile, array_tile

Access = ReadOp | UpdateOp


@dataclass(frozen=True)
class Reference:
    """One access of a statement to a tensor; `access` is None when indirect."""

    stmt: StmtOp
    op: Access
    tensor: SSAValue
    access: isl.Map | None

    @property
    def reads(self) -> bool:
        return isinstance(self.op, ReadOp) or self.op.kind.data != "="

    @property
    def writes(self) -> bool:
        return isinstance(self.op, UpdateOp)


def _scop_name(stmt: StmtOp, access: isl.Map) -> str | None:
    """The tuple name the statement's relations give the tensor of `access`."""
    relations = isl.UnionMap(stmt.reads.data).union(isl.UnionMap(stmt.writes.data))
    relations = relations.intersect_domain(isl.UnionSet(stmt.domain.data))
    found: list[str] = []

    def match(candidate: isl.Map) -> None:
        name = candidate.get_tuple_name(isl.dim_type.out)
        if candidate.is_equal(access.set_tuple_name(isl.dim_type.out, name)):
            found.append(name)

    relations.foreach_map(match)
    return found[0] if found else None


def _access(stmt: StmtOp, op: Access) -> isl.Map | None:
    domain = isl.Set(stmt.domain.data)
    args = list(stmt.body.block.args)
    dims = [args.index(v) if v in args else None for v in op.subscript_operands]
    builder = IslAffineBuilder(domain.get_space(), dims, op.symbol_names)
    try:
        outputs = [builder.build(e) for e in op.subscripts]
    except NotAffine:
        return None
    return relation(domain.get_space(), "T", outputs).intersect_domain(domain)


def references(statements: Sequence[StmtOp]) -> list[Reference]:
    """The references of `statements` to tensors of rank 1 or more, in order;
    access relations name each tensor as the scop's relations do."""
    found: list[tuple[StmtOp, Access, isl.Map | None]] = []
    for stmt in statements:
        for op in stmt.body.block.walk():
            if isinstance(op, ReadOp | UpdateOp):
                assert isinstance(op.tensor.type, TensorType)
                if op.tensor.type.rank > 0:
                    found.append((stmt, op, _access(stmt, op)))
    names: dict[SSAValue, str] = {}
    for stmt, op, access in found:
        if (
            access is not None
            and op.tensor not in names
            and (name := _scop_name(stmt, access))
        ):
            names[op.tensor] = name
    return [
        Reference(
            stmt,
            op,
            op.tensor,
            None
            if access is None
            else access.set_tuple_name(
                isl.dim_type.out, names.get(op.tensor, f"T{id(op.tensor)}")
            ),
        )
        for stmt, op, access in found
    ]


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


Footprint = Callable[[Reference], isl.Map | None]


def _merge(a: Group, b: Group) -> Group:
    footprint = None
    if a.footprint is not None and b.footprint is not None:
        footprint = a.footprint.union(b.footprint).coalesce()
    return Group(
        a.refs + b.refs, footprint, None if footprint is None else array_tile(footprint)
    )


def _must_merge(a: Group, b: Group) -> bool:
    """Overlapping groups of which one writes (an indirect one overlaps all)."""
    if not (a.writes or b.writes):
        return False
    if a.footprint is None or b.footprint is None:
        return True
    return not a.footprint.intersect(b.footprint).is_empty()


def _worth_merging(a: Group, b: Group) -> bool:
    """The common tile is smaller than both tiles."""
    if a.tile is None or b.tile is None:
        return False
    merged = _merge(a, b)
    return (
        merged.tile is not None
        and merged.tile.elements < a.tile.elements + b.tile.elements
    )


def group_references(refs: Sequence[Reference], footprint: Footprint) -> list[Group]:
    """Groups of `refs` (all to one tensor), with footprints from `footprint`."""
    groups = []
    for ref in refs:
        fp = footprint(ref)
        groups.append(Group([ref], fp, None if fp is None else array_tile(fp)))
    merged = True
    while merged:
        merged = False
        pairs = [(i, j) for i in range(len(groups)) for j in range(i + 1, len(groups))]
        for i, j in pairs:
            if _must_merge(groups[i], groups[j]) or _worth_merging(
                groups[i], groups[j]
            ):
                groups[i] = _merge(groups[i], groups.pop(j))
                merged = True
                break
    return groups
