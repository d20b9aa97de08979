"""The canonical schedule tree of a scop's statements (the paper's Figure (a)).

A sequence with one filter per statement, in statement order, each with a
permutable identity band; a member is coincident unless it is a reduction
dimension of its statement. Such a subtree executes its statements in program
order, so it may replace any subtree of a valid schedule.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import islpy as isl
from xdsl.ir.affine import AffineBinaryOpExpr, AffineBinaryOpKind, AffineDimExpr, AffineExpr

from tcir.dialects.poly import BandOp, FilterOp, ScheduleNodeOp, SequenceOp, StmtOp
from tcir.dialects.tc import UpdateOp


def reduction_dims(stmt: StmtOp) -> list[int]:
    """The domain dimensions that are not, on their own, a subscript of the
    element the statement's final `tc.update` writes: `+=` (etc.) reduces
    along them, `=` overwrites along them; either way they must stay
    sequential (never coincident). A scatter's dimension that a subscript
    uses in an expression (`gI(i + x)`) or through an index tensor
    (`gE(I(b), d)`: `b`) is one too: instances apart along it may update one
    element."""
    block = stmt.body.block
    last = block.last_op
    if not isinstance(last, UpdateOp):
        return []
    operands = list(last.subscript_operands)
    used = [{node.position for node in e.dfs() if isinstance(node, AffineDimExpr)} for e in last.subscripts]
    alone = [
        operands[next(iter(dims))]
        for e, dims in zip(last.subscripts, used)
        if len(dims) == 1 and sum(dims <= other for other in used if other) == 1 and _injective(e)
    ]
    return [arg.index for arg in block.args if arg not in alone]


def _injective(e: AffineExpr) -> bool:
    """Whether an affine expression of one dimension takes distinct values
    at distinct points (no floor division or modulo)."""
    return not any(
        isinstance(node, AffineBinaryOpExpr) and node.kind not in (AffineBinaryOpKind.Add, AffineBinaryOpKind.Mul)
        for node in e.dfs()
    )


def identity_band(stmt: StmtOp, parallel_reduction: bool = False) -> BandOp | None:
    """The statement's permutable identity band (None for a 0-d statement);
    with `parallel_reduction` (its update combined by atomics), the
    reduction dimensions are coincident too."""
    domain = isl.Set(stmt.domain.data)
    n_dim = domain.dim(isl.dim_type.set)
    if n_dim == 0:
        return None
    identity = isl.Map.identity(domain.get_space().map_from_set())
    partial = isl.MultiUnionPwAff.from_union_map(
        isl.UnionMap.from_map(identity.reset_tuple_id(isl.dim_type.out))
    )
    reductions = reduction_dims(stmt)
    coincident = [parallel_reduction or k not in reductions for k in range(n_dim)]
    return BandOp(partial.to_str(), coincident, permutable=True)


def statement_filter(stmt: StmtOp) -> str:
    """The filter selecting all instances of `stmt`, e.g. `{ S0[i, j] }`."""
    space = isl.Set(stmt.domain.data).get_space()
    return isl.UnionSet.from_set(isl.Set.universe(space)).to_str()


def canonical_subtree(
    statements: Sequence[StmtOp], parallel_reductions: Collection[StmtOp] = ()
) -> ScheduleNodeOp | None:
    """The canonical tree below the domain node (None: a leaf); the
    reduction dimensions of `parallel_reductions` are coincident."""
    if len(statements) == 1:
        return identity_band(statements[0], statements[0] in parallel_reductions)
    return SequenceOp(
        [FilterOp(statement_filter(s), identity_band(s, s in parallel_reductions)) for s in statements]
    )
