"""A sum's channels before its taps (`tcir.frontend.reduction_order`)."""

from __future__ import annotations

import pytest

import tcir
from tcir.frontend.reduction_order import taps_last


def test_a_channels_last_convolution_sums_its_channels_first():
    source = "def f(float(N,H,W,C) X, float(F,KH,KW,C) Wt) -> (Y) { Y(n,h,w,f) +=! X(n,h+kh,w+kw,c) * Wt(f,kh,kw,c) }"
    definition = tcir.define(source).f.definition
    assert definition.stmts[0].reduction_indices == ["kh", "kw", "c"]
    assert taps_last(definition).stmts[0].reduction_indices == ["c", "kh", "kw"]


def test_only_the_sums_with_taps_first_change():
    source = """def f(float(N,H,W,C) X, float(KH,KW,C) D, float(F,C) P) -> (Y, Z) {
      Y(n,h,w,c) +=! X(n,h+kh,w+kw,c) * D(kh,kw,c)
      Z(n,h,w,f) +=! X(n,h+kh,w,c) * P(f,c) where kh in 0:2
    }"""
    definition = tcir.define(source).f.definition
    ordered = taps_last(definition)
    assert ordered.stmts[0] is definition.stmts[0]  # a depthwise convolution: taps only
    assert ordered.stmts[1].reduction_indices == ["c", "kh"]


@pytest.mark.parametrize(
    "source",
    [
        "def f(float(N,C,H,W) X, float(F,C,KH,KW) Wt) -> (Y) { Y(n,f,h,w) +=! X(n,c,h+kh,w+kw) * Wt(f,c,kh,kw) }",
        "def f(float(M,K) A, float(N,K) B) -> (C) { C(m,n) +=! A(m,k) * B(n,k) }",
        "def f(float(N,F,H,W) G, float(N,C,H,W) X) -> (D) { D(f,c,kh,kw) +=! G(n,f,h,w) * X(n,c,h+kh,w+kw) where kh in 0:3, kw in 0:3 }",
    ],
)
def test_sums_already_in_that_order_are_left_alone(source):
    assert taps_last(tcir.define(source).f.definition) is None
