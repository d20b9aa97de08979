"""Affine forms: subscript_to_affine, canonical bounds and their printing."""

from __future__ import annotations

from xdsl.ir.affine import AffineBinaryOpExpr, AffineBinaryOpKind, AffineDimExpr, AffineSymExpr

from tcir.frontend import Access, format_affine, subscript_to_affine
from tcir.frontend.linear import Lin, provably_le

from frontend_helpers import one


def subscripts(src: str) -> tuple[list[str], list[str], list]:  # type: ignore[type-arg]
    d = one(src)
    st = d.stmts[0]
    acc = st.rhs
    while not isinstance(acc, Access):
        acc = acc.a  # type: ignore[attr-defined]
    return st.loop_order, d.size_params, acc.subscripts


def test_affine_subscripts() -> None:
    dims, syms, subs = subscripts("def f(float(M) I, float(N) K) -> (O) { O(i) +=! I(i + x + N - 1) * K(x) }"
                                  .replace("i + x + N - 1", "2 * i - x + N - 1"))
    expr = subscript_to_affine(subs[0], dims, syms)
    assert expr is not None
    assert format_affine(expr, dims, syms) == "N + 2 * i - x - 1"
    assert expr.eval([3, 1], [10, 4]) == 4 + 6 - 1 - 1


def test_indirect_subscript_is_none() -> None:
    dims, syms, subs = subscripts("def g(float(N) X, int(A,B) I) -> (Z) { Z(i,j) = X(I(i,j)) }")
    assert subscript_to_affine(subs[0], dims, syms) is None


def test_semi_affine_subscript_with_int_scalar() -> None:
    dims, syms, subs = subscripts("def f(int s, float(H) I, float(K) W) -> (O) { O(h) +=! I(s * h + k) * W(k) }")
    expr = subscript_to_affine(subs[0], dims, syms)
    assert expr is not None and not expr.is_pure_affine()
    assert format_affine(expr, dims, syms) == "s * h + k"
    assert expr.eval([2, 1], [9, 3, 4]) == 4 * 2 + 1


def test_bounds_are_natural_affine_exprs() -> None:
    d = one("def conv1d(float(M) I, float(N) K) -> (O) { O(i) +=! K(x) * I(i + x) }")
    hi = d.stmts[0].ranges["i"][1]
    assert str(hi) == "((s0 + (s1 * -1)) + 1)"
    assert d.format(hi) == "M - N + 1"
    assert hi.eval([], [10, 3]) == 8


def test_floordiv_bounds() -> None:
    d = one("def p(float(H) I) -> (O) { O(i) max=! I(2 * i + k) where k in 0:3 }")
    hi = d.stmts[0].ranges["i"][1]
    assert isinstance(hi, AffineBinaryOpExpr) and hi.is_pure_affine()
    assert d.format(hi) == "(H + 1) floordiv 2 - 1"
    assert [hi.eval([], [h]) for h in (3, 4, 5, 6)] == [(h - 3) // 2 + 1 for h in (3, 4, 5, 6)]


def test_format_semi_affine() -> None:
    q = AffineBinaryOpExpr(AffineBinaryOpKind.FloorDiv,
                           AffineBinaryOpExpr(AffineBinaryOpKind.Add, AffineSymExpr(0), AffineDimExpr(0)),
                           AffineSymExpr(1))
    assert format_affine(q, ["i"], ["H", "s"]) == "(H + i) floordiv s"


def test_lin_canonical_forms() -> None:
    h = Lin.atom("H")
    assert str((h - 2).floordiv(2) + 1) == "H floordiv 2"
    assert str((h - 3).floordiv(2) + 1) == "(H + 1) floordiv 2 - 1"
    assert (h + h - h) == h
    assert provably_le(h - Lin.atom("K") + 1, h) and not provably_le(h, Lin.atom("K"))
