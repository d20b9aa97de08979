"""Kernels and keys shared by the tuner tests."""

from __future__ import annotations

import tcir
from tcir.runtime.signature import Binding
from tcir.compiler.artifacts import target_architecture
from tcir.compiler.canonical import ProblemKey

TMM = """
def tmm(float(M,K) A, float(N,K) B) -> (C) {
  C(m,n) +=! A(m,kk) * B(n,kk)
}
"""

TMM_RENAMED = """
def other(float(P,Q) X, float(R,Q) Y) -> (Z) {
  Z(a,b) +=! X(a,c) * Y(b,c)
}
"""

SIZES = {"M": 8, "K": 4, "N": 6}


def tmm() -> tcir.Function:
    return tcir.define(TMM).tmm


def tmm_key(sizes: dict[str, int] = SIZES) -> ProblemKey:
    return ProblemKey.of(tmm().definition, sizes, target_architecture("cpu"))


def tmm_binding(sizes: dict[str, int] = SIZES) -> Binding:
    return Binding(dict(sizes), ())
