"""Range inference (paper section 3.1) and tensor shapes."""

from __future__ import annotations

import pytest

from tcir.errors import RangeError
from tcir.frontend import parse

from tcir.frontend.subscripts import walk

from frontend_helpers import expect_error, one, ranges, shape


def test_conv1d_universal_quantification() -> None:
    d = one("def conv1d(float(M) I, float(N) K) -> (O) { O(i) +=! K(x) * I(i + x) }")
    assert ranges(d) == {"i": ("0", "M - N + 1"), "x": ("0", "N")}
    assert shape(d, "O") == ["M - N + 1"]


def test_order_of_accesses_does_not_matter() -> None:
    a = one("def f(float(M) I, float(N) K) -> (O) { O(i) +=! I(i + x) * K(x) }")
    b = one("def f(float(M) I, float(N) K) -> (O) { O(i) +=! K(x) * I(i + x) }")
    assert ranges(a) == ranges(b)


@pytest.mark.parametrize("rhs", [
    "A(i) * B(j) * C(i + j)", "C(i + j) * B(j) * A(i)", "B(j) * C(i + j) * A(i)"])
def test_round_solutions_not_substituted_within_the_round(rhs: str) -> None:
    # i and j are both found in round 1, so C(i + j) infers nothing (substituting i
    # within the round would have bounded j by C instead); it is then checked, and
    # reads in bounds only when P >= M + N - 1, whatever the order of the factors:
    # a check for the call.
    d = one(f"def f(float(M) A, float(N) B, float(P) C) -> (O) {{ O(i) +=! {rhs} }}")
    assert ranges(d) == {"i": ("0", "M"), "j": ("0", "N")}
    (check,) = d.size_checks
    assert check.message == "subscript 'i + j' of 'C' is out of bounds [0, P) for the inferred ranges i in [0, M), j in [0, N)"
    assert sorted(check.names.values()) == ["M", "N", "P"]


def test_unused_access_checked_when_provably_in_bounds() -> None:
    d = one("def f(float(M) A, float(N) B, float(M,N) C) -> (O) { O(i) +=! A(i) * B(j) * C(i, j) }")
    assert ranges(d) == {"i": ("0", "M"), "j": ("0", "N")}


def test_intersection_within_a_round() -> None:
    d = one("def f(float(N) A, float(N) B) -> (O) { O(i) = A(i) + B(i + 1) }")
    assert ranges(d) == {"i": ("0", "N - 1")}


def test_sgemm_k_is_the_lesser_of_equal_sizes() -> None:
    d = one("def mm(float(M,K) A, float(K,N) B) -> (C) { C(m,n) +=! A(m,kk) * B(kk,n) }")
    assert ranges(d) == {"m": ("0", "M"), "n": ("0", "N"), "kk": ("0", "K")}


def test_provable_minimum_is_taken() -> None:
    d = one("def f(float(M) A, float(M) B, float(N) K) -> (O) {"
            " O(i) +=! A(i + x) * B(i + x + 1) * K(x) }")
    assert ranges(d) == {"i": ("0", "M - N"), "x": ("0", "N")}


def test_where_ranges_are_fixed_first() -> None:
    d = one("def f(float(N) A) -> (O) { O(i) +=! A(i + k) where k in 0:3 }")
    assert ranges(d) == {"i": ("0", "N - 2"), "k": ("0", "3")}


def test_where_ranges_may_use_sizes_and_arithmetic() -> None:
    d = one("def f(float(N) A) -> (O) { O(i) +=! A(k) where k in 1:N / 2 + 1, i in 0:A.0 }")
    assert ranges(d) == {"i": ("0", "N"), "k": ("1", "N floordiv 2 + 1")}


def test_exists_adds_a_constraint() -> None:
    d = one("def f(float(N) A, float(N) B) -> (O) { O(i) = A(i) where exists B(i + 1) }")
    assert ranges(d) == {"i": ("0", "N - 1")}


def test_maxpool_floordiv_bounds() -> None:
    d = one("def maxpool(float(B,C,H,W) in) -> (out) {"
            " out(b,c,i,j) max=! in(b,c, 2 * i + kw, 3 * j + kh) where kw in 0:2, kh in 0:3 }")
    assert shape(d, "out") == ["B", "C", "H floordiv 2", "W floordiv 3"]


def test_stride_by_int_scalar_is_semi_affine() -> None:
    d = one("def f(int s, float(H) I, float(K) W) -> (O) { O(h) +=! I(s * h + k) * W(k) }")
    assert shape(d, "O") == ["(H - K) floordiv s + 1"]
    assert not d.tensor("O").dims[0].is_pure_affine()


def test_negative_coefficient() -> None:
    d = one("def f(float(N) A) -> (O) { O(i) = A(N - 1 - i) }")
    assert ranges(d) == {"i": ("0", "N")}


def test_indirect_subscripts_do_not_constrain() -> None:
    d = one("def gather(float(N) X, int(A,B) I) -> (Z) { Z(i,j) = X(I(i,j)) }")
    assert ranges(d) == {"i": ("0", "A"), "j": ("0", "B")}



def test_lhs_of_shaped_tensor_intersects() -> None:
    d = one("def f(float(N) A) -> (O) { O(i) = A(i)  O(i) = O(i) + A(i + 1) }")
    assert ranges(d, 1) == {"i": ("0", "N - 1")}
    assert shape(d, "O") == ["N"]


def test_typed_output_shape_constrains_lhs() -> None:
    d = one("def f() -> (float(8) O) { O(i) = 1 }")
    assert ranges(d) == {"i": ("0", "8")}


def test_initializing_statement_takes_shape_from_later_statements() -> None:
    d = one("def mv(float(M,K) A, float(K) x) -> (C) { C(i) = 0  C(i) += A(i,k) * x(k) }")
    assert ranges(d, 0) == {"i": ("0", "M")}
    assert ranges(d, 1) == {"i": ("0", "M"), "k": ("0", "K")}


def test_temporaries_and_zero_dim_shapes() -> None:
    d = one("def f(float(N,K) A) -> (s) { T(i) +=! A(i, k)  s() max=! T(i) }")
    assert shape(d, "T") == ["N"] and shape(d, "s") == []
    assert ranges(d, 1) == {"i": ("0", "N")}


def test_constant_sizes() -> None:
    d = one("def f(float(10) I, float(3) K) -> (O) { O(i) +=! K(x) * I(i + x) }")
    assert shape(d, "O") == ["8"]


def test_chained_defs_are_independent() -> None:
    a, b = parse("def a(float(N) A) -> (O) { O(i) = A(i) }\n"
                 "def b(float(M) A) -> (O) { O(i) = A(i + 1) }")
    assert a.size_params == ["N"] and b.size_params == ["M"]
    assert [b.format(e) for e in b.outputs[0].dims] == ["M - 1"]


def test_tensors_start_where_their_defining_index_starts() -> None:
    """As in TC (mins and extents of Halide buffers): `O(i) = I(i - 1)` makes
    `O` of N elements, `O[k]` written at `i = k + 1`; the def is rewritten so
    that `O` starts at 0 and later reads subtract its origin."""
    from tcir.frontend import parse

    (d,) = parse("def f(float(N) I) -> (O, P) {\n O(i) = I(i - 1)\n P(j) = O(j) where j in 2:N }")
    assert d.shape_str("O") == "(N)" and d.shape_str("P") == "(N - 2)"
    assert ranges(d, 0) == {"i": ("0", "N")}
    assert ranges(d, 1) == {"j": ("0", "N - 2")}
    (d,) = parse("def f(float(N, M) I) -> (O) { O(i, j) = I(i, j) where i in 3:N-1 }")
    assert d.shape_str("O") == "(N - 4, M)"


def test_bounds_that_depend_on_the_sizes_are_checked_at_the_call() -> None:
    """Valid for some sizes only: no error at definition; a RangeError with
    the actual sizes at a call where the subscript would leave its tensor."""
    import numpy as np
    import pytest

    import tcir

    source = "def indexing(float(H, W) input, int32(L) index) -> (output) {\n  output(l, w) = input(index(l), w) where l in 0:2\n}"
    mod = tcir.define(source, "indexing.tc")
    (check,) = mod.indexing.definition.size_checks
    assert set(check.names.values()) == {"L"}
    table = np.arange(12, dtype=np.float32).reshape(4, 3)
    np.testing.assert_array_equal(mod.indexing(table, np.array([3, 1, 0], np.int32)), table[[3, 1]])
    with pytest.raises(tcir.RangeError, match=r"^error: indexing.tc:2:\d+: .*|indexing.tc:2:\d+: error: subscript 'l' of 'index' is out of bounds \[0, L\) for the inferred ranges l in \[0, 2\), with L=1"):
        mod.indexing(table, np.array([3], np.int32))
    certain = "def f(float(N) A) -> (O) { O(i) = A(i + N) where i in 0:N }"
    with pytest.raises(tcir.RangeError, match="may be out of bounds"):
        tcir.define(certain)


def test_a_reduction_bound_may_be_a_min_of_sizes() -> None:
    """As TC infers `m < min(M, N)`: the range takes the first candidate, and
    the statement's value counts only below the others (a guarded ternary
    giving the reduction's identity elsewhere). An LHS index still needs
    one bound: it defines a tensor's shape."""
    from tcir.frontend import Ternary

    d = one("def f(float(B,M) I, float(O,N) W1) -> (O1) { O1(b,n) +=! I(b,m) * W1(n,m) }")
    assert ranges(d)["m"] == ("0", "M")
    rhs = d.stmts[0].rhs
    assert isinstance(rhs, Ternary) and rhs.guarded
    assert rhs.b.value == 0.0 and str(rhs.c.op) == ">="


# -- guards -------------------------------------------------------------------------
def test_a_read_its_guard_keeps_in_bounds_does_not_narrow() -> None:
    """A "same" convolution: `X(t + k - 1)` is read only where the guard
    keeps it in bounds, so `W(k)` alone gives `k` its range (TC's
    intersection would narrow it to `[1, 2)`), and the ternary is evaluated
    lazily (only the branch taken reads)."""
    from tcir.frontend import Ternary

    d = one("def same(float(T) X, float(K) W) -> (Y) {"
            " Y(t) +=! (t + k >= 1 && t + k <= T) ? X(t + k - 1) * W(k) : 0.0 where t in 0:T }")
    assert ranges(d) == {"t": ("0", "T"), "k": ("0", "K")}
    rhs = d.stmts[0].rhs
    assert isinstance(rhs, Ternary) and rhs.guarded


def test_a_guard_keeps_the_side_it_bounds() -> None:
    """`t - k >= 0` keeps `X(t - k)` from below, which bounds `k` from above
    (the coefficient of `k` is negative): only `W` bounds `k`."""
    d = one("def causal(float(T) X, float(K) W) -> (Y) { Y(t) +=! t - k >= 0 ? X(t - k) * W(k) : 0.0 where t in 0:T }")
    assert ranges(d) == {"t": ("0", "T"), "k": ("0", "K")}


def test_a_padding_guard_widens_the_output() -> None:
    """`i > 0` keeps `A(i - 1)` from below: `i` starts at 0 (a padded first
    element), not at 1."""
    d = one("def shift(float(N) A) -> (O) { O(i) = i > 0 ? A(i - 1) : 0.0 }")
    assert ranges(d) == {"i": ("0", "N + 1")}
    assert shape(d, "O") == ["N + 1"]


def test_a_guarded_read_still_bounds_what_nothing_else_bounds() -> None:
    """TC's segment offsets: `r_k < k` keeps `Segments(r_k)` below `K`, and
    nothing else bounds `r_k`: the read gives it its range."""
    d = one("def make_idx(int32(K) Segments) -> (Idx) { Idx(k) +=! (r_k < k) ? Segments(r_k) : 0 where k in 0:K+1 }")
    assert ranges(d) == {"k": ("0", "K + 1"), "r_k": ("0", "K")}


def test_a_guard_that_narrows_a_reduction_is_ambiguous() -> None:
    """The guard keeps `X(t + k - 1)` in bounds from below only: `W` allows
    `k` in `[0, K)` and the read only `[0, 2)`. The error names `k`, both
    ranges and the where clauses that settle it."""
    src = "def same(float(T) X, float(K) W) -> (Y) {\n  Y(t) +=! t + k >= 1 ? X(t + k - 1) * W(k) : 0.0 where t in 0:T\n}"
    err = expect_error(RangeError, src, 2, 25, "'k'", "ambiguous")
    first = str(err).splitlines()[0]
    assert "[0, K)" in first and "[0, 2)" in first, first
    assert "'where k in 0:2'" in first and "'where k in 0:K'" in first, first
    settled = one(src.replace("where t in 0:T", "where t in 0:T, k in 0:2"))
    assert ranges(settled)["k"] == ("0", "2")


def test_a_recurrence_reads_the_first_step_under_a_guard() -> None:
    """The read of `t - 1` is checked once its tensor is shaped (after the
    statement that defines it): out of bounds at the first step unless a
    guard keeps it in."""
    from tcir.frontend import Ternary

    src = "def cumsum(float(T) X) -> (C) {\n  for t in 0:T { C(t) = X(t) + C(t - 1) }\n}"
    expect_error(RangeError, src, 2, 32, "'C'", "out of bounds [0, T) for the inferred ranges t in [0, T); "
                 "guard the read of an earlier step (as in 't > 0 ? ... : ...')")
    d = one(src.replace("C(t - 1)", "(t > 0 ? C(t - 1) : 0.0)"))
    assert ranges(d) == {"t": ("0", "T")} and shape(d, "C") == ["T"]
    assert any(isinstance(e, Ternary) and e.guarded for e in walk(d.stmts[0].rhs))
