"""Calling a def: scalar parameters as any kind of number, and `outputs=`/`out=`."""

from __future__ import annotations

import numpy as np
import pytest

import tcir
from tcir.backends.cuda.runtime import cuda_available

SOURCE = """
def scale(float(N) A, float s) -> (B) { B(i) = A(i) * s }
def accumulate(float(N) A) -> (S) { S(i) += A(i) }
def two(float(N) A) -> (P, Q) {
  P(i) = A(i) + 1
  Q(i) = A(i) * 2
}
"""
BACKENDS = ["cpu", "cuda-sim"]


@pytest.fixture(scope="module")
def mod() -> tcir.Module:
    return tcir.define(SOURCE)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    "s", [2.0, 2, np.float32(2.0), np.float64(2.0), np.int64(2), np.array(2.0), np.array(2.0, np.float32)],
    ids=["float", "int", "np.float32", "np.float64", "np.int64", "0-d float64", "0-d float32"],
)
def test_numpy_scalars_and_0d_arrays_are_scalars(mod, backend, s):
    a = np.arange(4, dtype=np.float32)
    np.testing.assert_array_equal(mod.scale(a, s, backend=backend), a * 2)


def test_a_scalar_parameter_given_an_array_names_it(mod):
    with pytest.raises(tcir.ShapeError, match="argument #1 's' of scale must be a number, got ndarray"):
        mod.scale(np.ones(4, np.float32), np.ones(3))


@pytest.mark.parametrize("backend", BACKENDS)
def test_out_is_written_in_place_and_returned(mod, backend):
    a = np.arange(4, dtype=np.float32)
    out = np.full(4, np.nan, np.float32)
    assert mod.scale(a, 3.0, out=out, backend=backend) is out
    np.testing.assert_array_equal(out, a * 3)
    p, q = np.empty(4, np.float32), np.empty(4, np.float32)
    result = mod.two(a, outputs=(p, q), backend=backend)
    assert result[0] is p and result[1] is q
    np.testing.assert_array_equal(p, a + 1)
    np.testing.assert_array_equal(q, a * 2)


@pytest.mark.parametrize("backend", BACKENDS)
def test_outputs_accumulated_into_start_at_zero(mod, backend):
    s = np.full(4, 9.0, np.float32)
    mod.accumulate(np.ones(4, np.float32), outputs=[s], backend=backend)
    np.testing.assert_array_equal(s, np.ones(4))


@pytest.mark.parametrize(
    "bad, message",
    [
        (np.zeros(5, np.float32), r"output 'B' of scale must have shape \(4,\), got \(5,\)"),
        (np.zeros(4, np.float64), "output 'B' of scale must have dtype float32, got float64"),
        (np.zeros(8, np.float32)[::2], "output 'B' of scale must be C-contiguous"),
        (np.frombuffer(bytes(16), np.float32), "output 'B' of scale is read-only"),
        ((np.zeros(4, np.float32),) * 2, r"scale: outputs= needs 1 arrays \(B\), got 2"),
        ([1.0, 2.0, 3.0, 4.0], r"scale: outputs= needs 1 arrays \(B\), got 4"),
        ("B", "output 'B' of scale must be an array, got str"),
    ],
)
def test_bad_outputs_are_shape_errors_and_write_nothing(mod, bad, message):
    with pytest.raises(tcir.ShapeError, match=message):
        mod.scale(np.ones(4, np.float32), 3.0, out=bad)


def test_outputs_and_out_together_are_refused(mod):
    out = np.zeros(4, np.float32)
    with pytest.raises(tcir.TCError, match="give outputs= or out=, not both"):
        mod.scale(np.ones(4, np.float32), 3.0, out=out, outputs=out)


@pytest.mark.skipif(not cuda_available(), reason="no CUDA device")
def test_out_on_the_gpu_cupy_and_torch(mod):
    import cupy

    a = cupy.arange(4, dtype=cupy.float32)
    out = cupy.full(4, cupy.nan, cupy.float32)
    assert mod.scale(a, np.float32(3.0), out=out) is out
    np.testing.assert_array_equal(cupy.asnumpy(out), np.arange(4) * 3)
    with pytest.raises(tcir.ShapeError, match="output 'B' of scale must be a GPU array for backend 'cuda'"):
        mod.scale(a, 3.0, out=np.zeros(4, np.float32))
    torch = pytest.importorskip("torch")
    t = torch.arange(4, dtype=torch.float32, device="cuda")
    tout = torch.empty(4, dtype=torch.float32, device="cuda")
    assert mod.scale(t, 3.0, out=tout) is tout
    assert torch.equal(tout, t * 3)


@pytest.mark.skipif(not cuda_available(), reason="no CUDA device")
def test_out_calls_on_the_gpu_take_the_cached_launcher(mod):
    """A call with `out=` like an earlier one (types, shapes, strides of
    inputs and outputs) launches through the cached launcher: outputs written
    in place and returned, those accumulated into zeroed each call; an
    output unlike the earlier ones still gets the full checks."""
    import cupy

    a = cupy.arange(4, dtype=cupy.float32)
    s = cupy.full(4, 9.0, cupy.float32)
    for _ in range(3):
        assert mod.accumulate(a, out=s) is s
        np.testing.assert_array_equal(cupy.asnumpy(s), np.arange(4))
    p, q = cupy.empty(4, cupy.float32), cupy.empty(4, cupy.float32)
    for _ in range(2):
        result = mod.two(a, outputs=[p, q])
        assert result[0] is p and result[1] is q
        np.testing.assert_array_equal(cupy.asnumpy(q), np.arange(4) * 2)
    assert any(len(key) == 3 for key in mod.two._launchers[None]), "no launcher for calls with outputs="
    np.testing.assert_array_equal(cupy.asnumpy(mod.two(a)[0]), np.arange(4) + 1)
    with pytest.raises(tcir.ShapeError, match=r"output 'S' of accumulate must have shape \(4,\), got \(5,\)"):
        mod.accumulate(a, out=cupy.zeros(5, cupy.float32))
    with pytest.raises(tcir.ShapeError, match="output 'S' of accumulate must be C-contiguous"):
        mod.accumulate(a, out=cupy.zeros(8, cupy.float32)[::2])
    torch = pytest.importorskip("torch")
    t, tout = torch.arange(4, dtype=torch.float32, device="cuda"), torch.full((4,), 9.0, device="cuda")
    for _ in range(2):
        assert mod.accumulate(t, out=tout) is tout
        assert torch.equal(tout, t)


@pytest.mark.skipif(not cuda_available(), reason="no CUDA device")
def test_torch_calls_on_the_gpu_through_the_cached_launcher(mod):
    """Calls on torch tensors like an earlier one pass them by address; a
    tensor the checks refuse (not contiguous) is refused at every call, the
    launcher made for its key included."""
    torch = pytest.importorskip("torch")
    t = torch.arange(4, dtype=torch.float32, device="cuda")
    for k in range(3):
        p, q = mod.two(t + k)
        assert torch.equal(p, t + k + 1) and torch.equal(q, (t + k) * 2)
    strided = torch.arange(8, dtype=torch.float32, device="cuda")[::2]
    for _ in range(2):
        with pytest.raises(tcir.ShapeError, match="argument 'A' must be C-contiguous"):
            mod.two(strided)
