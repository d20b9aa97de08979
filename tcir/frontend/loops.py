"""`for t in lo:hi { ... }` loops: which ones tcir runs, statement by statement.

TC runs the statements of a loop in order for each `t`. tcir gives each
statement the loop's range (`where t in lo:hi`) and runs them one after
the other, each over all of its `t`, which computes the same values when,
within a loop, every statement indexes its left-hand side with `t`, reads
a tensor an earlier statement of the loop writes only at `t` or an earlier
step (`t - c`, `c >= 0`), and reads its own tensor only at the step it
writes: each read then finds what the loop's order would have written
there by then. Loops beyond this (a recurrence within one statement, a read
of a later statement or of a later step) are an error here, not a
different result.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import fields

from tcir.errors import TypeError_

from . import syntax as S
from .source import Source


def check_loops(src: Source, definition: S.Def) -> None:
    """A `TypeError_` at the first statement of `definition`'s loops that
    the statement-by-statement order would compute differently."""
    stmts = definition.stmts
    for stmt in stmts:
        loop = stmt.loop
        if loop is None:
            continue
        position = _loop_position(stmt, loop.name)
        if position is None:
            raise src.error(
                TypeError_, f"a statement of the 'for {loop.name}' loop must index its "
                f"left-hand side with '{loop.name}'", stmt.pos, stmt.length)
        members = [s for s in stmts if s.loop is loop]
        writers = {s.lhs: s for s in members}
        later = {s.lhs for s in members[members.index(stmt) + 1 :]}
        for access in _accesses(stmt):
            if access.name not in writers:
                continue
            if access.name == stmt.lhs and not (
                position < len(access.args)
                and isinstance(access.args[position], S.Name)
                and access.args[position].name == loop.name
            ):
                raise src.error(
                    TypeError_, f"'{access.name}' reads itself at another step of the 'for "
                    f"{loop.name}' loop; tcir runs a loop's statements one after the other, "
                    f"each over all steps: a recurrence needs a statement per step",
                    access.pos, access.length)
            if access.name in later:
                raise src.error(
                    TypeError_, f"'{access.name}' is read before a later statement of the "
                    f"'for {loop.name}' loop writes it; tcir runs a loop's statements one "
                    f"after the other", access.pos, access.length)
            where = _loop_position(writers[access.name], loop.name)
            if where is None or where >= len(access.args) or not _now_or_before(
                access.args[where], loop.name
            ):
                raise src.error(
                    TypeError_, f"'{access.name}' is written in the 'for {loop.name}' loop; "
                    f"read it at '{loop.name}' or an earlier step ('{loop.name} - 1')",
                    access.pos, access.length)


def _loop_position(stmt: S.Statement, index: str) -> int | None:
    """Where the loop index subscripts the statement's left-hand side."""
    for k, arg in enumerate(stmt.args):
        if isinstance(arg, S.Name) and arg.name == index:
            return k
    return None


def _now_or_before(subscript: S.Node, index: str) -> bool:
    """`t`, or `t - c` with a non-negative integer `c`."""
    if isinstance(subscript, S.Name):
        return subscript.name == index
    return (
        isinstance(subscript, S.Binary)
        and subscript.op == "-"
        and isinstance(subscript.a, S.Name)
        and subscript.a.name == index
        and isinstance(subscript.b, S.Num)
        and not subscript.b.is_float
        and subscript.b.value >= 0
    )


def _accesses(stmt: S.Statement) -> Iterator[S.Apply]:
    """Every `name(args)` of the statement's right-hand side and where clauses."""
    roots: list[S.Node] = [stmt.rhs]
    for where in stmt.wheres:
        if isinstance(where, S.WhereLet | S.WhereExists):
            roots.append(where.expr)
    for root in roots:
        yield from (n for n in _nodes(root) if isinstance(n, S.Apply))


def _nodes(node: S.Node) -> Iterator[S.Node]:
    yield node
    for f in fields(node):
        value = getattr(node, f.name)
        children = value if isinstance(value, tuple) else (value,)
        for child in children:
            if isinstance(child, S.Node):
                yield from _nodes(child)
