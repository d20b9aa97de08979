"""Guarded programs (padding, causal masks, boundary conditions) against numpy.

A read under a ternary whose condition keeps it in bounds does not narrow
the range of an index (`tcir.frontend.ranges`): a "same" convolution sums
over the whole filter, the padded reads being 0. Each program runs on the
CPU and on the simulated GPU (which faults on any out-of-bounds read).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

import tcir
from tcir.backends.cuda.runtime import cuda_available


@dataclass(frozen=True)
class Guarded:
    """A guarded def, its inputs and a float64 numpy reference."""

    source: str
    inputs: Callable[[np.random.Generator], list[Any]]
    reference: Callable[..., np.ndarray | tuple[np.ndarray, ...]]


def f32(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


def correlate_same(x: np.ndarray, w: np.ndarray, pad: int) -> np.ndarray:
    """1-D cross-correlation of `x` with `w`, zero-padded by `pad` in front."""
    padded = np.concatenate([np.zeros(pad), x, np.zeros(len(w))])
    return np.array([padded[t : t + len(w)] @ w for t in range(len(x))])


def conv2d_padded(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """NCHW by FCKK, zero padding 1 on every side, stride 1 ("same" for 3x3)."""
    n, c, h, wd = x.shape
    f, _, kh, kw = w.shape
    padded = np.zeros((n, c, h + kh - 1 + 1, wd + kw - 1 + 1))
    padded[:, :, 1 : h + 1, 1 : wd + 1] = x
    out = np.zeros((n, f, h, wd))
    for i in range(kh):
        for j in range(kw):
            out += np.einsum("nchw,fc->nfhw", padded[:, :, i : i + h, j : j + wd], w[:, :, i, j])
    return out


def causal_softmax(s: np.ndarray) -> np.ndarray:
    masked = np.where(np.tril(np.ones_like(s)) > 0, s, -np.inf)
    e = np.exp(masked - masked.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


def laplacian(x: np.ndarray) -> np.ndarray:
    padded = np.pad(x, 1)
    return 4 * x - padded[:-2, 1:-1] - padded[2:, 1:-1] - padded[1:-1, :-2] - padded[1:-1, 2:]


def maxpool_same(x: np.ndarray) -> np.ndarray:
    padded = np.pad(x, 1, constant_values=-np.inf)
    h, w = x.shape
    return np.max([padded[i : i + h, j : j + w] for i in range(3) for j in range(3)], axis=0)


def smooth(x: np.ndarray) -> np.ndarray:
    out = x.copy()
    out[1:-1] = (x[:-2] + x[1:-1] + x[2:]) / 3
    return out


PROGRAMS: dict[str, Guarded] = {
    # The issue's "same" convolution: X read at t + k - 1, in bounds where guarded.
    "same_conv1d": Guarded(
        """def same_conv1d(float(T) X, float(K) W) -> (Y) {
          Y(t) +=! (t + k >= 1 && t + k <= T) ? X(t + k - 1) * W(k) : 0.0 where t in 0:T
        }""",
        lambda rng: [f32(rng, 7), f32(rng, 3)],
        lambda x, w: correlate_same(x, w, 1),
    ),
    "padded_conv2d": Guarded(
        """def padded_conv2d(float(N, C, H, W) I, float(F, C, KH, KW) Wt) -> (O) {
          O(n, f, h, w) +=! (h + kh >= 1 && h + kh <= H && w + kw >= 1 && w + kw <= W)
              ? I(n, c, h + kh - 1, w + kw - 1) * Wt(f, c, kh, kw) : 0.0
              where h in 0:H, w in 0:W
        }""",
        lambda rng: [f32(rng, 2, 3, 5, 6), f32(rng, 4, 3, 3, 3)],
        conv2d_padded,
    ),
    "causal_conv1d": Guarded(
        """def causal_conv1d(float(B, T) X, float(K) W) -> (Y) {
          Y(b, t) +=! t - k >= 0 ? X(b, t - k) * W(k) : 0.0 where t in 0:T
        }""",
        lambda rng: [f32(rng, 2, 7), f32(rng, 3)],
        lambda x, w: np.stack([np.convolve(row, w)[: x.shape[1]] for row in x]),
    ),
    "dilated_causal_conv1d": Guarded(
        """def dilated_causal_conv1d(float(T) X, float(K) W) -> (Y) {
          Y(t) +=! t - 2 * k >= 0 ? X(t - 2 * k) * W(k) : 0.0 where t in 0:T
        }""",
        lambda rng: [f32(rng, 9), f32(rng, 3)],
        lambda x, w: np.array([sum(w[k] * x[t - 2 * k] for k in range(len(w)) if t >= 2 * k) for t in range(len(x))]),
    ),
    "causal_softmax": Guarded(
        """def causal_softmax(float(N, N) S) -> (P) {
          M(i) max=! j <= i ? S(i, j) : -3.0e38
          E(i, j) = j <= i ? exp(S(i, j) - M(i)) : 0.0
          Z(i) +=! E(i, j)
          P(i, j) = E(i, j) / Z(i)
        }""",
        lambda rng: [f32(rng, 6, 6)],
        causal_softmax,
    ),
    "inclusive_prefix_sum": Guarded(
        """def inclusive_prefix_sum(float(N) X) -> (C) {
          C(i) +=! j <= i ? X(j) : 0.0 where i in 0:N
        }""",
        lambda rng: [f32(rng, 8)],
        np.cumsum,
    ),
    # TC's segment offsets (an exclusive prefix sum): the guard keeps `r_k`
    # below `k`, and `Segments` alone bounds it.
    "exclusive_prefix_sum": Guarded(
        """def exclusive_prefix_sum(int32(K) Segments) -> (Idx) {
          Idx(k) +=! (r_k < k) ? Segments(r_k) : 0 where k in 0:K+1
        }""",
        lambda rng: [rng.integers(0, 9, 6).astype(np.int32)],
        lambda s: np.concatenate([[0], np.cumsum(s)]),
    ),
    "shift_right": Guarded(
        """def shift_right(float(N) A) -> (O) {
          O(i) = i > 0 ? A(i - 1) : 0.0 where i in 0:N
        }""",
        lambda rng: [f32(rng, 6)],
        lambda a: np.concatenate([[0.0], a[:-1]]),
    ),
    "smooth_with_fixed_ends": Guarded(
        """def smooth_with_fixed_ends(float(N) X) -> (Y) {
          Y(i) = (i > 0 && i < N - 1) ? (X(i - 1) + X(i) + X(i + 1)) / 3.0 : X(i)
        }""",
        lambda rng: [f32(rng, 9)],
        smooth,
    ),
    "laplacian_zero_boundary": Guarded(
        """def laplacian_zero_boundary(float(H, W) X) -> (L) {
          L(i, j) = 4.0 * X(i, j) - (i > 0 ? X(i - 1, j) : 0.0) - (i < H - 1 ? X(i + 1, j) : 0.0)
                  - (j > 0 ? X(i, j - 1) : 0.0) - (j < W - 1 ? X(i, j + 1) : 0.0)
        }""",
        lambda rng: [f32(rng, 5, 6)],
        laplacian,
    ),
    "maxpool_same": Guarded(
        """def maxpool_same(float(H, W) I) -> (O) {
          O(h, w) max=! (h + kh >= 1 && h + kh <= H && w + kw >= 1 && w + kw <= W)
              ? I(h + kh - 1, w + kw - 1) : -3.0e38
              where h in 0:H, w in 0:W, kh in 0:3, kw in 0:3
        }""",
        lambda rng: [f32(rng, 5, 4)],
        maxpool_same,
    ),
    "upper_triangular_matmul": Guarded(
        """def upper_triangular_matmul(float(N, N) A, float(N, M) B) -> (C) {
          C(i, j) +=! k >= i ? A(i, k) * B(k, j) : 0.0
        }""",
        lambda rng: [f32(rng, 5, 5), f32(rng, 5, 3)],
        lambda a, b: np.triu(a) @ b,
    ),
}


@pytest.mark.parametrize("backend", ["cpu", "cuda-sim", "cuda"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_guarded_program(name: str, backend: str) -> None:
    program = PROGRAMS[name]
    inputs = program.inputs(np.random.default_rng(7))
    expected = program.reference(*[np.asarray(x, np.float64) if x.dtype.kind == "f" else x for x in inputs])
    if backend == "cuda":
        if not cuda_available():
            pytest.skip("no GPU")
        import cupy

        inputs = [cupy.asarray(x) for x in inputs]
    got = tcir.define(program.source)[name](*inputs, backend=backend)
    got = got.get() if hasattr(got, "get") else got
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


def test_the_issue_example_sums_over_the_whole_filter() -> None:
    """`X = 1..6`, `W = [1, 10, 100]`: every output sums three products (the
    padded ones 0), not one (the range of `k` narrowed to `[1, 2)` by the
    guarded read, as TC's intersection rule would)."""
    x = np.arange(1, 7, dtype=np.float32)
    w = np.array([1, 10, 100], np.float32)
    got = tcir.define(PROGRAMS["same_conv1d"].source).same_conv1d(x, w)
    np.testing.assert_array_equal(got, [210, 321, 432, 543, 654, 65])
