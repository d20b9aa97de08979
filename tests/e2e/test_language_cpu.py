"""Language features on the CPU backend, each against a numpy reference."""

import math

import numpy as np
import pytest

import tcir
from cases import assert_matches

rng = np.random.default_rng(1)
X = rng.standard_normal((5, 7)).astype(np.float32)
D = rng.standard_normal((5, 7))
IX = rng.integers(-50, 50, (5, 7)).astype(np.int32)


def run(source, *args):
    (definition,) = tcir.define(source).definitions
    return tcir.define(source)[definition.name](*args)


@pytest.mark.parametrize(
    "op, reference",
    [
        ("+=!", lambda x: x.sum(1)),
        ("*=!", lambda x: x.prod(1)),
        ("min=!", lambda x: x.min(1)),
        ("max=!", lambda x: x.max(1)),
    ],
)
def test_initializing_reductions(op, reference):
    out = run(f"def r(float(N,M) X) -> (S) {{ S(i) {op} X(i,j) }}", X)
    assert_matches(out, (reference(X.astype(np.float64)),))


@pytest.mark.parametrize(
    "op, reference",
    [
        ("+=", lambda s, x: s + x.sum(1)),
        ("*=", lambda s, x: s * x.prod(1)),
        ("min=", lambda s, x: np.minimum(s, x.min(1))),
        ("max=", lambda s, x: np.maximum(s, x.max(1))),
    ],
)
def test_accumulating_reductions(op, reference):
    source = f"def r(float(N,M) X) -> (S) {{ S(i) = X(i,0) * 0.5\n S(i) {op} X(i,j) }}"
    x = X.astype(np.float64)
    assert_matches(run(source, X), (reference(x[:, 0] * 0.5, x),))


def test_integer_reductions_and_division():
    source = """def r(int32(N,M) X) -> (S, Q, L) {
      S(i) +=! X(i,j)
      Q(i,j) = X(i,j) / 7 + X(i,j) % 7
      L(i) min=! X(i,j)
    }"""
    s, q, low = run(source, IX)
    assert s.dtype == np.int32 and (s == IX.sum(1)).all()
    c_div = np.trunc(IX / 7).astype(np.int32)
    assert (q == c_div + (IX - 7 * c_div)).all()
    assert (low == IX.min(1)).all()


def test_unsigned_and_casts():
    source = """def u(uint8(N) X) -> (S, F) {
      S() max=! X(j)
      F(i) = float(X(i)) / 2.0
    }"""
    x = np.array([1, 250, 7, 128], np.uint8)
    s, f = run(source, x)
    assert s.dtype == np.uint8 and s == 250
    assert_matches(f, (x.astype(np.float64) / 2,))


def test_double_precision_and_builtins():
    source = """def b(double(N,M) X) -> (Y) {
      Y(i,j) = tanh(X(i,j)) + exp(-X(i,j)*X(i,j)) + fmax(X(i,j), 0.1) + pow(fabs(X(i,j)), 1.5)
             + erf(X(i,j)) + atan2(X(i,j), 2.0) + sqrt(fabs(X(i,j))) + sigmoid(X(i,j))
    }"""
    x = D
    erf = np.vectorize(math.erf)
    expected = (
        np.tanh(x) + np.exp(-x * x) + np.fmax(x, 0.1) + np.abs(x) ** 1.5
        + erf(x) + np.arctan2(x, 2.0) + np.sqrt(np.abs(x)) + 1 / (1 + np.exp(-x))
    )
    out = run(source, x)
    assert out.dtype == np.float64
    assert_matches(out, (expected,))


def test_float_builtins_with_f_suffix():
    source = "def b(float(N) X) -> (Y) { Y(i) = expf(X(i)) + cosf(X(i)) * logf(1.0 + fabsf(X(i))) }"
    x = X[0].astype(np.float64)
    assert_matches(run(source, X[0]), (np.exp(x) + np.cos(x) * np.log1p(np.abs(x)),))


def test_ternary_comparisons_and_logic():
    source = """def t(float(N,M) X) -> (Y) {
      Y(i,j) = (X(i,j) > 0 && !(X(i,j) > 1)) || X(i,j) == 0 ? X(i,j) : -X(i,j)
    }"""
    x = X.astype(np.float64)
    cond = ((x > 0) & ~(x > 1)) | (x == 0)
    assert_matches(run(source, X), (np.where(cond, x, -x),))


def test_where_ranges_and_lets_and_sizes():
    source = """def w(float(N) X) -> (Y) {
      Y(i) +=! X(i + k) * s where k in 0:3, s = 2.0
    }"""
    x = X[0].astype(np.float64)
    expected = 2 * np.array([x[i : i + 3].sum() for i in range(len(x) - 2)])
    assert_matches(run(source, X[0]), (expected,))


def test_size_values_in_expressions():
    source = "def m(float(N,M) X) -> (Y) { Y(i) +=! X(i,j) / float(X.1) }"
    assert_matches(run(source, X), (X.astype(np.float64).mean(1),))


def test_temporaries_and_multiple_outputs():
    source = """def t(float(N,M) X) -> (A, B) {
      T(i,j) = X(i,j) * X(i,j)
      A(i) +=! T(i,j)
      B(j) max=! T(i,j)
    }"""
    t = X.astype(np.float64) ** 2
    assert_matches(run(source, X), (t.sum(1), t.max(0)))


def test_indirection_with_offsets():
    source = "def g(float(N,M) X, int32(K) I) -> (Y) { Y(k,j) = X(I(k) + 1, j) }"
    index = np.array([0, 3, 2], np.int32)
    assert_matches(run(source, X, index), (X.astype(np.float64)[index + 1],))


def test_zero_dimensional_output():
    source = "def s(float(N) X) -> (S) { S() +=! X(i) }"
    assert_matches(run(source, X[0]), (np.array(X[0].astype(np.float64).sum()),))


def test_in_place_update_reads_the_old_values():
    source = """def p(float(N) X) -> (Y) {
      Y(i) = X(i)
      Y(i) = Y(i) * 2.0 + 1.0
    }"""
    assert_matches(run(source, X[0]), (X[0].astype(np.float64) * 2 + 1,))


def test_compiled_once_per_shape():
    mod = tcir.define("def c(float(N) X) -> (Y) { Y(i) = X(i) }")
    mod.c(X[0])
    mod.c(X[1])
    mod.c(X[:, 0].copy())
    assert len(mod.c._compiled) == 2


@pytest.mark.parametrize("backend", ["cpu", "cuda-sim"])
def test_zero_dim_tensors_without_parentheses(backend):
    mod = tcir.define("""
    def normalize(float(N) A) -> (B, S) {
      S +=! A(i)
      B(i) = A(i) / S
    }
    def smallest(float(N) A) -> (v) { v min=! A(r_n) }
    """)
    a = np.array([3.0, 1.0, 4.0, 1.5], np.float32)
    b, s = mod.normalize(a, backend=backend)
    np.testing.assert_allclose(b, a / a.sum(), rtol=1e-6)
    assert s.shape == () and float(s) == a.sum()
    assert float(mod.smallest(a, backend=backend)) == 1.0


@pytest.mark.parametrize("backend", ["cpu", "cuda-sim"])
def test_tensors_with_an_origin_as_in_tc(backend):
    """TC's mins and extents: the shifted copy is a copy; the padded
    convolution of TC's inference tests reads `pad` at logical indices."""
    mod = tcir.define("""
    def shift(float(N) I) -> (O) { O(i) = I(i - 1) }
    def convolution(float(N,C,H,W) I, float(M,C,KH,KW) W1) -> (pad, tmp) {
      pad(n, c, h, w)  = I(n, c, h - 2 - 3, w - 3 - 4)
      tmp(n, m, h, w) +=! pad(n, c, 2 * h + kh, 3 * w + kw) * W1(m, c, kh, kw)
    }
    """)
    rng = np.random.default_rng(0)
    x = rng.standard_normal(7).astype(np.float32)
    np.testing.assert_array_equal(mod.shift(x, backend=backend), x)
    i = rng.standard_normal((2, 3, 9, 10)).astype(np.float32)
    w = rng.standard_normal((4, 3, 3, 2)).astype(np.float32)
    pad, tmp = mod.convolution(i, w, backend=backend)
    np.testing.assert_array_equal(pad, i)
    # tmp(n, m, h, w) for h >= 3, w >= 3 (its origin), reading pad(..) = I(.. - 5, .. - 7)
    expected = np.zeros(tmp.shape)
    for h in range(tmp.shape[2]):
        for v in range(tmp.shape[3]):
            patch = i[:, :, 2 * (h + 3) - 5 : 2 * (h + 3) - 5 + 3, 3 * (v + 3) - 7 : 3 * (v + 3) - 7 + 2]
            expected[:, :, h, v] = np.einsum("nckl,mckl->nm", patch, w)
    np.testing.assert_allclose(tmp, expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("path", ["canonical", "tiled", "cuda-sim"])
def test_reads_guarded_by_a_ternary(path):
    """TC's wavenet: `Data(b, c, rf - D)` is in bounds only where `rf - D >= 0`,
    the condition it is read under; only the branch taken reads (no
    out-of-bounds access on any path, the simulator checks it)."""
    mod = tcir.define("""
    def dilated(float(B, C, RF) Data, float(F, C, 2) W, float(D) Dilation) -> (Out) {
      Out(b, f, rf) +=! Data(b, r_c, rf) * W(f, r_c, 1) +
          ((rf - D >= 0) ? Data(b, r_c, rf - D) * W(f, r_c, 0) : float(0))
          where rf in 0:RF
    }
    """)
    rng = np.random.default_rng(0)
    data = rng.standard_normal((2, 3, 9)).astype(np.float32)
    weight = rng.standard_normal((4, 3, 2)).astype(np.float32)
    dilation = np.zeros(2, np.float32)
    expected = np.einsum("bcr,fc->bfr", data, weight[:, :, 1])
    expected[:, :, 2:] += np.einsum("bcr,fc->bfr", data[:, :, :-2], weight[:, :, 0])
    backend = "cuda-sim" if path == "cuda-sim" else "cpu"
    options = tcir.MappingOptions(tile=[1, 2, 4]) if path == "tiled" else None
    got = mod.dilated(data, weight, dilation, backend=backend, options=options)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


GRAPH2 = """
def graph2(float(N, C, H, W) I, float(N, C, R, T) J, float(KH, KW) W1) -> (O, Out) {
    O(n, c, h, w) +=! J(n,  c, h + r_kh, w + r_kw) * W1(r_kh, r_kw)
  Out(c0, c1)     +=! I(n, c0,        h,        w) *  O(   n,   c1, h, w)
}
"""


@pytest.mark.parametrize("path", ["canonical", "tiled", "cuda-sim"])
@pytest.mark.parametrize("h", [5, 9], ids=["I-smaller", "O-smaller"])
def test_reduction_bound_that_is_a_min_of_sizes(path, h):
    """TC's graph2: Out's reduction over h runs to min(H, R - KH + 1), which
    either size may bound. (On the simulated GPU this once raced: the barrier
    between O's update and Out's reads ran only in the first n iteration.)"""
    rng = np.random.default_rng(1)
    i = rng.standard_normal((2, 3, h, 6)).astype(np.float32)
    j = rng.standard_normal((2, 3, 8, 9)).astype(np.float32)
    w1 = rng.standard_normal((2, 3)).astype(np.float32)
    o = sum(j[:, :, a : a + 7, b : b + 7] * w1[a, b] for a in range(2) for b in range(3))
    rows, cols = min(h, 7), min(6, 7)
    out = np.einsum("nahw,nbhw->ab", i[:, :, :rows, :cols], o[:, :, :rows, :cols])
    backend = "cuda-sim" if path == "cuda-sim" else "cpu"
    options = tcir.MappingOptions(tile=[2, 2, 2]) if path == "tiled" else None
    got_o, got_out = tcir.define(GRAPH2).graph2(i, j, w1, backend=backend, options=options)
    np.testing.assert_allclose(got_o, o, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(got_out, out, rtol=1e-4, atol=1e-3)


TRIANGULAR = """
def triu_mv(float(M, M) A, float(M) x) -> (y) { y(i) +=! A(i, k) * x(k) where k in i:M }
def cumsum(float(N) a) -> (s) { s(i) +=! a(k) where i in 0:N, k in 0:i + 1 }
def band(float(N) a) -> (s) { s(i) +=! a(k) where i in 1:N - 1, k in i - 1:i + 2 }
def tril_mm(float(M, M) L, float(M, P) B) -> (C) { C(i, j) +=! L(i, k) * B(k, j) where k in 0:i + 1 }
"""


@pytest.mark.parametrize("path", ["canonical", "tiled", "cuda-sim"])
def test_reduction_ranges_that_depend_on_other_indices(path):
    """Triangular and banded reductions (`k in i:M`): the reduction runs over
    the values between the bounds at each `i`, and only those."""
    mod = tcir.define(TRIANGULAR)
    rng = np.random.default_rng(2)
    a = rng.standard_normal((7, 7)).astype(np.float32)
    x = rng.standard_normal(7).astype(np.float32)
    b = rng.standard_normal((7, 5)).astype(np.float32)
    v = rng.standard_normal(9).astype(np.float32)
    backend = "cuda-sim" if path == "cuda-sim" else "cpu"
    options = tcir.MappingOptions(tile=[2, 3, 2]) if path == "tiled" else None
    kw = {"backend": backend, "options": options}
    np.testing.assert_allclose(mod.triu_mv(a, x, **kw), np.triu(a) @ x, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(mod.cumsum(v, **kw), np.cumsum(v), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(mod.band(v, **kw), v[:-2] + v[1:-1] + v[2:], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(mod.tril_mm(a, b, **kw), np.tril(a) @ b, rtol=1e-5, atol=1e-5)


MIN_MAX_OUTPUTS = """
def add(float(M) A, float(N) B) -> (O) { O(i) = A(i) + B(i) }
def tcf(float(A_0, A_1, A_2) A, float(B_0, B_1, B_2) B, float(C_0, C_1, C_2) C) -> (O2, O3) {
  O2(j, k, l) +=! B(j, k, l) + A(i, j, k)
  O3(k, l, m) +=! C(k, l, m) + O2(j, k, l)
}
def rotate(float(N, M) I) -> (O) { O(i, j) = I(10 + i - j, i + j) where i in 0:10 }
"""


@pytest.mark.parametrize("path", ["canonical", "tiled", "cuda-sim"])
def test_output_ranges_that_are_a_min_or_max_of_sizes(path):
    """TC's TCF and UnambiguousRotate: an output index bounded by several
    sizes runs to their min (from their max), a size the call computes:
    `add` of 5 and 3 elements has 3, TCF's O2 min(B_0, A_1) x min(B_1, A_2)."""
    mod = tcir.define(MIN_MAX_OUTPUTS)
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal(5).astype(np.float32), rng.standard_normal(3).astype(np.float32)
    x = rng.standard_normal((3, 5, 6)).astype(np.float32)
    y = rng.standard_normal((4, 7, 5)).astype(np.float32)
    z = rng.standard_normal((5, 4, 3)).astype(np.float32)
    image = rng.standard_normal((15, 30)).astype(np.float32)
    backend = "cuda-sim" if path == "cuda-sim" else "cpu"
    options = tcir.MappingOptions(tile=[2, 3, 2]) if path == "tiled" else None
    kw = {"backend": backend, "options": options}
    np.testing.assert_allclose(mod.add(a, b, **kw), a[:3] + b)
    np.testing.assert_allclose(mod.add(b, a, **kw), a[:3] + b)
    o2, o3 = mod.tcf(x, y, z, **kw)
    want2 = 3 * y[:4, :6, :5] + x.sum(0)[:4, :6, None]
    want3 = 4 * z[:5, :4, :3] + want2.sum(0)[:5, :4, None]
    np.testing.assert_allclose(o2, want2, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(o3, want3, rtol=1e-5, atol=1e-5)
    # j from max(0, 20 - N) = 5 to min(11, M - 9) = 11.
    rotated = [[image[10 + i - j, i + j] for j in range(5, 11)] for i in range(10)]
    np.testing.assert_array_equal(mod.rotate(image, **kw), rotated)


NON_AFFINE = """
def tile_n(float(N) a) -> (o) { o(j) = a(j % N) * 2.0 where j in 0:N*N }
def flat_sum(float(N, N) A) -> (s) { s(j) +=! A(k / N, k % N) where j in 0:1, k in 0:N*N }
def flatten(float(N, M) A) -> (o) { o(j) = A(j / M, j % M) where j in 0:N*M }
def per_group(float(N, M) A) -> (o) { o(g) = A(g, 0) where g in 0:N/M }
def row_prefix(float(N, N) A) -> (s) { s(i) +=! A(k / N, k % N) where i in 0:N, k in 0:i*N }
"""


@pytest.mark.parametrize("path", ["canonical", "tiled", "cuda-sim"])
def test_range_bounds_that_are_not_affine_in_the_sizes(path):
    """Products and quotients of sizes in `where` ranges (`j in 0:N*N`): the
    JIT specializes the sizes, so isl only ever sees their values."""
    mod = tcir.define(NON_AFFINE)
    v = np.arange(3, dtype=np.float32)
    a = np.arange(12, dtype=np.float32).reshape(6, 2)
    sq = np.arange(9, dtype=np.float32).reshape(3, 3)
    backend = "cuda-sim" if path == "cuda-sim" else "cpu"
    options = tcir.MappingOptions(tile=[4, 2]) if path == "tiled" else None
    kw = {"backend": backend, "options": options}
    np.testing.assert_array_equal(mod.tile_n(v, **kw), np.tile(v, 3) * 2)
    np.testing.assert_array_equal(mod.flat_sum(sq, **kw), [sq.sum()])
    np.testing.assert_array_equal(mod.flatten(a, **kw), a.ravel())
    np.testing.assert_array_equal(mod.per_group(a, **kw), a[:3, 0])
    np.testing.assert_array_equal(mod.row_prefix(sq, **kw), [sq[:i].sum() for i in range(3)])


def test_a_bounds_check_on_products_of_sizes_waits_for_the_sizes():
    """`i in 0:N*N/4` reads `a(i)`: in bounds for N <= 4 only, which is
    decided when the call binds N, and named with its value."""
    mod = tcir.define("def f(float(N) a) -> (o) { o(i) = a(i) where i in 0:N*N/4 }")
    np.testing.assert_array_equal(mod.f(np.arange(4, dtype=np.float32)), np.arange(4))
    with pytest.raises(tcir.RangeError, match=r"subscript 'i' of 'a' is out of bounds .* with N=5"):
        mod.f(np.arange(5, dtype=np.float32))


IN_PLACE = """
def shifted(float(N) A) -> (O, M) {
  O(i) = 1.0 where i in 0:N
  O(i) += A(i)
  M(i) = A(i)
  M(i) max= 0.5 * A(i) + 1.0
}
"""


@pytest.mark.parametrize("path", ["canonical", "tiled", "cuda-sim"])
def test_an_update_without_reduction_index_accumulates_into_the_tensor(path):
    """`O(i) += A(i)` adds to what `O` holds (TC's semantics: without `!`
    the reduction takes the existing values into account), also where no
    index is reduced."""
    a = np.arange(-3, 4, dtype=np.float32)
    backend = "cuda-sim" if path == "cuda-sim" else "cpu"
    options = tcir.MappingOptions(tile=[4]) if path == "tiled" else None
    o, m = tcir.define(IN_PLACE).shifted(a, backend=backend, options=options)
    np.testing.assert_array_equal(o, a + 1)
    np.testing.assert_array_equal(m, np.maximum(a, 0.5 * a + 1))


LOOPS = """
def pair_sums(float(T, N) X) -> (A, B, C) {
  for t in 0:T {
    A(t, i) = X(t, i) * 2.0
    B(t, i) = t != 0 ? A(t - 1, i) + A(t, i) : A(t, i)
  }
  C(i) +=! B(t, i)
}
def for_is_a_name(float(N) X) -> (for) { for(i) = X(i) + 1.0 }
"""


@pytest.mark.parametrize("path", ["canonical", "tiled", "cuda-sim"])
def test_for_loops(path):
    """TC's `for t in 0:T { ... }`: each statement runs over the loop's range,
    reading what earlier statements wrote at `t` and earlier steps (the read
    of `t - 1` guarded by `t != 0`); `for` stays a name elsewhere."""
    mod = tcir.define(LOOPS)
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    backend = "cuda-sim" if path == "cuda-sim" else "cpu"
    options = tcir.MappingOptions(tile=[2, 2]) if path == "tiled" else None
    a, b, c = mod.pair_sums(x, backend=backend, options=options)
    expected = 2 * x
    expected[1:] += 2 * x[:-1]
    np.testing.assert_array_equal(a, 2 * x)
    np.testing.assert_array_equal(b, expected)
    np.testing.assert_array_equal(c, expected.sum(0))
    np.testing.assert_array_equal(mod.for_is_a_name(x[0], backend=backend), x[0] + 1)
