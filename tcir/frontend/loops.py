"""`for t in lo:hi { ... }` loops: which run statement by statement, which step by step.

TC runs the statements of a loop in order for each `t`. Every statement of
a loop indexes its left-hand side with `t` and gets the loop's range
(`where t in lo:hi`). A statement may read what the loop writes only where
that is written by the time the step reads it: a tensor written by itself
(pointwise) or an earlier statement of the loop at `t` or an earlier step
(`t - c`, `c >= 0`), and a tensor written by itself or a later statement
only at an earlier step (`t - c`, `c >= 1`). Anything else (a later step,
a later statement's write of this step) is an error.

Where no statement reads its own tensor or a later statement's at an
earlier step, running each statement over all steps, one statement after
the other, computes the same values: tcir does so, and the steps stay
parallel. A loop with such a read (a recurrence: a cumulative sum, a moving
average, an RNN cell) is stepped: its `t` runs sequentially, each step
running the loop's statements in order (`Stmt.loop`), and only the other
indices run in parallel.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import fields

from tcir.errors import TypeError_

from . import syntax as S
from .source import Source


def check_loops(src: Source, definition: S.Def) -> set[S.Loop]:
    """The loops of `definition` that must run step by step; a `TypeError_`
    at the first read of a loop that no order of its steps computes."""
    stmts = definition.stmts
    stepped: set[S.Loop] = set()
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
            where = _loop_position(writers[access.name], loop.name)
            step = None if where is None or where >= len(access.args) else _steps_back(access.args[where], loop.name)
            if step is None or step < 0:
                raise src.error(
                    TypeError_, f"'{access.name}' is written in the 'for {loop.name}' loop; "
                    f"read it at '{loop.name}' or an earlier step ('{loop.name} - 1')",
                    access.pos, access.length)
            if step == 0 and access.name in later:
                raise src.error(
                    TypeError_, f"'{access.name}' is read at step '{loop.name}' before a later "
                    f"statement of the 'for {loop.name}' loop writes it there; read an earlier "
                    f"step ('{loop.name} - 1') or write it first", access.pos, access.length)
            if step > 0 and (access.name == stmt.lhs or access.name in later):
                stepped.add(loop)
    return stepped


def _loop_position(stmt: S.Statement, index: str) -> int | None:
    """Where the loop index subscripts the statement's left-hand side."""
    for k, arg in enumerate(stmt.args):
        if isinstance(arg, S.Name) and arg.name == index:
            return k
    return None


def _steps_back(subscript: S.Node, index: str) -> int | None:
    """`c` for `t - c` (`t`: 0, `t + c`: `-c`), `c` an integer; None for
    any other subscript."""
    if isinstance(subscript, S.Name):
        return 0 if subscript.name == index else None
    if (
        isinstance(subscript, S.Binary)
        and subscript.op in ("-", "+")
        and isinstance(subscript.a, S.Name)
        and subscript.a.name == index
        and isinstance(subscript.b, S.Num)
        and not subscript.b.is_float
    ):
        c = int(subscript.b.value)
        return c if subscript.op == "-" else -c
    return None


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
