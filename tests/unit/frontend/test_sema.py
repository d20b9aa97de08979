"""Typing, implicit conversions and recorded semantics of the checked AST."""

from __future__ import annotations

import pytest

from tcir.frontend import Access, Binary, Call, Cast, Const, Ternary, Unary
from tcir.frontend.dtypes import promote
from tcir.frontend.subscripts import walk

from frontend_helpers import one


@pytest.mark.parametrize("a, b, result", [
    ("int32", "float32", "float32"), ("int64", "float16", "float16"),
    ("int32", "int64", "int64"), ("int32", "uint32", "uint32"), ("float16", "float64", "float64"),
    ("bool", "int8", "int8"), ("uint8", "int16", "int16"),
])
def test_promotion_like_c(a: str, b: str, result: str) -> None:
    assert promote(a, b) == result == promote(b, a)


def test_mixed_arithmetic_inserts_casts() -> None:
    e = one("def f(int(N) I, double(N) D) -> (O) { O(i) = I(i) + D(i) }").stmts[0].rhs
    assert isinstance(e, Binary) and e.type == "float64"
    assert isinstance(e.a, Cast) and e.a.type == "float64" and e.a.x.type == "int32"
    assert isinstance(e.b, Access)


def test_operand_types_are_explicit_everywhere() -> None:
    d = one("def f(int(N) I, float(N) A) -> (O) {"
            " O(i) = I(i) > A(i) && I(i) ? (I(i) % 2) : -A(i) + !I(i) }")
    for n in walk(d.stmts[0].rhs):
        if isinstance(n, Binary) and n.op in ("&&", "||"):
            assert n.a.type == n.b.type == n.type == "bool"
        elif isinstance(n, Binary):
            assert n.a.type == n.b.type
            assert n.type == ("bool" if n.op in ("<", ">", "==") else n.a.type)
        elif isinstance(n, Ternary):
            assert n.c.type == "bool" and n.a.type == n.b.type == n.type
        elif isinstance(n, Unary) and n.op == "!":
            assert n.x.type == "bool"
    assert d.stmts[0].rhs.type == d.tensor("O").dtype == "float32"


def test_integer_constants_fold_into_float_context() -> None:
    e = one("def f(float(N) A) -> (O) { O(i) = A(i) * 2 }").stmts[0].rhs
    assert isinstance(e, Binary) and e.b == Const(value=2.0, type="float32", loc=e.b.loc)


def test_builtin_result_types() -> None:
    d = one("def f(int(N) I, double(N) D) -> (O, P, Q, R) {"
            " O(i) = exp(I(i))  P(i) = exp(D(i))  Q(i) = max(I(i), 1)  R(i) = expf(D(i)) }")
    types = [(s.rhs.name, s.rhs.type) for s in d.stmts if isinstance(s.rhs, Call)]
    assert types == [("exp", "float32"), ("exp", "float64"), ("max", "int32"), ("exp", "float32")]
    assert [p.dtype for p in d.outputs] == ["float32", "float64", "int32", "float32"]


def test_output_type_joins_all_writes() -> None:
    d = one("def mv(float(M,K) A, float(K) x) -> (C) { C(i) = 0  C(i) += A(i,k) * x(k) }")
    assert d.tensor("C").dtype == "float32"
    assert d.stmts[0].rhs == Const(value=0.0, type="float32", loc=d.stmts[0].rhs.loc)


def test_explicit_cast_allows_narrowing() -> None:
    d = one("def f(float(N) A) -> (int32(N) O) { O(i) = int32(A(i)) }")
    assert isinstance(d.stmts[0].rhs, Cast) and d.stmts[0].rhs.type == "int32"


def test_widening_into_typed_output_is_implicit() -> None:
    d = one("def f(int(N) A) -> (double(N) O) { O(i) = A(i) }")
    assert isinstance(d.stmts[0].rhs, Cast) and d.stmts[0].rhs.type == "float64"


def test_reduction_semantics_recorded() -> None:
    d = one("def f(float(N,K) A) -> (O, P, Q) {"
            " O(i) +=! A(i,k)  P(i) += A(i,0)  Q(i) min=! A(i,k) * A(j,k) where j in 0:N }")
    o, p, q = d.stmts
    assert (o.reduces, o.initializes, o.reduction_kind, o.effective_op) == (True, True, "+", "+=!")
    assert (p.reduces, p.initializes, p.reduction_kind, p.effective_op) == (False, False, "+", "+=")
    # k subscripts the reads' last dimension: its loop is innermost.
    assert q.reduction_indices == ["j", "k"] and q.loop_order == ["i", "j", "k"]
    assert q.reduction_kind == "min"


def test_reduction_loops_nest_for_locality() -> None:
    """A padded convolution whose guard uses the taps before the reads use
    the channel runs over the channel outermost and `kw` innermost; ties
    keep their order of first use."""
    d = one("def f(float(N,C,H,W) I, float(F,C,KH,KW) Wt) -> (O) {"
            " O(n,f,h,w) +=! (h + kh >= 1 && w + kw >= 1) ? I(n,c,h + kh - 1,w + kw - 1) * Wt(f,c,kh,kw) : 0.0"
            " where h in 0:H, w in 0:W, kh in 0:KH, kw in 0:KW }")
    assert d.stmts[0].reduction_indices == ["c", "kh", "kw"]
    d = one("def f(float(N,K,K) A) -> (O) { O(i) +=! A(i,a,b) + A(i,b,a) }")
    assert d.stmts[0].reduction_indices == ["a", "b"]


def test_reduction_indices_in_order_of_first_appearance() -> None:
    d = one("def f(float(A,B,A) T) -> (O) { O(b) +=! T(z, b, y) * T(y, b, z) }")
    assert d.stmts[0].reduction_indices == ["z", "y"]


def test_temporaries_recorded() -> None:
    d = one("def f(float(N) A) -> (O) { T(i) = A(i) * 2  O(i) = T(i) + 1 }")
    assert [t.name for t in d.temporaries] == ["T"]
    assert [d.format(e) for e in d.temporaries[0].dims] == ["N"]


def test_pointwise_in_place_update_and_contraction_allowed() -> None:
    d = one("def f(float(N,N) b) -> (a) { a(i,j) = b(j,i)  a(i,j) = a(i,j) * 2"
            "  a(i,j) += b(i,k) * b(k,j) }")
    assert len(d.stmts) == 3


def test_int_scalar_in_subscript_becomes_size_param() -> None:
    d = one("def f(int sh, float a, float(N) A) -> (O) { O(i) = a * A(sh * i) }")
    assert d.size_params == ["N", "sh"] and d.scalar_size_params == {"sh"}
    assert d.format(d.tensor("O").dims[0]) == "(N - 1) floordiv sh + 1"


def test_int_scalar_in_range_becomes_size_param() -> None:
    d = one("def f(int k, float(N) A) -> (O) { O(i) +=! A(i) * j where j in 0:k }")
    assert d.scalar_size_params == {"k"}


def test_lets_are_inlined() -> None:
    d = one("def f(float(N) A) -> (O) { O(i) = y * y where x = A(i), y = x + 1 }")
    e = d.stmts[0].rhs
    assert isinstance(e, Binary) and e.a is e.b
    assert isinstance(e.a, Binary) and isinstance(e.a.a, Access)


# -- `for` loops: statement by statement, or step by step ---------------------------
RECURRENCES = """
def cumsum(float(T) X) -> (C) {
  for t in 0:T { C(t) = X(t) + (t > 0 ? C(t - 1) : 0.0) }
}
def rnn(float(T, B, I) x, float(B, J) h0, float(J, J) W, float(J, I) U) -> (h) {
  for t in 0:T {
    a(t, b, j) +=! W(j, k) * (t > 0 ? h(t - 1, b, k) : h0(b, k))
    a(t, b, j) += U(j, i) * x(t, b, i)
    h(t, b, j) = tanh(a(t, b, j))
  }
}
def pair_sums(float(T, N) X) -> (A, B) {
  for t in 0:T {
    A(t, i) = X(t, i) * 2.0
    B(t, i) = t != 0 ? A(t - 1, i) + A(t, i) : A(t, i)
  }
}
def two_loops(float(T) X) -> (C, D) {
  for t in 0:T { C(t) = X(t) + (t > 0 ? C(t - 1) : 0.0) }
  for t in 0:T { D(t) = C(t) * (t > 0 ? D(t - 1) : 1.0) }
}
"""


def test_a_loop_with_a_recurrence_runs_step_by_step() -> None:
    """A statement reading its own tensor at an earlier step, or a later
    statement's: the loop is stepped (each statement's `loop`), and a
    tensor read before the statement that writes it gets that statement's
    type. A loop without such a read runs statement by statement (its steps
    stay parallel)."""
    from tcir.frontend import Loop, parse

    defs = {d.name: d for d in parse(RECURRENCES)}
    assert [s.loop for s in defs["cumsum"].stmts] == [Loop(label="t", index="t")]
    rnn = defs["rnn"]
    assert [s.loop for s in rnn.stmts] == [Loop(label="t", index="t")] * 3
    reads = [e for e in walk(rnn.stmts[0].rhs) if isinstance(e, Access) and e.tensor == "h"]
    assert [e.type for e in reads] == ["float32"]
    assert [s.loop for s in defs["pair_sums"].stmts] == [None, None]
    assert [s.loop.label for s in defs["two_loops"].stmts if s.loop] == ["t", "t2"]
