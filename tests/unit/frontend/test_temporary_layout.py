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


MERGED_HEADS = "def f(float(B,H,L,L) P, float(B,H,L,D) V) -> (O) { O(b,l,h,d) +=! P(b,h,l,j) * V(b,h,j,d) }"


def test_an_output_with_a_batch_index_last_is_summed_through_a_temporary():
    """Attention merging its heads (`h` read by both operands, second-last in
    the output): the sum into `O_laid_out(b, h, l, d)`, then a copy into `O`."""
    definition = tcir.define(MERGED_HEADS).f.definition
    laid_out = contraction_layouts(definition)
    assert [(s.lhs, s.lhs_indices, s.op) for s in laid_out.stmts] == [
        ("O_laid_out", ["b", "h", "l", "d"], "+=!"),
        ("O", ["b", "l", "h", "d"], "="),
    ]
    (temporary,) = laid_out.temporaries
    assert str(temporary.dims) == str([definition.outputs[0].dims[k] for k in (0, 2, 1, 3)])
    (read,) = accesses(laid_out.stmts[1].rhs)
    assert (read.tensor, [e.name for e in read.subscripts]) == ("O_laid_out", ["b", "h", "l", "d"])
    assert [o.name for o in laid_out.outputs] == ["O"]


def test_the_default_then_maps_the_sum_as_a_batched_product_and_copies_it():
    laid_out = contraction_layouts(tcir.define(MERGED_HEADS).f.definition)
    binding = Binding({"B": 8, "H": 12, "L": 512, "D": 64}, ())
    whole, parts = default_parts(laid_out, binding, None, "cuda")
    assert [p.stmts[0].lhs for p in parts] == ["O_laid_out", "O"]
    options = default_options(parts[0], binding)
    assert options.tile[-3:] == [128, 64, 32] and options.threads == [8, 16]


@pytest.mark.parametrize(
    "source",
    [
        # the output read by a later statement
        """def f(float(B,H,L,L) P, float(B,H,L,D) V) -> (O, S) {
          O(b,l,h,d) +=! P(b,h,l,j) * V(b,h,j,d)
          S(b,l) +=! O(b,l,h,d)
        }""",
        # a later writer with other indices
        """def f(float(B,H,L,L) P, float(B,H,L,D) V) -> (O) {
          O(b,l,h,d) +=! P(b,h,l,j) * V(b,h,j,d)
          O(w,x,y,z) = O(w,x,y,z) * 2.0
        }""",
        # a batched product whose last two indices are its row and column
        "def f(float(B,M,K) X, float(B,K,N) Y) -> (Z) { Z(b,m,n) +=! X(b,m,k) * Y(b,k,n) }",
    ],
)
def test_other_outputs_keep_their_statements(source):
    assert contraction_layouts(tcir.define(source).f.definition) is None


def test_the_writers_after_the_sum_update_the_temporary_before_the_copy():
    """Attention normalizing after its sum (`O = O / Z`): both writers write
    the temporary, reading it in its order, then one copy."""
    source = """def f(float(B,H,L,L) P, float(B,H,L,D) V, float(B,H,L) Z) -> (O) {
      O(b,l,h,d) +=! P(b,h,l,j) * V(b,h,j,d)
      O(b,l,h,d) = O(b,l,h,d) / Z(b,h,l)
    }"""
    laid_out = contraction_layouts(tcir.define(source).f.definition)
    assert [(s.lhs, s.lhs_indices) for s in laid_out.stmts] == [
        ("O_laid_out", ["b", "h", "l", "d"]), ("O_laid_out", ["b", "h", "l", "d"]), ("O", ["b", "l", "h", "d"])
    ]
    reads = [(r.tensor, [e.name for e in r.subscripts]) for r in accesses(laid_out.stmts[1].rhs)]
    assert reads == [("O_laid_out", ["b", "h", "l", "d"]), ("Z", ["b", "h", "l"])]


ATTENTION_MERGED_HEADS = """def f(float(B,H,L,D) Q, float(B,H,L,D) K, float(B,H,L,D) V) -> (O) {
  S(b,h,i,j) +=! Q(b,h,i,d) * K(b,h,j,d)
  M(b,h,i) max=! S(b,h,i,j)
  P(b,h,i,j) = exp(S(b,h,i,j) - M(b,h,i))
  Z(b,h,i) +=! P(b,h,i,j)
  O(b,i,h,d) +=! P(b,h,i,j) * V(b,h,j,d)
  O(b,i,h,d) = O(b,i,h,d) / Z(b,h,i)
}"""


def test_attention_merging_heads_keeps_attentions_parts_then_copies():
    """The parts of attention written batch-first (the scores' product, the
    softmax's row-wise chain, the value product with its normalization),
    then the copy into the merged heads' layout, a part of its own."""
    laid_out = contraction_layouts(tcir.define(ATTENTION_MERGED_HEADS).f.definition)
    binding = Binding({"B": 8, "H": 12, "L": 512, "D": 64}, ())
    whole, parts = default_parts(laid_out, binding, None, "cuda")
    assert [[s.lhs for s in p.stmts] for p in parts] == [
        ["S"], ["M", "P", "Z"], ["O_laid_out", "O_laid_out"], ["O"]
    ]
