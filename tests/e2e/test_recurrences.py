"""Recurrences along `for t`: a cumulative sum, an exponential moving average
and an RNN, step by step on every path, against numpy loops.

A statement reading its own tensor (or a later statement's) at `t - 1` makes
its loop stepped: `t` runs sequentially, each step running the loop's
statements in order, the other indices in parallel (on the GPU: one kernel
whose blocks and threads map the other indices, a barrier ending each step).
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import tcir
from tcir.backends.cuda.runtime import cuda_available
from tcir.runtime.numpy_reference import reference_outputs
from tcir.runtime.signature import bind

SOURCE = """
def cumsum(float(T) X) -> (C) {
  for t in 0:T {
    C(t) = X(t) + (t > 0 ? C(t - 1) : 0.0)
  }
}
def ema(float(T, B) X, float alpha) -> (E) {
  for t in 0:T {
    E(t, b) = t == 0 ? X(t, b) : alpha * X(t, b) + (1.0 - alpha) * E(t - 1, b)
  }
}
def rnn(float(T, B, I) x, float(B, J) h0, float(J, J) W, float(J, I) U) -> (h) {
  for t in 0:T {
    a(t, b, j) +=! W(j, k) * (t > 0 ? h(t - 1, b, k) : h0(b, k))
    a(t, b, j) += U(j, i) * x(t, b, i)
    h(t, b, j) = tanh(a(t, b, j))
  }
}
"""
mod = tcir.define(SOURCE)
rng = np.random.default_rng(5)
T, B, I, J = 6, 3, 4, 5
ALPHA = 0.25


def cumsum_case() -> tuple[list, np.ndarray]:
    x = rng.standard_normal(11).astype(np.float32)
    return [x], np.cumsum(x.astype(np.float64))


def ema_case() -> tuple[list, np.ndarray]:
    x = rng.standard_normal((T, B)).astype(np.float32)
    expected = np.zeros((T, B))
    expected[0] = x[0]
    for t in range(1, T):
        expected[t] = ALPHA * x[t] + (1 - ALPHA) * expected[t - 1]
    return [x, ALPHA], expected


def rnn_case() -> tuple[list, np.ndarray]:
    x = rng.standard_normal((T, B, I)).astype(np.float32)
    h0 = rng.standard_normal((B, J)).astype(np.float32)
    w = (0.5 * rng.standard_normal((J, J))).astype(np.float32)
    u = (0.5 * rng.standard_normal((J, I))).astype(np.float32)
    expected = np.zeros((T, B, J))
    state = h0.astype(np.float64)
    for t in range(T):
        state = np.tanh(state @ w.T.astype(np.float64) + x[t] @ u.T.astype(np.float64))
        expected[t] = state
    return [x, h0, w, u], expected


CASES = {"cumsum": cumsum_case, "ema": ema_case, "rnn": rnn_case}
PATHS = {
    "canonical": ("cpu", None),
    "tiled": ("cpu", tcir.MappingOptions(tile=[2, 2, 2])),
    "cuda-sim": ("cuda-sim", None),
    "cuda-sim-tiled": ("cuda-sim", tcir.MappingOptions(tile=[4, 2, 2], threads=[4, 2])),
    "cuda": ("cuda", None),
}


@pytest.mark.parametrize("path", sorted(PATHS))
@pytest.mark.parametrize("name", sorted(CASES))
def test_recurrence(name: str, path: str) -> None:
    args, expected = CASES[name]()
    backend, options = PATHS[path]
    if backend == "cuda":
        if not cuda_available():
            pytest.skip("no GPU")
        import cupy

        args = [cupy.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
    got = mod[name](*args, backend=backend, options=options)
    got = got.get() if hasattr(got, "get") else got
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_numpy_oracle_steps_too(name: str) -> None:
    """`tcir-run`'s and the tuner's reference runs the steps in order as well."""
    args, expected = CASES[name]()
    definition = mod[name].definition
    (got,) = reference_outputs(definition, bind(definition, args))
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)


def test_the_gpu_keeps_the_steps_in_one_kernel_with_a_barrier_each() -> None:
    """The RNN's default mapping: one kernel, the batch over blocks, `j` over
    threads, `t` a loop inside whose steps end with `__syncthreads()` (a step
    reads what the other threads wrote in the one before)."""
    args, _ = rnn_case()
    cuda = mod.rnn.ir(*args, backend="cuda")
    assert cuda.count("__global__") == 1 and "blockIdx.x" in cuda and "threadIdx.x" in cuda
    steps = re.search(rf"\n  for \(int (c[\d_]+) = 0; \1 < {T}; \+\+\1\) {{\n(.*)\n  }}\n}}", cuda, re.DOTALL)
    assert steps is not None, cuda
    assert "tanhf" in steps.group(2) and steps.group(2).endswith("__syncthreads();"), cuda


def test_a_stepped_loop_is_never_lowered_in_parts() -> None:
    """The default GPU mapping may lower a def's statements in parts (sub-defs,
    one after the other): never a stepped loop's, which run step by step together."""
    from tcir.compiler.partition import split_def

    definition = mod.rnn.definition
    assert split_def(definition, [[0], [1, 2]]) is None
    assert split_def(definition, [[0, 1, 2]]) is not None
