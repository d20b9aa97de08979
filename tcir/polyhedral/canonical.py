"""The canonical schedule tree of a scop's statements (the paper's Figure (a)),
and the program order it stands for.

A sequence with one filter per statement, in statement order, each with a
permutable identity band; a member is coincident unless it is a reduction
dimension of its statement. The consecutive statements of a stepped loop
(`poly.stmt ... loop "t" dim 0`: a recurrence) share one filter instead,
with a band over their steps (the loop dimension less its lower bound, not
coincident) above the sequence of their identity bands without it: each
step runs them in order. Such a subtree executes its statements in program
order, so it may replace any subtree of a valid schedule.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from itertools import groupby

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


def identity_band(stmt: StmtOp, parallel_reduction: bool = False, without: int | None = None) -> BandOp | None:
    """The statement's permutable identity band (None for a 0-d statement);
    with `parallel_reduction` (its update combined by atomics), the
    reduction dimensions are coincident too; dimension `without` left out."""
    domain = isl.Set(stmt.domain.data)
    n_dim = domain.dim(isl.dim_type.set)
    identity = isl.Map.identity(domain.get_space().map_from_set())
    if without is not None:
        identity = identity.project_out(isl.dim_type.out, without, 1)
    members = [k for k in range(n_dim) if k != without]
    if not members:
        return None
    partial = isl.MultiUnionPwAff.from_union_map(
        isl.UnionMap.from_map(identity.reset_tuple_id(isl.dim_type.out))
    )
    reductions = reduction_dims(stmt)
    coincident = [parallel_reduction or k not in reductions for k in members]
    return BandOp(partial.to_str(), coincident, permutable=True)


def statement_filter(stmt: StmtOp) -> str:
    """The filter selecting all instances of `stmt`, e.g. `{ S0[i, j] }`."""
    space = isl.Set(stmt.domain.data).get_space()
    return isl.UnionSet.from_set(isl.Set.universe(space)).to_str()


Loop = tuple[str, int] | None
"""A statement's stepped loop: its label and the dimension of its steps."""


def steps(loops: Sequence[Loop]) -> Iterator[list[int]]:
    """The positions of the statements of `loops` in order, grouped: one
    statement, or the consecutive statements of one stepped loop."""
    for _, group in groupby(range(len(loops)), key=lambda k: loops[k][0] if loops[k] else -1 - k):  # type: ignore[index]
        yield list(group)


def step_of(domain: isl.Set, dim: int) -> isl.PwAff:
    """The step of each instance of a stepped loop's statement of `domain`:
    its dimension `dim` less that dimension's lower bound."""
    space = domain.get_space()
    local = isl.LocalSpace.from_space(space)
    index = isl.PwAff.from_aff(isl.Aff.var_on_domain(local, isl.dim_type.set, dim))
    lower = domain.dim_min(dim).add_dims(isl.dim_type.in_, domain.dim(isl.dim_type.set))
    lower = lower.set_tuple_id(isl.dim_type.in_, space.get_tuple_id(isl.dim_type.set))
    return index.sub(lower).gist(domain)


def program_order(statements: Sequence[tuple[str, Loop]]) -> isl.UnionMap:
    """Each instance of the statements (domain text, stepped loop) -> its
    place in program order (lexicographic): `S[i] -> [k, i, 0...]` for the
    `k`-th statement, `S[i] -> [k, step, q, i', 0...]` for the `q`-th
    statement of a stepped loop that comes `k`-th (`i'`: the dimensions but
    the loop's)."""
    domains = [isl.Set(text) for text, _ in statements]
    loops = [loop for _, loop in statements]
    width = 1 + max((d.dim(isl.dim_type.set) + (loop is not None) for d, loop in zip(domains, loops)), default=0)
    order: isl.UnionMap | None = None
    for position, group in enumerate(steps(loops)):
        for place, k in enumerate(group):
            domain, loop = domains[k], loops[k]
            local = isl.LocalSpace.from_space(domain.get_space())

            def value(k: int) -> isl.PwAff:
                return isl.PwAff.from_aff(isl.Aff.val_on_domain(local, isl.Val.int_from_si(domain.get_ctx(), k)))

            def index(d: int) -> isl.PwAff:
                return isl.PwAff.from_aff(isl.Aff.var_on_domain(local, isl.dim_type.set, d))

            dims = range(domain.dim(isl.dim_type.set))
            if loop is None:
                parts = [value(position), *map(index, dims)]
            else:
                parts = [value(position), step_of(domain, loop[1]), value(place), *(index(d) for d in dims if d != loop[1])]
            parts += [value(0)] * (width - len(parts))
            relation = isl.Map.from_pw_aff(parts[0])
            for part in parts[1:]:
                relation = relation.flat_range_product(isl.Map.from_pw_aff(part))
            piece = isl.UnionMap.from_map(relation.intersect_domain(domain))
            order = piece if order is None else order.union(piece)
    assert order is not None, "a scop has statements"
    return order


def _step_band(group: Sequence[StmtOp], parallel_reductions: Collection[StmtOp]) -> BandOp:
    """The band over the steps of a stepped loop's statements, above their
    sequence (or band) of the other dimensions."""
    schedule = None
    for stmt in group:
        assert stmt.step_loop is not None
        part = isl.UnionPwAff.from_pw_aff(step_of(isl.Set(stmt.domain.data), stmt.step_loop[1]))
        schedule = part if schedule is None else schedule.union_add(part)
    assert schedule is not None
    below: list[ScheduleNodeOp | None] = [
        identity_band(s, s in parallel_reductions, without=s.step_loop[1] if s.step_loop else None) for s in group
    ]
    child = below[0] if len(group) == 1 else SequenceOp(
        [FilterOp(statement_filter(s), band) for s, band in zip(group, below)]
    )
    partial = isl.MultiUnionPwAff.from_union_pw_aff(schedule)
    return BandOp(partial.to_str(), [False], True, None, child)


def canonical_subtree(
    statements: Sequence[StmtOp], parallel_reductions: Collection[StmtOp] = ()
) -> ScheduleNodeOp | None:
    """The canonical tree below the domain node (None: a leaf); the
    reduction dimensions of `parallel_reductions` are coincident."""
    parts: list[tuple[str, ScheduleNodeOp | None]] = []
    for positions in steps([s.step_loop for s in statements]):
        group = [statements[k] for k in positions]
        if group[0].step_loop is None:
            stmt = group[0]
            parts.append((statement_filter(stmt), identity_band(stmt, stmt in parallel_reductions)))
        else:
            union = isl.UnionSet(statement_filter(group[0]))
            for stmt in group[1:]:
                union = union.union(isl.UnionSet(statement_filter(stmt)))
            parts.append((union.to_str(), _step_band(group, parallel_reductions)))
    if len(parts) == 1:
        return parts[0][1]
    return SequenceOp([FilterOp(text, subtree) for text, subtree in parts])
