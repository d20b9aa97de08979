"""Every user error: its class, file:line:col, caret and culprit name."""

from __future__ import annotations

import pytest

from tcir.errors import ParseError, RangeError, TCError, TypeError_
from tcir.frontend import parse

from frontend_helpers import expect_error

MM = "def mm(float(M,K) A, float(K,N) B) -> (C) {\n"


# -- parse errors -------------------------------------------------------------------
@pytest.mark.parametrize("body, line, col, name", [
    ("  C(m,n) +=! A(m,k) @ B(k,n)\n}", 2, 21, "'@'"),
    ("  C(m,n) +=! A(m,k * B(k,n)\n}", 3, 1, "')'"),
    ("  C(m,n) A(m,k)\n}", 2, 10, "assignment operator"),
    ("  C(m,n) +=! A(m,k) * B(k,n) where k 0:K\n}", 2, 38, "'in'"),
    ("  C(m,n) +=! float\n}", 3, 1, "'float'"),
    ("  C(m,n) +=! A(m,k) * B(k,n) where where in 0:3\n}", 2, 36, "'where'"),
    ("  C(m,n) = 99999999999\n}", 2, 12, "'99999999999'"),
    ("  C(m,n) +=! A(m,k) * B(k,n)\n", 2, 29, "end of input"),
])
def test_parse_errors(body: str, line: int, col: int, name: str) -> None:
    expect_error(ParseError, MM + body, line, col, name)


def test_unclosed_parenthesis_notes_where_it_opened() -> None:
    err = expect_error(ParseError, MM + "  C(m,n) +=! A(m,k) * fmaxf(B(k,n), (A(m,k)\n}", 3, 1, "')'")
    note = str(err).split("\n")[3:]
    assert note == [
        "t.tc:2:37: note: to match this '('",
        "  C(m,n) +=! A(m,k) * fmaxf(B(k,n), (A(m,k)",
        "                                    ^",
    ], str(err)


def test_numbers_followed_by_letters_are_parse_errors() -> None:
    expect_error(ParseError, "def f(float(N) A) -> (B) { B(1e40i) = A(1e40i) }", 1, 30, "'1e40i'", "invalid number")
    expect_error(ParseError, "def f(float(N) A) -> (B) { B(i) = A(i) + 2abc }", 1, 42, "'2abc'", "invalid number")


def test_float_constants_must_fit_their_type() -> None:
    expect_error(TypeError_, "def f(float(N) A) -> (B) { B(i) = fmaxf(A(i), 1e40) }", 1, 47, "1e+40", "out of range for float32")
    expect_error(TypeError_, "def f(float(N) A) -> (B) { B(i) = A(i) + 1e400 }", 1, 42, "inf", "out of range for float32")
    parse("def f(double(N) A) -> (B) { B(i) = A(i) * 1e300 }")


def test_bad_type_and_missing_outputs() -> None:
    expect_error(ParseError, "def f(flot(M) A) -> (O) {}", 1, 7, "'flot'", "scalar type")
    expect_error(ParseError, "def f(float(M) A) -> () {}", 1, 23, "output")


def test_deep_nesting_is_a_parse_error_not_recursion() -> None:
    src = "def f(float(N) A) -> (O) { O(i) = " + "(" * 5000 + "A(i)" + ")" * 5000 + " }"
    expect_error(ParseError, src, 1, 135, "nested too deeply")
    src = "def f(float(N) A) -> (O) { O(i) = " + "A(i) + " * 3000 + "1 }"
    expect_error(ParseError, src, 1, 726, "nested too deeply")
    with pytest.raises(ParseError):
        parse("def f(float(N) A) -> (O) { O(i) = " + "-" * 5000 + "A(i) }")


# -- semantic errors ----------------------------------------------------------------
@pytest.mark.parametrize("src, line, col, name, fragment", [
    ("def f(float(N) A) -> (O) { O(i) = Foo(i) }", 1, 35, "'Foo'", "undefined tensor"),
    ("def f(float(N) A) -> (O) { O(i) = A(i) where k in 0:N }", 1, 46, "'k'", "not used"),
    ("def f(float(N) A) -> (O) { O(i) +=! A(k) where k in 0:j }", 1, 55, "'j'", "not a size"),
    ("def f(float(N) A, float(N) A) -> (O) { O(i) = A(i) }", 1, 28, "'A'", "redefinition"),
    ("def f(float(N) N) -> (O) { O(i) = N(i) }", 1, 16, "'N'", "redefinition"),
    ("def f(float(N) A) -> (A) { A(i) = 1 }", 1, 23, "'A'", "redefinition"),
    ("def f(float(N) A) -> (O) { O(i) = x where x = A(i), x = 1 }", 1, 53, "'x'", "redefinition"),
    ("def f(float(N) A) -> (O) { O(i) = A(i)  A(i) = 1 }", 1, 41, "'A'", "immutable"),
    ("def f(float a, float(N) A) -> (O) { O(i) = A(i)  a() = 1 }", 1, 50, "'a'", "immutable"),
    ("def f(float(N) A) -> (O) { O(i) = A(i)  N(i) = 1 }", 1, 41, "'N'", "size"),
    ("def f(float(N) A) -> (O) { O(i) = A(i, 0) }", 1, 35, "'A'", "subscript"),
    ("def f(float(N) A) -> (O) { O(i) = A(i)  O(i, j) = 1 }", 1, 41, "'O'", "subscript"),
    ("def f(float(N) A) -> (O) { O(i) = A(A(i)) }", 1, 37, "'A'", "integer"),
    ("def f(float(N) A) -> (O) { O(i) +=! A(k) where k in 0:A(0) }", 1, 55, "'A'", "range bound"),
    ("def f(float(N) A) -> (O) { O(i) = fmaxf(A(i)) }", 1, 35, "'fmaxf'", "2 argument"),
    ("def f(float(N) A) -> (O) { O(i) = exp(A(i), 1) }", 1, 35, "'exp'", "1 argument"),
    ("def f(float(N) A) -> (O) { O(i) = int32(A(i), 1) }", 1, 35, "'int32'", "1 argument"),
    ("def f(float(N,K) A) -> (O) { O(i) = A(i, k) }", 1, 42, "'k'", "reduction"),
    ("def f(float(N) A) -> (O) { O(i, i) = A(i) }", 1, 33, "'i'", "distinct"),
    ("def f(float(N) A) -> (O) { O(i + 1) = A(i) }", 1, 32, "this subscript", "index variables"),
    ("def f(float(N) A) -> (O) { O(N) = A(0) }", 1, 30, "'N'", "index variables"),
    ("def f(float(N) A) -> (int32(N) O) { O(i) = A(i) }", 1, 42, "'O'", "cast"),
    ("def f(float(N,N) b) -> (a) { a(i,j) = b(i,j)\n a(i,j) = a(j,i) }", 2, 11, "'a'", "pointwise"),
    ("def f(float(N,N) b) -> (a) { a(i,j) = b(i,j)\n a(i,j) += a(i,j) * b(j,k) }", 2, 12, "'a'",
     "reduction"),
    ("def f(float(N) A) -> (O) { O(i) = O(i) + A(i) }", 1, 35, "'O'", "before it is written"),
    ("def f(float(N) A) -> (O, P) { O(i) = A(i) }", 1, 26, "'P'", "never written"),
    ("def f(float(N) A) -> (O) { O(i) = N(i) + A(i) }", 1, 35, "'N'", "not a tensor"),
    ("def f(float(N) A) -> (O) { O(i) = A + 1 }", 1, 35, "'A'", "subscripts"),
    ("def f(float(N) A) -> (O) { O(i) = A(i) + A.1 }", 1, 42, "'A'", "does not exist"),
    ("def f(float(N) A) -> (O) { O(i) = y where y = x, x = A(i) }", 1, 47, "'x'", "before its"),
    ("def f(float(N,K) A) -> (O) { T(i) += A(i,k)  O(i) = T(i) }", 1, 35, "'T'", "'+=!'"),
    ("def f(float(N) A) -> (int32(P) O) { O(i) = 1 }", 1, 29, "'P'", "input size"),
    ("def f(float(N) A) -> (O) { O(i) = A(i)  O(i) = O(i) where exists O(k) }", 1, 68, "'k'",
     "exists"),
    ("def f(float(N) A) -> (O) { O(i) = A(i) }\ndef f(float(N) A) -> (O) { O(i) = A(i) }", 2, 5,
     "'f'", "redefinition"),
])
def test_type_errors(src: str, line: int, col: int, name: str, fragment: str) -> None:
    expect_error(TypeError_, src, line, col, name, fragment)


def test_let_explosion_is_bounded() -> None:
    lets = ", ".join(f"x{k + 1} = x{k} + x{k}" for k in range(40))
    src = f"def f(float(N) A) -> (O) {{ O(i) = x40 where x0 = A(i), {lets} }}"
    with pytest.raises(TypeError_, match="too large"):
        parse(src)


# -- range errors -------------------------------------------------------------------
@pytest.mark.parametrize("src, line, col, name, fragment", [
    ("def maxpool2x2(float(B,C,H,W) in) -> (out) {\n"
     "  out(b,c,i,j) max=! in(b,c, 2 * i + kw, 2 * j + kh)\n}", 2, 38, "'kw'", "where"),
    ("def f(float(3) I, float(5) K) -> (O) { O(i) +=! K(x) * I(i + x) }", 1, 42, "'i'", "empty"),
    ("def f(float(N) A) -> (O) { O(i) +=! A(k) where k in 5:2 }", 1, 39, "'k'", "empty"),
    ("def f(float(N) A) -> (O) { O(i) = 1 }", 1, 30, "'i'", "where"),
    ("def f(float(M) A) -> (O) { O(i) = A(i + M) where i in 0:M }", 1, 35, "'A'",
     "out of bounds"),
])
def test_range_errors(src: str, line: int, col: int, name: str, fragment: str) -> None:
    expect_error(RangeError, src, line, col, name, fragment)


@pytest.mark.parametrize("src, col, name, fragment", [
    ("def f(float(N) A) -> (O) { O(i, j) = A(j) where i in 0:N, j in 0:i+1 }", 59, "'j'",
     "indexes the left-hand side"),
    ("def f(float(N) A, float(N) B) -> (O) { O(i) +=! A(k) * B(l) where i in 0:N, k in 0:l, "
     "l in 0:k }", 51, "'k'", "depend on it"),
    ("def f(float(N) A) -> (O) { O(i) +=! A(k) where i in 0:N, k in 0:i/2 }", 39, "'k'",
     "not affine"),
    ("def f(float(N) A) -> (O) { O(i) +=! A(k) where i in 0:N, k in i:i+2 }", 37, "'A'",
     "out of bounds"),
    ("def f(float(N) A) -> (O) { O(i, j) +=! A(k % N) where i in 0:N, j in 0:N, k in 0:i*j }",
     42, "'k'", "not affine in the other indices"),
])
def test_index_dependent_range_errors(src: str, col: int, name: str, fragment: str) -> None:
    expect_error(RangeError, src, 1, col, name, fragment)


def test_a_range_bound_divides_by_a_constant_or_a_size() -> None:
    src = "def f(float(N, M) A) -> (O) { O(i) = A(i, 0) where i in 0:N/(M+1) }"
    expect_error(TypeError_, src, 1, 60, "", "/ by a positive constant or a size")


def test_a_range_bound_names_only_sizes_and_other_indices() -> None:
    src = "def f(float(N) A) -> (O) {{ O(i) +=! A(k) where k in 0:{} }}"
    expect_error(TypeError_, src.format("q"), 1, 55, "'q'", "or another index of the statement")
    expect_error(TypeError_, src.format("k"), 1, 55, "'k'", "or another index of the statement")


def test_all_errors_are_tcerrors_with_the_file_name() -> None:
    with pytest.raises(TCError) as info:
        parse("def f() -> (O) { O(i) = 1 }", "my/file.tc")
    assert str(info.value).startswith("my/file.tc:1:")


LOOP = "def f(float(T, N) X) -> (A, B) {{\n  for t in 0:T {{\n{}\n  }}\n}}"


@pytest.mark.parametrize("body, line, col, name, fragment", [
    ("    B(t, i) = A(t, i)\n    A(t, i) = X(t, i)", 3, 15, "'A'", "before a later statement"),
    ("    A(t, i) = X(t, i)\n    B(t, i) = A(t + 1, i)", 4, 15, "'A'", "or an earlier step"),
    ("    A(t, i) = X(t, i)\n    B(i) +=! A(t, i)", 4, 5, "'t'", "must index its left-hand side"),
    ("    A(t, i) = X(t, i)\n    A(t, i) += t < T - 1 ? A(t + 1, i) : 0.0\n    B(t, i) = A(t, i)",
     4, 28, "'A'", "or an earlier step"),
    ("    A(t, i) = t > 0 ? A(t - 1, i) + A(t, i + 1) : X(t, i)\n    B(t, i) = A(t, i)", 3, 37, "'A'",
     "reads it at other points"),
])
def test_loops_no_order_of_the_steps_computes(body, line, col, name, fragment) -> None:
    """A read of what the loop writes at a later step, or of this step before
    its statement writes it: no order of the steps gives it a value."""
    expect_error(TypeError_, LOOP.format(body), line, col, name, fragment)


def test_a_recurrence_outside_a_loop_says_how_to_write_one() -> None:
    err = expect_error(TypeError_, "def cumsum(float(N) X) -> (C) { C(i) = X(i)  C(i) = C(i - 1) + X(i) }",
                       1, 53, "'C'", "only pointwise in-place updates are allowed")
    assert "a recurrence along 'i' runs step by step in a loop: 'for i in lo:hi { ... }'" in str(err)


@pytest.mark.parametrize("src, col, fragment", [
    ("def f(float(N) X) -> (A) { for t in 0:N { } }", 43, "expected a statement in the 'for' loop"),
    ("def f(float(N) X) -> (A) { for t in 0:N { for u in 0:N { A(t) = X(u) } } }", 43,
     "nested 'for' loops are not supported"),
    ("def f(float(N) X) -> (A) { for t in 0:N { A(t) = X(t)", 54, "expected '}' closing the loop"),
])
def test_malformed_loops(src: str, col: int, fragment: str) -> None:
    expect_error(ParseError, src, 1, col, "", fragment)


# -- the mistakes of new users: what they meant, at the right column ------------------
@pytest.mark.parametrize("body, col, name, fragment", [
    ("  B(i) +=!! A(i, j)", 11, "'+=!!'", "did you mean '+=!'?"),
    ("  B(i) max=!! A(i, j)", 13, "'max=!!'", "did you mean 'max=!'?"),
    ("  B(i) =! A(i, 0)", 9, "'=!'", "did you mean '+=!'"),
    ("  B(i) = A(i, 0) -- A(i, 1)", 19, "'--'", "is not an operator"),
    ("  B(i) = A(i, 0) ** A(i, 1)", 19, "'**'", "is not an operator"),
    ("  B(i) = !!(A(i, 0) > 0) ? 1.0 : 0.0", 11, "'!!'", "is not an operator"),
    ("  B(i) +=1 A(i, j)", 10, "'+=1'", "did you mean '+=!'?"),
])
def test_mistyped_operators(body: str, col: int, name: str, fragment: str) -> None:
    src = f"def f(float(N, M) A) -> (B) {{\n{body}\n}}"
    expect_error(ParseError, src, 2, col, name, fragment)


def test_an_operator_after_a_space_is_no_mistake() -> None:
    parse("def f(float(N, M) A) -> (B) {\n  B(i) +=! ! (A(i, j) > 0) ? 1.0 : 0.0\n  B(i) += 1\n  B(i) = - -B(i)\n}")


@pytest.mark.parametrize("src, col, name, fragment", [
    ("def f(float(N) A) -> (O) { O(i) = exps(A(i)) }", 35, "'exps'", "did you mean 'exp'?"),
    ("def f(float(N) A) -> (O) { O(i) = abs(A(i)) }", 35, "'abs'", "did you mean 'fabs'?"),
    ("def f(float(N) Input) -> (O) { O(i) = Inptu(i) }", 39, "'Inptu'", "did you mean 'Input'?"),
    ("def f(float(N) A) -> (O) { O(i) = flaot(A(i)) }", 35, "'flaot'", "did you mean 'float'?"),
    ("def f(float(N) A) -> (O) { O(i) = A(ii) }", 37, "'ii'", "did you mean 'i'?"),
    ("def f(float(N) A) -> (O) { O(i) +=! A(k) where kk in 0:N }", 48, "'kk'", "did you mean 'k'?"),
    ("def f(float(B, N) X) -> (O) { O(b, n) = X(b, n) / D }", 51, "'D'",
     "'D' is used as a value but is not declared: a size must appear in an input's type"),
    ("def f(float(B, N) X) -> (O) { O(b, n) = X(b, n) / N2 }", 51, "'N2'", "not declared"),
])
def test_did_you_mean(src: str, col: int, name: str, fragment: str) -> None:
    err = expect_error(TypeError_, src, 1, col, name, fragment)
    if name == "'N2'":
        assert str(err).splitlines()[0].endswith("did you mean 'N'?"), str(err)


def test_a_type_error_lists_the_types() -> None:
    err = expect_error(ParseError, "def f(long(B) I) -> (O) { O(i) = I(i) }", 1, 7, "'long'", "expected a scalar type")
    assert ("(bool, uint8, uint16, uint32, uint64, int8, int16, int32, int64, float16, bfloat16, float32, float64, "
            "float, double, int, half, byte)") in str(err)
    expect_error(ParseError, "def f(flot(B) I) -> (O) { O(i) = I(i) }", 1, 7, "'flot'", "did you mean 'float'?")
