"""Lexing and parsing: every construct of the language."""

from __future__ import annotations

import pytest

from tcir.frontend import Access, Binary, Call, Cast, Const, IndexVar, ScalarParam, SizeRef, Ternary, Unary
from tcir.frontend.subscripts import walk
from tcir.frontend.lexer import tokenize
from tcir.frontend.source import Source

from frontend_helpers import one, ranges


def kinds(text: str) -> list[str]:
    return [t.kind for t in tokenize(Source(text))][:-1]


def test_tokens_numbers_ids_and_operators() -> None:
    toks = tokenize(Source("3 .5 3. 1e-5 2LUT x1 A.0 <=> +=! min=! max= -> # comment\n&&"))
    assert [(t.kind, t.value) for t in toks[:4]] == [
        ("int", 3), ("float", 0.5), ("float", 3.0), ("float", 1e-5)]
    assert [t.text for t in toks[4:]] == [
        "2LUT", "x1", "A", ".", "0", "<=>", "+=!", "min=!", "max=", "->", "&&", ""]


def test_space_between_plus_equal_and_not() -> None:
    assert kinds("+= !x") == ["+=", "!", "id"]
    assert kinds("+=!x") == ["+=!", "id"]


def test_several_defs_and_digit_names() -> None:
    from tcir.frontend import parse
    defs = parse("def 2LUT(float(N) A) -> (O) { O(i) = A(i) }\n"
                 "def b(float(N) A) -> (O) { O(i) = A(i) }")
    assert [d.name for d in defs] == ["2LUT", "b"]


def test_inputs_sizes_scalars_and_type_aliases() -> None:
    d = one("def f(float(M,K) A, float(3,N) B, float a, int32 sh, int c, half h, byte(2) y,"
            " double z, uint64 u, bool q) -> (O) { O(i) = A(i, 0) }")
    assert d.size_params == ["M", "K", "N"]
    assert [(p.name, p.dtype, p.is_scalar) for p in d.inputs] == [
        ("A", "float32", False), ("B", "float32", False), ("a", "float32", True),
        ("sh", "int32", True), ("c", "int32", True), ("h", "float16", True),
        ("y", "uint8", False), ("z", "float64", True), ("u", "uint64", True), ("q", "bool", True)]
    assert [d.format(e) for e in d.tensor("B").dims] == ["3", "N"]
    assert d.tensor("a").dims == []


def test_def_without_inputs_and_typed_outputs() -> None:
    d = one("def f() -> (int32(10) C, D) { C(i) = i where i in 0:10\n D(i) = C(i) * 2 }")
    assert d.inputs == []
    assert [(p.name, p.dtype) for p in d.outputs] == [("C", "int32"), ("D", "int32")]
    assert ranges(d, 1) == {"i": ("0", "10")}


@pytest.mark.parametrize("op", ["=", "+=", "*=", "min=", "max=", "+=!", "*=!", "min=!", "max=!"])
def test_assignment_operators(op: str) -> None:
    d = one(f"def f(float(N) A) -> (O) {{ O(i) = A(i)\n O(i) {op} A(i) }}")
    assert d.stmts[1].op == op


def test_statements_need_no_separators_and_zero_dim_lhs() -> None:
    d = one("def f(float(N) A) -> (s, t) { s() +=! A(i) t() = s() * 2 }")
    assert [(s.lhs, s.lhs_indices) for s in d.stmts] == [("s", []), ("t", [])]
    assert d.tensor("s").dims == []


def test_where_clauses_and_equivalence() -> None:
    d = one("def f(float(N) A) -> (O) {\n"
            "  O(i) +=! A(i + k) * y <=> conv(A) where k in 0:2, x = i, y = 2 * x, exists A(i)\n}")
    st = d.stmts[0]
    assert st.where == ["k in 0:2", "x = i", "y = 2 * x", "exists A(i)"]
    assert st.equivalent == "conv(A)"
    assert ranges(d) == {"i": ("0", "N - 1"), "k": ("0", "2")}


def test_precedence_and_associativity() -> None:
    d = one("def f(float(N) A) -> (O) { O(i) = 1 + 2 * 3 - 4 < 5 || 0 && 1 ? -A(i) : 2 ? 3. : 4 }")
    e = d.stmts[0].rhs
    assert isinstance(e, Ternary)
    assert isinstance(e.c, Binary) and e.c.op == "||"
    assert isinstance(e.c.b, Binary) and e.c.b.op == "&&"
    cmp = e.c.a
    assert isinstance(cmp, Binary) and cmp.op == "<"
    minus = cmp.a
    assert isinstance(minus, Binary) and minus.op == "-"
    assert isinstance(minus.a, Binary) and minus.a.op == "+" and isinstance(minus.a.b, Binary)
    assert minus.a.b.op == "*"
    assert isinstance(e.a, Unary) and e.a.op == "-"
    assert isinstance(e.b, Ternary)  # right associative


def test_unary_not_binds_tighter_than_comparison() -> None:
    e = one("def f(int(N) A) -> (O) { O(i) = !A(i) == 0 }").stmts[0].rhs
    assert isinstance(e, Binary) and e.op == "=="
    assert isinstance(e.a, Cast) and isinstance(e.a.x, Unary) and e.a.x.op == "!"


def test_literals_types() -> None:
    e = one("def f() -> (O) { O(i) = 3 + .5 + 3. + 1e-5 where i in 0:1 }").stmts[0].rhs
    consts = []
    while isinstance(e, Binary):
        consts.append(e.b)
        e = e.a
    consts.append(e)
    assert all(isinstance(c, Const) for c in consts)
    assert [c.value for c in reversed(consts)] == [3.0, 0.5, 3.0, 1e-5]  # type: ignore[union-attr]
    assert {c.type for c in consts} == {"float32"}


def test_comments_and_sizes_as_values() -> None:
    d = one("# leading\ndef f(float(M,K) A) -> (O) { # here\n O(i) = A.1 + M + A(i, 0) # trailing\n}")
    sizes = [n for n in _nodes(d.stmts[0].rhs) if isinstance(n, SizeRef)]
    assert [(s.text, d.format(s.expr), s.type) for s in sizes] == [
        ("A.1", "K", "int32"), ("M", "M", "int32")]
    assert ranges(d) == {"i": ("0", "M")}


def test_casts_and_builtins() -> None:
    d = one("def f(float(N) A, int(N) I) -> (O) { O(i) = float64(I(i)) + fmaxf(A(i), 0) "
            "+ min(I(i), 2) + erf(A(i)) + fma(A(i), 2, 1) + sigmoid(I(i)) }")
    calls = [n for n in _nodes(d.stmts[0].rhs) if isinstance(n, Call)]
    assert [(c.name, c.type) for c in calls] == [
        ("fmax", "float32"), ("min", "int32"), ("erf", "float32"), ("fma", "float32"),
        ("sigmoid", "float32")]
    casts = [n for n in _nodes(d.stmts[0].rhs) if isinstance(n, Cast)]
    assert casts[0].type == "float64"


def test_index_vars_and_scalar_params() -> None:
    e = one("def f(float a, float(N) A) -> (O) { O(i) = a * A(i) + a() + i }").stmts[0].rhs
    nodes = list(_nodes(e))
    assert any(isinstance(n, ScalarParam) and n.name == "a" for n in nodes)
    assert any(isinstance(n, IndexVar) and n.name == "i" and n.type == "int32" for n in nodes)


def _nodes(e):  # type: ignore[no-untyped-def]
    from tcir.frontend.subscripts import walk
    return walk(e)


def test_zero_dim_tensors_without_parentheses() -> None:
    """TC writes 0-d tensors bare: `O +=! A(r_i)`, `v min=! S(r_n)`, and reads them so."""
    d = one("def f(float(N) A) -> (S, B) {\n  S +=! A(i)\n  B(i) = A(i) / S\n}")
    assert [s.lhs_indices for s in d.stmts] == [[], ["i"]]
    reads = [e for e in walk(d.stmts[1].rhs) if isinstance(e, Access)]
    assert [(r.tensor, len(r.subscripts)) for r in reads] == [("A", 1), ("S", 0)]
    assert one("def f(float(N) S) -> (v) { v min=! S(r_n) }").stmts[0].op == "min=!"
