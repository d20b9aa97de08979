"""Temporaries laid out for the contractions that write them.

The default GPU mapping's register tiles take the last two output indices
of a contraction as its rows and columns, each indexing one operand only (a
GEMM's m and n), and the indices before them as a batch. A bilinear layer
sums through a temporary written in another order,

    T(b, o, j) +=! X1(b, i) * W(o, i, j)
    Y(b, o) +=! T(b, o, j) * X2(b, j)

(`b` indexes X1 only, `o` and `j` W only): as written, T's last two indices
both index W, and its sum would take the plain mapping. The layout of a
temporary is the compiler's to choose (the caller never sees it), so the
default GPU mapping lowers such a def with the temporary's indices reordered
(`contraction_layouts`): the row and the column last, `T(o, b, j)`, a
product of 256 x 128 matrices batched over `o`, and every read of it alike.

An output's layout is the caller's. Where a contraction writes one with a
batch index (one that both operands read) among its last two, as attention
merging its heads does,

    O(b, l, h, d) +=! P(b, h, l, j) * V(b, h, j, d)

the sum goes to a temporary in the contraction's order, `T(b, h, l, d)`, and
a copy statement writes the output from it: a batched GEMM and a transpose,
where the output's own order would make no GEMM at all.
"""

from __future__ import annotations

from dataclasses import replace

from . import ast as A
from .subscripts import accesses, index_names, operand_reads, rebuild


def contraction_layouts(definition: A.CheckedDef) -> A.CheckedDef | None:
    """`definition` with each temporary that a contraction writes listed as
    `_contraction_order` says, in its writes, its reads and its shape, and
    each output of `_outputs_through_temporaries` summed into such a
    temporary and copied from it; None where nothing changes."""
    orders: dict[str, list[int]] = {}
    for temporary in definition.temporaries:
        writers = [s for s in definition.stmts if s.lhs == temporary.name]
        first = writers[0].lhs_indices if writers else []
        if any(s.lhs_indices != first or s.loop is not None or s.scatter is not None for s in writers):
            continue
        contraction = next((s for s in writers if s.reduces), None)
        order = _contraction_order(contraction) if contraction is not None else None
        if order is not None:
            orders[temporary.name] = [first.index(i) for i in order]
    through = _outputs_through_temporaries(definition)
    if not orders and not through:
        return None
    temporaries = [
        replace(p, dims=[p.dims[k] for k in orders[p.name]]) if p.name in orders else p for p in definition.temporaries
    ]
    names: dict[str, str] = {}  # output -> its temporary
    for output in definition.outputs:
        if output.name in through:
            names[output.name] = _fresh_name(definition, f"{output.name}_laid_out")
            temporaries.append(replace(output, name=names[output.name], dims=[output.dims[k] for k in through[output.name]]))
    last = {s.lhs: k for k, s in enumerate(definition.stmts)}
    stmts = []
    for position, stmt in enumerate(definition.stmts):
        if stmt.lhs not in names:
            lhs = [stmt.lhs_indices[k] for k in orders[stmt.lhs]] if stmt.lhs in orders else stmt.lhs_indices
            stmts.append(replace(stmt, lhs_indices=lhs, rhs=_reads_permuted(stmt.rhs, orders)))
            continue
        order, temporary = through[stmt.lhs], names[stmt.lhs]
        permuted = [stmt.lhs_indices[j] for j in order]
        rhs = _reads_permuted(stmt.rhs, {**orders, temporary: order}, {stmt.lhs: temporary})
        stmts.append(replace(stmt, lhs=temporary, lhs_indices=permuted, rhs=rhs))
        if position == last[stmt.lhs]:  # then the copy into the output
            dtype = next(p.dtype for p in definition.outputs if p.name == stmt.lhs)
            copy = A.Access(
                type=dtype, loc=stmt.loc, tensor=temporary,
                subscripts=[A.IndexVar(loc=stmt.loc, name=i) for i in permuted],
            )
            ranges = {i: stmt.ranges[i] for i in stmt.lhs_indices}
            stmts.append(A.Stmt(
                loc=stmt.loc, lhs=stmt.lhs, lhs_indices=stmt.lhs_indices, op="=", reduction_indices=[], ranges=ranges,
                rhs=copy,
            ))
    return replace(definition, temporaries=temporaries, stmts=stmts)


def _outputs_through_temporaries(definition: A.CheckedDef) -> dict[str, list[int]]:
    """The outputs whose first writer is a contraction with a batch index
    (read by both operands) among the last two of its output indices, all
    of whose writers have those indices, and that only they read (as
    `O(b,l,h,d) = O(b,l,h,d) / Z(b,h,l)` does), each with the positions of
    its indices in `_contraction_order`'s order."""
    found: dict[str, list[int]] = {}
    for output in definition.outputs:
        writers = [s for s in definition.stmts if s.lhs == output.name]
        if not writers or any(
            s.lhs_indices != writers[0].lhs_indices or s.loop is not None or s.scatter is not None for s in writers
        ):
            continue
        # (A writer reads it at the point it writes: the language allows no other.)
        if any(s.lhs != output.name and any(a.tensor == output.name for a in accesses(s.rhs)) for s in definition.stmts):
            continue
        first = writers[0]
        operands = operand_reads(first)
        batch = set.intersection(*(index_names(r) for r in operands)) if first.reduces and len(operands) == 2 else set()
        order = _contraction_order(first) if batch & set(first.lhs_indices[-2:]) else None
        if order is not None:
            found[output.name] = [first.lhs_indices.index(i) for i in order]
    return found


def _fresh_name(definition: A.CheckedDef, name: str) -> str:
    """`name`, or it with underscores appended, that no tensor of `definition` has."""
    taken = {p.name for p in (*definition.inputs, *definition.outputs, *definition.temporaries)}
    while name in taken:
        name += "_"
    return name


def _contraction_order(stmt: A.Stmt) -> list[str] | None:
    """The left-hand indices of a sum of products of two reads subscripted
    by plain indices, reordered so that the last two index one read each
    (the column one that a read has as its last subscript, where there is
    one: its tile is read along it), the others before them in their order;
    None where the last two already do, or no two can (a convolution's
    shifted subscripts keep their layout: its templates know it)."""
    reads = operand_reads(stmt)
    if len(reads) != 2 or not all(isinstance(e, A.IndexVar) for r in reads for e in r.subscripts):
        return None
    lhs = stmt.lhs_indices
    used = [index_names(r) & set(lhs) for r in reads]
    only = [used[0] - used[1], used[1] - used[0]]
    if len(lhs) < 2 or not all(only) or {lhs[-2], lhs[-1]} & only[0] and {lhs[-2], lhs[-1]} & only[1]:
        return None
    last = [r.subscripts[-1].name if r.subscripts else None for r in reads]  # pyright: ignore[reportAttributeAccessIssue]
    side = next((k for k in (1, 0) if last[k] in only[k]), None)
    if side is None:  # the read of the later index
        side = 1 if max(map(lhs.index, only[1])) > max(map(lhs.index, only[0])) else 0
    column = last[side] if last[side] in only[side] else max(only[side], key=lhs.index)
    row = max(only[1 - side], key=lhs.index)
    order = [i for i in lhs if i not in (row, column)] + [row, column]
    return None if order == lhs else order


def _reads_permuted(e: A.Expr, orders: dict[str, list[int]], renames: dict[str, str] | None = None) -> A.Expr:
    """`e` with its reads of each tensor of `renames` reading the tensor it
    names instead, and the subscripts of its reads of each tensor of `orders`
    (after renaming) in that order."""
    renames = renames or {}

    def leaf(node: A.Expr) -> A.Expr | None:
        if not isinstance(node, A.Access):
            return None
        tensor = renames.get(node.tensor, node.tensor)
        if tensor not in orders:
            return None
        subscripts = [rebuild(s, leaf, memo) for s in node.subscripts]
        return replace(node, tensor=tensor, subscripts=[subscripts[k] for k in orders[tensor]])

    memo: dict[int, A.Expr] = {}
    return rebuild(e, leaf, memo)
