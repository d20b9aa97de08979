"""Index variables that always go together, collapsed into one (`tcir.frontend.collapse`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tcir
from tcir.backends.cuda.launch import extract_host_program
from tcir.frontend.collapse import collapsed
from tcir.frontend.unparse import expr_text
from tcir.runtime.signature import bind

EXAMPLES = Path(__file__).parents[2] / "examples"
ATTENTION = tcir.define((EXAMPLES / "zoo" / "attention.tc").read_text())


def _text(view) -> list[str]:
    d = view.definition
    sizes = d.size_params
    tensors = [f"{p.name}({', '.join(sizes[e.position] for e in p.dims)})" for p in (*d.inputs, *d.outputs)]
    stmt = d.stmts[0]
    return [*tensors, f"{stmt.lhs}({', '.join(stmt.lhs_indices)}) {stmt.op} {expr_text(stmt.rhs, sizes)}"]


def test_projections_of_several_heads_are_matrix_products():
    """An einsum's `btd,hed->bthe`: the (b, t) rows and (h, e) columns are
    one index each, over tensors of B * T and H * E."""
    view = collapsed(ATTENTION.qkv_projection.definition)
    assert _text(view) == ["X(B_T, D)", "W(H_E, D)", "Q(B_T, H_E)", "Q(b_t, h_e) +=! X(b_t, d) * W(h_e, d)"]
    assert view.products == {"B_T": ("B", "T"), "H_E": ("H", "E")}
    assert view.sizes({"B": 2, "T": 3, "D": 4, "H": 5, "E": 6})["H_E"] == 30
    view = collapsed(ATTENTION.output_projection.definition)
    assert _text(view)[-1] == "Y(b_t, d) +=! O(b_t, h_e) * W(d, h_e)"


@pytest.mark.parametrize(
    "source",
    [
        "def f(float(M,K) A, float(N,K) B) -> (C) { C(m,n) +=! A(m,k) * B(n,k) }",  # nothing to merge
        "def f(float(B,M,K) A, float(B,N,K) C) -> (D) { D(b,m,n) +=! A(b,m,k) * C(b,n,k) }",
        "def f(float(N,D) X) -> (G) { G(i,j) +=! X(n,i) * X(n,j) }",  # one tensor read twice
        "def f(float(A,B,C) X) -> (Y) { Y(a,b,c) = X(a,b,c) }",  # no reduction
        "def f(float(B,T,D) X) -> (m) { m(b,d) +=! X(b,t,d) / T }",  # b and d apart in X
        "def f(float(N,H,W,C) X) -> (m) { m(c) +=! X(n,h,w,c) / N }",  # a size of the run read alone
        "def f(float(N,H,W,C) X) -> (m) { m(c) +=! X(n,h,w,c) / (N*H) }",  # part of the run's product
        "def f(float(N,H,W,C) X, float(F,C) Wt) -> (Y) { Y(n,h,w,f) +=! X(n,h,w,c) * Wt(f,c) where h in 0:H-1 }",
        "def f(float(N,H,W,C) X, float(F,K,C) Wt) -> (Y) { Y(n,h,w,f) +=! X(n,h+k,w,c) * Wt(f,k,c) }",
        "def f(float(B,T,D) X, float(T,B,D) Z) -> (Y) { Y(b,t) +=! X(b,t,d) * Z(t,b,d) }",  # another order
        "def f(float(B,T,D) X, float(H,E,D) W, float(Z) U) -> (Q) { Q(b,t,h,e) +=! X(b,t,d) * W(h,e,d) }",  # U unread
    ],
)
def test_what_does_not_collapse(source):
    assert collapsed(tcir.define(source).f.definition) is None


def test_a_sum_of_one_tensor_collapses_with_the_products_of_its_sizes():
    """A channels-last image's per-channel mean is a column sum over the
    (n, h, w) rows, its divisor the rows' count; an NCHW global average
    pool, a row sum. The numbers are the def's (cuda-sim, odd sizes)."""
    mean = tcir.define("def f(float(N,H,W,C) X) -> (m) { m(c) +=! X(n,h,w,c) / (N*H*W) }").f
    assert _text(collapsed(mean.definition)) == ["X(N_H_W, C)", "m(C)", "m(c) +=! X(n_h_w, c) / float(N_H_W)"]
    pool = tcir.define("def f(float(N,C,H,W) X) -> (Y) { Y(n,c) +=! X(n,c,h,w) / (H * W * 2) }").f
    assert _text(collapsed(pool.definition))[-1] == "Y(n_c) +=! X(n_c, h_w) / float(H_W * 2)"
    x = np.random.default_rng(0).standard_normal((3, 5, 7, 9), np.float32)
    np.testing.assert_allclose(mean(x, backend="cuda-sim"), x.mean((0, 1, 2)), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(pool(x, backend="cuda-sim"), x.sum((2, 3)) / 126, rtol=1e-5, atol=1e-6)


def test_the_default_gpu_mapping_lowers_the_collapsed_def_over_views_of_its_buffers():
    """The host function views the 3-D and 4-D buffers as matrices
    (`memref.collapse_shape`), the kernel takes the matrix product's
    template, and the numbers are the def's (cuda-sim, odd sizes)."""
    fn = ATTENTION.qkv_projection
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((3, 5, 7), np.float32), rng.standard_normal((2, 3, 7), np.float32)
    ir = fn.ir(x, w, backend="cuda-sim")
    assert "memref.collapse_shape %X [[0 : i64, 1 : i64], [2 : i64]] : memref<3x5x7xf32> into memref<15x7xf32>" in ir
    assert (
        "memref.collapse_shape %Q [[0 : i64, 1 : i64], [2 : i64, 3 : i64]] : memref<3x5x2x3xf32> into memref<15x6xf32>"
        in ir
    )
    np.testing.assert_allclose(fn(x, w, backend="cuda-sim"), np.einsum("btd,hed->bthe", x, w), rtol=1e-5, atol=1e-5)
    with_options = fn.ir(x, w, backend="cuda-sim", options=tcir.MappingOptions(tile=[1, 1, 2, 3]))
    assert "collapse_shape" not in with_options, "explicit options map the def as written"


def test_a_launch_views_a_collapsed_buffer_with_its_shape():
    fn = ATTENTION.output_projection
    o, w = np.zeros((2, 4, 3, 5), np.float32), np.zeros((6, 3, 5), np.float32)
    module = fn.lowered(bind(fn.definition, [o, w]), None, "cuda")
    (launch, *_) = [launch for launch in extract_host_program(module).launches if len(launch.args) == 3]
    assert [arg.shape for arg in launch.args] == [(8, 15), (6, 15), (8, 6)]


def test_scalar_inputs_and_full_sums_collapse_too():
    """A scalar input stays an input; a sum into a 0-d tensor sums one
    collapsed index (cuda-sim against the CPU)."""
    scaled = tcir.define(
        "def f(float(B,T,D) X, float(H,E,D) W, float alpha) -> (Q) { Q(b,t,h,e) +=! alpha * X(b,t,d) * W(h,e,d) }"
    ).f
    assert _text(collapsed(scaled.definition))[-1] == "Q(b_t, h_e) +=! alpha * X(b_t, d) * W(h_e, d)"
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((3, 5, 7), np.float32), rng.standard_normal((2, 3, 7), np.float32)
    np.testing.assert_allclose(scaled(x, w, 2.0, backend="cuda-sim"), scaled(x, w, 2.0, backend="cpu"), rtol=1e-5)
    dot = tcir.define("def f(float(I,J) A, float(I,J) B) -> (t) { t() +=! A(i,j) * B(i,j) }").f
    assert collapsed(dot.definition).products == {"I_J": ("I", "J")}
    a, b = rng.standard_normal((30, 70), np.float32), rng.standard_normal((30, 70), np.float32)
    np.testing.assert_allclose(dot(a, b, backend="cuda-sim"), dot(a, b, backend="cpu"), rtol=1e-4)
