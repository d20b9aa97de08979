"""Kernels and keys shared by the tuner tests."""

from __future__ import annotations

import numpy as np

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


def run_tmm(kernel) -> None:
    """Run a compiled tmm of `SIZES` on random inputs; check it against numpy."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((SIZES["M"], SIZES["K"])).astype(np.float32)
    b = rng.standard_normal((SIZES["N"], SIZES["K"])).astype(np.float32)
    c = np.full((SIZES["M"], SIZES["N"]), np.nan, np.float32)
    kernel(a, b, c)
    np.testing.assert_allclose(c, a @ b.T, rtol=1e-5, atol=1e-5)
