"""Temporaries laid out for their contractions (`tcir.frontend.temporary_layout`)."""

from __future__ import annotations

import pytest

import tcir
from tcir.compiler.defaults import default_options
from tcir.compiler.lowering import default_parts
from tcir.frontend.subscripts import accesses
from tcir.frontend.temporary_layout import contraction_layouts
from tcir.runtime.signature import Binding

BILINEAR = """def f(float(B,I) X1, float(O,I,J) W, float(B,J) X2) -> (Y) {
  T(b,o,j) +=! X1(b,i) * W(o,i,j)
  Y(b,o) +=! T(b,o,j) * X2(b,j)
}"""


def test_a_bilinear_layers_temporary_puts_its_row_and_column_last():
    definition = tcir.define(BILINEAR).f.definition
    laid_out = contraction_layouts(definition)
    assert [s.lhs_indices for s in laid_out.stmts] == [["o", "b", "j"], ["b", "o"]]
    assert str(laid_out.temporaries[0].dims) == str([definition.temporaries[0].dims[k] for k in (1, 0, 2)])
    (read,) = [r for r in accesses(laid_out.stmts[1].rhs) if r.tensor == "T"]
    assert [e.name for e in read.subscripts] == ["o", "b", "j"]


def test_the_default_then_maps_the_temporarys_sum_on_register_tiles():
    """As a batched product (o a batch entry, 256 x 128 matrices), in a part
    of its own; the reduction over j in another."""
    laid_out = contraction_layouts(tcir.define(BILINEAR).f.definition)
    binding = Binding({"B": 256, "I": 128, "J": 128, "O": 256}, ())
    whole, parts = default_parts(laid_out, binding, None, "cuda")
    assert [p.stmts[0].lhs for p in parts] == ["T", "Y"]
    options = default_options(parts[0], binding)
    assert options.tile == [1, 128, 128, 32] and options.threads == [16, 16]


@pytest.mark.parametrize(
    "source",
    [
        # attention's scores: already a row (i, of Q) and a column (j, of K)
        """def f(float(B,L,D) Q, float(B,L,D) K) -> (P) {
          S(b,i,j) +=! Q(b,i,d) * K(b,j,d)
          P(b,i,j) = exp(S(b,i,j))
        }""",
        # an output's layout is the caller's
        "def f(float(B,I) X1, float(O,I,J) W) -> (T) { T(b,o,j) +=! X1(b,i) * W(o,i,j) }",
        # a convolution's shifted subscripts: its templates know its layout
        """def f(float(N,C,H,W) X, float(F,C,KH,KW) Wt, float(F) bias) -> (Y) {
          T(n,f,h,w) +=! X(n,c,h+kh,w+kw) * Wt(f,c,kh,kw)
          Y(n,f,h,w) = T(n,f,h,w) + bias(f)
        }""",
    ],
)
def test_other_temporaries_are_left_alone(source):
    assert contraction_layouts(tcir.define(source).f.definition) is None
