"""Index variables that always go together, collapsed into one.

A projection written with its heads apart (an einsum's `btd,hed->bthe`),

    Q(b, t, h, e) +=! X(b, t, d) * W(h, e, d)

is a matrix product whose rows are the `(b, t)` pairs and whose columns
are the `(h, e)` pairs: every tensor holds `b` and `t` (and `h` and `e`)
side by side, in that order, over its whole extents. Row-major, the pair
is one index over `B * T` elements of the same buffer:

    Q(b_t, h_e) +=! X(b_t, d) * W(h_e, d)

over tensors of the sizes `B_T` and `H_E`. The default GPU mapping lowers
such a def as its collapsed form (`tcir.compiler.lowering`), whose
templates (a contraction's register tiles) the uncollapsed def misses:
the same buffers, viewed with fewer dimensions (`memref.collapse_shape`).

A sum of one tensor collapses alike: the per-channel mean of a
channels-last image, `m(c) +=! X(n, h, w, c) / (N * H * W)`, is the
column sum `m(c) +=! X(n_h_w, c) / N_H_W`.

A run of indices collapses where, in the left-hand side and every read,
either none of them or all of them appear, as whole subscripts, next to
each other and in the same order, each over its tensor's whole extent (a
size of its own). The def has one statement, no scatter or stepped loop,
and reads the sizes of a run as values only as their whole product.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from xdsl.ir.affine import AffineSymExpr

from . import ast as A
from .subscripts import rebuild, walk
from .unparse import expr_text, type_text


@dataclass(frozen=True)
class Collapsed:
    """A def's collapsed form: `definition` over the sizes `products` (each
    the product of the original sizes it names, in order)."""

    definition: A.CheckedDef
    products: dict[str, tuple[str, ...]]

    def sizes(self, sizes: dict[str, int]) -> dict[str, int]:
        """The collapsed def's sizes, from the original def's."""
        return sizes | {name: math.prod(sizes[f] for f in factors) for name, factors in self.products.items()}


class _Uncollapsible(Exception):
    """A size of a run read as a value other than in the run's whole product."""


def _accesses(stmt: A.Stmt) -> list[tuple[str, list[str]]] | None:
    """The tensor and index names of the left-hand side and of every read,
    None where a subscript is not a plain index."""
    result = [(stmt.lhs, list(stmt.lhs_indices))]
    for node in walk(stmt.rhs):
        if isinstance(node, A.Access):
            if not all(isinstance(s, A.IndexVar) for s in node.subscripts):
                return None
            result.append((node.tensor, [s.name for s in node.subscripts if isinstance(s, A.IndexVar)]))
    return result


def _runs(accesses: list[tuple[str, list[str]]], order: list[str]) -> list[list[str]]:
    """Maximal runs of indices (in `order`'s order) that every access holds
    all or none of, adjacent and in order."""
    def follows(a: str, b: str) -> bool:
        for _, names in accesses:
            if (a in names) != (b in names):
                return False
            if a in names and names.index(b) != names.index(a) + 1:
                return False
        return True

    runs: list[list[str]] = []
    for index in order:
        if runs and follows(runs[-1][-1], index):
            runs[-1].append(index)
        else:
            runs.append([index])
    return runs


def _merged(read: A.Access, index_of: dict[str, str]) -> A.Access:
    """`read` with each run of its indices one index (`b, t` becomes `b_t`)."""
    names = dict.fromkeys(index_of[s.name] for s in read.subscripts if isinstance(s, A.IndexVar))
    return replace(read, subscripts=[A.IndexVar(name=n, loc=read.loc) for n in names])


def _size_factors(e: A.Expr, sizes: list[str]) -> list[str] | None:
    """The sizes whose product `e` is (`N * H * W`), None for other expressions."""
    match e:
        case A.SizeRef(expr=AffineSymExpr(position=position)):
            return [sizes[position]]
        case A.Binary(op="*"):
            a, b = _size_factors(e.a, sizes), _size_factors(e.b, sizes)
            return None if a is None or b is None else a + b
    return None


def _merged_sizes(e: A.Expr, sizes: list[str], products: dict[str, tuple[str, ...]], kept: set[str]) -> A.Expr | None:
    """`e`, a product of sizes, with each run's whole product one size
    (`N * H * W` becomes `N_H_W`); None for other expressions (left as they
    are). Raises `_Uncollapsible` where a size of a run is read otherwise,
    or a size that no tensor of the collapsed def has (`kept` are those)."""
    run_sizes = {f for factors in products.values() for f in factors}
    factors = _size_factors(e, sizes)
    if factors is None:
        if isinstance(e, A.SizeRef) and not {sizes[x.position] for x in e.expr.dfs() if isinstance(x, AffineSymExpr)} <= kept:
            raise _Uncollapsible
        return None
    if not set(factors) & run_sizes:
        if not set(factors) <= kept:
            raise _Uncollapsible
        return None
    for name, run in products.items():
        if all(factors.count(f) >= run.count(f) for f in run):
            for f in run:
                factors.remove(f)
            factors.append(name)
    if not set(factors) <= kept | set(products):
        raise _Uncollapsible
    named = [*sizes, *products]
    refs = [A.SizeRef(expr=AffineSymExpr(named.index(f)), text=f, loc=e.loc) for f in factors]
    product = refs[0]
    for ref in refs[1:]:
        product = A.Binary(op="*", a=product, b=ref, type=ref.type, loc=e.loc)
    return product


def collapsed(definition: A.CheckedDef) -> Collapsed | None:
    """`definition` with its runs of indices collapsed (see the module);
    None where no run of two or more indices qualifies."""
    if len(definition.stmts) != 1 or definition.temporaries or definition.derived_sizes:
        return None
    stmt = definition.stmts[0]
    if stmt.scatter is not None or stmt.loop is not None or stmt.where or not stmt.reduces:
        return None
    accesses = _accesses(stmt)
    if accesses is None or len(accesses) < 2:
        return None
    if len({t for t, _ in accesses}) != len(accesses):
        return None  # a tensor read twice (a Gram matrix) may pair its indices otherwise
    sizes = definition.size_params
    extent: dict[str, str] = {}  # each index's size
    for tensor, names in accesses:
        for name, dim in zip(names, definition.tensor(tensor).dims, strict=True):
            lo, hi = stmt.ranges[name]
            if not isinstance(dim, AffineSymExpr) or hi != dim or str(lo) != "0":
                return None
            if extent.setdefault(name, sizes[dim.position]) != sizes[dim.position]:
                return None
    if any(not p.is_scalar and p.name not in dict(accesses) for p in definition.inputs):
        return None  # an input no statement reads
    runs = _runs(accesses, [*stmt.lhs_indices, *stmt.reduction_indices])
    if all(len(run) == 1 for run in runs):
        return None
    index_of = {i: "_".join(run) for run in runs for i in run}
    size_of = {"_".join(run): "_".join(extent[i] for i in run) for run in runs}
    products = {size_of["_".join(run)]: tuple(extent[i] for i in run) for run in runs if len(run) > 1}
    taken = {*sizes, *(p.name for p in (*definition.inputs, *definition.outputs)), *stmt.ranges}
    if taken & ({*products} | {index_of[i] for i in stmt.ranges if index_of[i] != i}):
        return None

    def declared(param: A.Param) -> str:  # `float(B_T, D) X`, `float s` for a scalar or a 0-d output
        if param.is_scalar or not param.dims:
            return f"{type_text(param.dtype)} {param.name}"
        merged = dict.fromkeys(index_of[i] for i in dict(accesses)[param.name])
        return f"{type_text(param.dtype)}({', '.join(size_of[i] for i in merged)}) {param.name}"

    inputs = ", ".join(declared(p) for p in definition.inputs)
    lhs = ", ".join(dict.fromkeys(index_of[i] for i in stmt.lhs_indices))
    kept = {extent[run[0]] for run in runs if len(run) == 1}

    def merged(node: A.Expr) -> A.Expr | None:
        return _merged(node, index_of) if isinstance(node, A.Access) else _merged_sizes(node, sizes, products, kept)

    try:
        rhs = expr_text(rebuild(stmt.rhs, merged), [*sizes, *products])
    except _Uncollapsible:
        return None
    text = (
        f"def {definition.name}({inputs}) -> ({declared(definition.outputs[0])}) {{\n"
        f"  {stmt.lhs}({lhs}) {stmt.op} {rhs}\n}}\n"
    )
    from . import parse

    (parsed,) = parse(text, f"<collapsed {definition.name}>")
    return Collapsed(parsed, products)
