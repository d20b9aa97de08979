"""From checked subscript expressions to `Lin` forms and `AffineExpr`s."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from typing import TypeGuard

from xdsl.ir.affine import AffineExpr

from . import ast as A
from .dtypes import is_integral
from .linear import Lin, from_affine


def expr_to_lin(e: A.Expr, size_params: Sequence[str]) -> Lin | None:
    """The `Lin` of an integer expression built from indices, sizes, int scalars,
    integer constants, `+`, `-` and `*`; None if it has any other part (an access,
    a division, a float ...)."""
    if isinstance(e, A.Const):
        return Lin.const(e.value) if isinstance(e.value, int) and not isinstance(e.value, bool) else None
    if isinstance(e, A.IndexVar):
        return Lin.atom(e.name)
    if isinstance(e, A.ScalarParam):
        return Lin.atom(e.name) if is_integral(e.type) and e.type != "bool" else None
    if isinstance(e, A.SizeRef):
        return from_affine(e.expr, (), size_params)
    if isinstance(e, A.Cast):
        ok = is_integral(e.type) and is_integral(e.x.type) and "bool" not in (e.type, e.x.type)
        return expr_to_lin(e.x, size_params) if ok else None
    if isinstance(e, A.Unary) and e.op == "-":
        x = expr_to_lin(e.x, size_params)
        return None if x is None else -x
    if isinstance(e, A.Binary) and e.op in ("+", "-", "*"):
        a = expr_to_lin(e.a, size_params)
        b = expr_to_lin(e.b, size_params)
        if a is None or b is None:
            return None
        return a + b if e.op == "+" else a - b if e.op == "-" else a * b
    return None


def subscript_to_affine(
    expr: A.Expr, index_names: Sequence[str], size_params: Sequence[str]
) -> AffineExpr | None:
    """`expr` as an AffineExpr with d_k = index_names[k] and s_k = size_params[k].

    None when the subscript is indirect (reads a tensor) or not (semi-)affine.
    A size parameter times an index (`sh * h`) gives a semi-affine product.
    """
    lin = expr_to_lin(expr, size_params)
    return None if lin is None else lin.to_affine(index_names, size_params)


def walk(e: A.Expr) -> Iterator[A.Expr]:
    """All nodes of `e` in pre-order, left to right (iterative: no recursion limit)."""
    stack = [e]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(children(node)))


def accesses(e: A.Expr) -> list[A.Access]:
    """The tensor reads of `e` (and of their subscripts), in pre-order."""
    return [n for n in walk(e) if isinstance(n, A.Access)]


def operand_reads(stmt: A.Stmt) -> list[A.Access]:
    """The reads of `stmt` of tensors other than its own output."""
    return [n for n in accesses(stmt.rhs) if n.tensor != stmt.lhs]


def index_names(e: A.Expr) -> set[str]:
    """The index variables that `e` uses (a read's: those of its subscripts)."""
    return {n.name for n in walk(e) if isinstance(n, A.IndexVar)}


def beside(read: A.Access, these: set[str], wanted: set[str]) -> set[str]:
    """The indices of `wanted` in the subscripts of `read` that also use one
    of `these` (a convolution's tap `kh` beside `h` in `I(n, c, h + kh, w)`)."""
    found: set[str] = set()
    for subscript in read.subscripts:
        names = index_names(subscript)
        if names & these:
            found |= names & wanted
    return found


def summed_shifts(stmt: A.Stmt) -> set[str]:
    """The reduction indices that share a read's subscript with an output
    index (a convolution's taps `kh`, `kw` in `I(n, c, h + kh, w + kw)`)."""
    outputs, reductions = set(stmt.lhs_indices), set(stmt.reduction_indices)
    return {i for read in accesses(stmt.rhs) for i in beside(read, outputs, reductions)}


def innermost_contiguous(indices: Sequence[str], e: A.Expr) -> list[str]:
    """`indices` (reduction indices in order of first use) as loops nest best
    for locality: the outermost those that subscript only outer dimensions
    of the reads in `e`, innermost one in a read's last subscript (a padded
    convolution written with its guard first, `kh` and `kw` used before `c`,
    still runs over `kw` innermost). Ties keep their order; an index in no
    subscript goes outermost."""
    reads = [r for r in walk(e) if isinstance(r, A.Access) and r.subscripts]

    def names(sub: A.Expr) -> set[str]:
        return {n.name for n in walk(sub) if isinstance(n, A.IndexVar)}

    def distance(index: str) -> int:
        """The fewest dimensions after the last one `index` subscripts, over the reads."""
        found = [
            len(r.subscripts) - 1 - max(k for k, sub in enumerate(r.subscripts) if index in names(sub))
            for r in reads
            if any(index in names(sub) for sub in r.subscripts)
        ]
        return min(found, default=len(indices) + max((len(r.subscripts) for r in reads), default=0))

    return sorted(indices, key=distance, reverse=True)


def gathers(e: A.Expr) -> bool:
    """Whether `e` reads a tensor at a subscript that reads a tensor (`LUT(I(i,k), j)`)."""
    return any(accesses(sub) for node in accesses(e) for sub in node.subscripts)


def zero_else(e: A.Expr) -> TypeGuard[A.Ternary]:
    """Whether `e` is `c ? v : 0` (a number zero, not `false`): a sum adds
    nothing, and a scatter writes nothing, where `c` fails."""
    return isinstance(e, A.Ternary) and isinstance(e.b, A.Const) and not isinstance(e.b.value, bool) and e.b.value == 0


def guarded_walk(e: A.Expr) -> Iterator[tuple[A.Expr, tuple[tuple[A.Ternary, bool], ...]]]:
    """As `walk`, each node with the ternaries whose branch it sits in
    (outermost first; True for the `a` branch, False for `b`)."""
    stack: list[tuple[A.Expr, tuple[tuple[A.Ternary, bool], ...]]] = [(e, ())]
    while stack:
        node, guards = stack.pop()
        yield node, guards
        if isinstance(node, A.Ternary):
            stack.extend([(node.b, (*guards, (node, False))), (node.a, (*guards, (node, True))), (node.c, guards)])
        else:
            stack.extend((child, guards) for child in reversed(children(node)))


def condition_cases(c: A.Expr, taken: bool, size_params: Sequence[str]) -> list[list[Lin]] | None:
    """`c` (or its negation when not `taken`) as cases, each a conjunction of
    `lin >= 0` constraints, one of which holds (`t != 0`: `t >= 1` or
    `t <= -1`); None when a case is not an affine comparison of integers.
    An unknown part of a conjunction is left out (the cases then hold more
    often, which keeps a bounds check made under them sound)."""
    if isinstance(c, A.Binary) and c.op in ("&&", "||"):
        a = condition_cases(c.a, taken, size_params)
        b = condition_cases(c.b, taken, size_params)
        if (c.op == "&&") == taken:  # a conjunction
            return [x + y for x in (a or [[]]) for y in (b or [[]])]
        return None if a is None or b is None else a + b
    if isinstance(c, A.Unary) and c.op == "!":
        return condition_cases(c.x, not taken, size_params)
    if not (isinstance(c, A.Binary) and c.op in ("<", "<=", ">", ">=", "==", "!=")):
        return None
    a, b = expr_to_lin(c.a, size_params), expr_to_lin(c.b, size_params)
    if a is None or b is None:
        return None
    op = c.op if taken else {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!=", "!=": "=="}[c.op]
    return {
        ">=": [[a - b]], ">": [[a - b - 1]], "<=": [[b - a]], "<": [[b - a - 1]],
        "==": [[a - b, b - a]], "!=": [[a - b - 1], [b - a - 1]],
    }[op]


def children(e: A.Expr) -> list[A.Expr]:
    """The operand expressions of `e`, in source order."""
    if isinstance(e, A.Access):
        return list(e.subscripts)
    if isinstance(e, A.Call):
        return list(e.args)
    if isinstance(e, (A.Unary, A.Cast)):
        return [e.x]
    if isinstance(e, A.Binary):
        return [e.a, e.b]
    if isinstance(e, A.Ternary):
        return [e.c, e.a, e.b]
    return []


def measure(e: A.Expr, memo: dict[int, tuple[int, int]]) -> tuple[int, int]:
    """(depth, size) of `e` as a tree (shared nodes counted at every use), memoized by id."""
    stack: list[tuple[A.Expr, bool]] = [(e, False)]
    while stack:
        node, done = stack.pop()
        if id(node) in memo:
            continue
        kids = children(node)
        if done:
            stats = [memo[id(k)] for k in kids]
            memo[id(node)] = (1 + max((d for d, _ in stats), default=0), 1 + sum(s for _, s in stats))
        else:
            stack.append((node, True))
            stack.extend((k, False) for k in kids if id(k) not in memo)
    return memo[id(e)]


def rebuild(e: A.Expr, leaf: Callable[[A.Expr], A.Expr | None], memo: dict[int, A.Expr] | None = None) -> A.Expr:
    """`e` with every node that `leaf` maps (to a non-None) replaced, shared nodes once."""
    memo = {} if memo is None else memo
    done = memo.get(id(e))
    if done is not None:
        return done
    result = leaf(e)
    if result is None:
        match e:
            case A.Access():
                result = replace(e, subscripts=[rebuild(s, leaf, memo) for s in e.subscripts])
            case A.Call():
                result = replace(e, args=[rebuild(s, leaf, memo) for s in e.args])
            case A.Unary() | A.Cast():
                result = replace(e, x=rebuild(e.x, leaf, memo))
            case A.Binary():
                result = replace(e, a=rebuild(e.a, leaf, memo), b=rebuild(e.b, leaf, memo))
            case A.Ternary():
                result = replace(e, c=rebuild(e.c, leaf, memo), a=rebuild(e.a, leaf, memo), b=rebuild(e.b, leaf, memo))
            case _:
                result = e
    memo[id(e)] = result
    return result
