"""On a GPU: index errors reported by the kernels without a synchronization,
`TCIR_SYNC`, and launches on the caller's stream (torch streams, CUDA graphs)."""

from __future__ import annotations

import numpy as np
import pytest
from cuda_helpers import needs_gpu

import tcir

SOURCE = """
def lut(float(E,D) LUT, int32(B,L) I) -> (O) { O(i,j) +=! LUT(I(i,k),j) }
def tmm(float(M,K) A, float(N,K) B) -> (C) { C(m,n) +=! A(m,kk) * B(n,kk) }
"""
mod = tcir.define(SOURCE)
MESSAGE = r"lut: index tensor 'I' holds 57 at \(3, 4\), which gives subscript 57 for dimension 0 of 'LUT' \(size 50\)"


def _inputs(xp):
    rng = np.random.default_rng(0)
    table = rng.standard_normal((50, 64)).astype(np.float32)
    index = rng.integers(0, 50, (128, 30)).astype(np.int32)
    return xp.asarray(table), xp.asarray(index)


@needs_gpu
def test_an_out_of_range_index_is_raised_by_synchronize_then_the_def_works_again():
    import cupy

    table, index = _inputs(cupy)
    expected = table.get()[index.get()].sum(1)
    np.testing.assert_allclose(mod.lut(table, index).get(), expected, rtol=1e-5, atol=1e-5)
    index[3, 4] = 57
    mod.lut(table, index)  # returns at once: the kernel reports on the device
    with pytest.raises(tcir.TCError, match=MESSAGE):
        tcir.synchronize()
    tcir.synchronize()  # raised once, then cleared
    index[3, 4] = 1
    np.testing.assert_allclose(mod.lut(table, index).get(), table.get()[index.get()].sum(1), rtol=1e-5, atol=1e-5)


@needs_gpu
def test_the_next_call_of_any_def_raises_a_reported_error():
    import cupy

    table, index = _inputs(cupy)
    index[3, 4] = 57
    mod.lut(table, index)
    cupy.cuda.runtime.deviceSynchronize()  # the kernel has run; nothing raised yet
    a = cupy.ones((4, 8), np.float32)
    with pytest.raises(tcir.TCError, match=MESSAGE):
        mod.tmm(a, a)
    np.testing.assert_allclose(mod.tmm(a, a).get(), np.full((4, 4), 8.0, np.float32))


TCIR_SYNC_SCRIPT = """
import sys, cupy, numpy as np, tcir
mod = tcir.define(sys.argv[1])
table = cupy.ones((50, 64), np.float32)
index = cupy.zeros((128, 30), np.int32)
index[3, 4] = 57
try:
    mod.lut(table, index)  # raises in the call: no synchronize needed
except tcir.TCError as e:
    print(e)
"""


@needs_gpu
def test_tcir_sync_raises_in_the_call():
    import os
    import re
    import subprocess
    import sys

    env = {**os.environ, "TCIR_SYNC": "1"}
    done = subprocess.run([sys.executable, "-c", TCIR_SYNC_SCRIPT, SOURCE], env=env, capture_output=True, text=True, timeout=300)
    assert re.search(r"lut: index tensor 'I' holds 57 at \(3, 4\)", done.stdout), done.stdout + done.stderr


@needs_gpu
def test_torch_tensors_on_a_side_stream():
    torch = pytest.importorskip("torch")
    table, index = _inputs(torch)
    table, index = table.cuda(), index.cuda()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        torch.cuda._sleep(20_000_000)  # keeps the side stream busy: a launch elsewhere runs first
        doubled = table * 2  # made on the side stream, read by tcir on it
        out = mod.lut(doubled, index)
        result = out + 1
    side.synchronize()
    assert isinstance(out, torch.Tensor) and out.device == table.device
    expected = (2 * table[index.long()].sum(1)) + 1
    torch.testing.assert_close(result, expected, rtol=1e-5, atol=1e-4)


@needs_gpu
def test_a_cuda_graph_captures_and_replays_the_kernel():
    torch = pytest.importorskip("torch")
    a = torch.randn(64, 32, device="cuda")
    b = torch.randn(48, 32, device="cuda")
    mod.tmm(a, b)  # compiled and loaded before the capture
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream), torch.cuda.graph(graph, stream=stream):
        c = mod.tmm(a, b)
    a.copy_(torch.randn(64, 32, device="cuda"))
    graph.replay()
    torch.cuda.synchronize()
    torch.testing.assert_close(c, a @ b.T, rtol=1e-4, atol=1e-4)
