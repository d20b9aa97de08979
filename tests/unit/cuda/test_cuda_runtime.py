"""The cupy runtime: imports and errors without a GPU, results with one."""

from __future__ import annotations

import os
import re
import sys

import numpy as np
import pytest
from cuda_helpers import load, needs_gpu

from tcir.backends.cuda.launch import extract_host_program
from tcir.backends.cuda.runtime import CudaProgram, compile_module, cuda_available
from tcir.errors import ShapeError, TCError


def test_without_cupy_the_runtime_imports_and_reports(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setitem(sys.modules, "cupy", None)  # `import cupy` raises ImportError
    assert not cuda_available()
    with pytest.raises(TCError, match="cupy is not installed"):
        compile_module(load("matmul.mlir"))


@needs_gpu
def test_matmul_matches_numpy():
    import cupy

    rng = np.random.default_rng(0)
    a = rng.standard_normal((128, 32), dtype=np.float32)
    b = rng.standard_normal((256, 32), dtype=np.float32)
    c = cupy.full((128, 256), np.nan, dtype=np.float32)
    program = compile_module(load("matmul.mlir"))
    program(cupy.asarray(a), cupy.asarray(b), c)
    # The test kernel covers what its launch reaches: i = tx < 32, j = bx + ty < 15.
    np.testing.assert_allclose(c.get()[:32, :15], (a @ b.T)[:32, :15], rtol=1e-5, atol=1e-5)


@needs_gpu
def test_scalar_arguments_and_two_launches():
    import cupy

    out = cupy.full(32, np.nan, dtype=np.float32)
    compile_module(load("control-flow.mlir"))(out, 3.0, 16)
    fib = np.array([[1.0, 2.0], [2.0, 1.0]], dtype=np.float32)
    expected = []
    for tx in range(32):
        a, b = fib[tx % 2]
        r, s = (a * 3.0, b) if a > 5 or tx >= 16 else (b, 3.0)
        expected.append(r + s)
    np.testing.assert_array_equal(out.get(), np.array(expected, dtype=np.float32))


@needs_gpu
def test_wrong_shapes_and_host_arrays_are_user_errors():
    import cupy

    program = compile_module(load("matmul.mlir"))
    a, b, c = (cupy.zeros(s, dtype=np.float32) for s in ((128, 32), (256, 32), (128, 256)))
    with pytest.raises(
        ShapeError, match=re.escape("argument 'B': expected shape (256, 32), got (32, 256)")
    ):
        program(a, b.T.copy(), c)
    with pytest.raises(ShapeError, match="argument 'A': expected dtype float32, got float64"):
        program(a.astype(np.float64), b, c)
    with pytest.raises(TCError, match="argument 'A' is a numpy array"):
        program(a.get(), b, c)


@needs_gpu
def test_dlpack_producers_are_accepted():
    torch = pytest.importorskip("torch")
    a = torch.ones((128, 32), device="cuda")
    b = torch.ones((256, 32), device="cuda")
    c = torch.zeros((128, 256), device="cuda")
    compile_module(load("matmul.mlir"))(a, b, c)
    torch.cuda.synchronize()
    assert float(c[0, 0]) == 32.0


@needs_gpu
def test_nvrtc_errors_name_the_saved_source():
    host = extract_host_program(load("matmul.mlir"))
    with pytest.raises(TCError, match="NVRTC failed to compile") as info:
        CudaProgram('extern "C" __global__ void tmm_kernel() { undeclared(); }', host)
    path = re.search(r"compile (\S+kernels\.cu)", str(info.value))
    assert path is not None and os.path.exists(path.group(1))


_INTEGER_KERNEL = """
builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "kernels"}> ({
    "gpu.func"() <{function_type = (memref<64xi64>, memref<64x5xi64>, memref<64xf32>, memref<64x2xf32>) -> (), kernel}> ({
    ^bb0(%X: memref<64xi64>, %Y: memref<64x5xi64>, %F: memref<64xf32>, %G: memref<64x2xf32>):
      %tx = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c3 = arith.constant 3 : index
      %c4 = arith.constant 4 : index
      %d = arith.constant -7 : i64
      %x = memref.load %X[%tx] : memref<64xi64>
      %fd = arith.floordivsi %x, %d : i64
      %cd = arith.ceildivsi %x, %d : i64
      %rs = arith.remsi %x, %d : i64
      %dv = arith.divsi %x, %d : i64
      %u = arith.ceildivui %x, %d : i64
      memref.store %fd, %Y[%tx, %c0] : memref<64x5xi64>
      memref.store %cd, %Y[%tx, %c1] : memref<64x5xi64>
      memref.store %rs, %Y[%tx, %c2] : memref<64x5xi64>
      memref.store %dv, %Y[%tx, %c3] : memref<64x5xi64>
      memref.store %u, %Y[%tx, %c4] : memref<64x5xi64>
      %f = memref.load %F[%tx] : memref<64xf32>
      %one = arith.constant 1.0 : f32
      %mx = arith.maximumf %f, %one : f32
      %mn = arith.maxnumf %f, %one : f32
      memref.store %mx, %G[%tx, %c0] : memref<64x2xf32>
      memref.store %mn, %G[%tx, %c1] : memref<64x2xf32>
      "gpu.return"() : () -> ()
    }) {sym_name = "semantics"} : () -> ()
  }) : () -> ()
  func.func @host(%X: memref<64xi64>, %Y: memref<64x5xi64>, %F: memref<64xf32>, %G: memref<64x2xf32>) {
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    "gpu.launch_func"(%c1, %c1, %c1, %c64, %c1, %c1, %X, %Y, %F, %G) <{kernel = @kernels::@semantics, operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 4, 0>}> : (index, index, index, index, index, index, memref<64xi64>, memref<64x5xi64>, memref<64xf32>, memref<64x2xf32>) -> ()
    func.return
  }
}
"""


@needs_gpu
def test_division_and_nan_semantics_match_arith():
    import cupy

    import tcir

    x = np.arange(-32, 32, dtype=np.int64)
    f = np.where(x % 3 == 0, np.nan, x).astype(np.float32)
    y = cupy.zeros((64, 5), dtype=np.int64)
    g = cupy.zeros((64, 2), dtype=np.float32)
    compile_module(tcir.parse_ir(_INTEGER_KERNEL))(cupy.asarray(x), y, cupy.asarray(f), g)
    trunc = np.trunc(x / -7).astype(np.int64)
    unsigned = [-(-(int(v) % 2**64) // (2**64 - 7)) for v in x]
    expected = np.stack([x // -7, -(x // 7), x - trunc * -7, trunc, unsigned], axis=1)
    np.testing.assert_array_equal(y.get(), expected)
    np.testing.assert_array_equal(g.get()[:, 0], np.where(np.isnan(f), np.nan, np.maximum(f, 1)))
    np.testing.assert_array_equal(g.get()[:, 1], np.fmax(f, 1))


@needs_gpu
def test_vector_copies_take_misaligned_inputs():
    """A kernel reading an input by float4 (the default tmm at these sizes:
    `copy_vector_width=4`) gets a copy of a view 4 bytes past an aligned
    address, cupy or torch, by the cached launcher and with options (float4
    loads, and 16-byte cp.async), and computes the right numbers."""
    import cupy

    import tcir

    tmm = tcir.define("def tmm(float(M,K) A, float(N,K) B) -> (C) {\n  C(m,n) +=! A(m,kk) * B(n,kk)\n}\n").tmm
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((128, 1024), dtype=np.float32), rng.standard_normal((1024, 1024), dtype=np.float32)
    base = cupy.empty(a.size + 1, np.float32)
    base[1:] = cupy.asarray(a).ravel()
    view, b_gpu = base[1:].reshape(a.shape), cupy.asarray(b)
    assert view.data.ptr % 16 == 4
    assert "const float4*" in tmm.ir(a, b, backend="cuda")
    options = tcir.MappingOptions(tile=[32, 32, 32], threads=[16, 8], num_stages=3, copy_vector_width=4)
    copied = tcir.MappingOptions(tile=[32, 32, 32], threads=[16, 8], num_stages=3, async_copies=True,
                                 copy_vector_width=4)  # cp.async of 16 bytes: the same alignment
    assert "tc_cp_async_16(" in tmm.ir(a, b, backend="cuda", options=copied)
    calls = [lambda: tmm(view, b_gpu), lambda: tmm(view, b_gpu), lambda: tmm(view, b_gpu, options=options),
             lambda: tmm(view, b_gpu, options=copied)]
    for call in calls:
        np.testing.assert_allclose(call().get(), a @ b.T, rtol=1e-3, atol=1e-3)  # compiled, then cached
    assert tmm._launchers
    try:
        import torch
    except ImportError:
        return
    tensor = torch.as_tensor(base, device="cuda")[1:].view(a.shape)
    assert tensor.data_ptr() % 16 == 4
    for _ in range(2):
        got = tmm(tensor, torch.as_tensor(b, device="cuda"))
        np.testing.assert_allclose(got.cpu().numpy(), a @ b.T, rtol=1e-3, atol=1e-3)


@needs_gpu
@pytest.mark.parametrize(
    ("shapes", "fields"),
    [
        # The TF32 default's shape: 4x64 threads on 128x128x64 tiles, cp.async double buffers.
        (((128, 256), (512, 256)), {"tile": [128, 128, 64], "threads": [4, 64], "max_private_elements": 64,
                                    "num_stages": 3, "async_copies": True, "vector_width": 4,
                                    "copy_vector_width": 4, "max_shared_memory": 139264}),
        (((64, 1000), (96, 1000)), {"tile": [32, 32, 32], "threads": [4, 16], "max_private_elements": 64,
                                    "num_stages": 4, "async_copies": True, "copy_vector_width": 4}),
        (((64, 256), (96, 256)), {"tile": [32, 32, 16], "threads": [4, 16], "max_private_elements": 64,
                                  "split_k": 2}),
        # The TF32 default's shape on sm_90's wgmma: two warpgroups a 128x128x32 tile, 4 swizzled buffers.
        (((256, 128), (384, 128)), {"tile": [128, 128, 32], "threads": [4, 8], "warps": [1, 8],
                                    "max_private_elements": 64, "num_stages": 5, "async_copies": True,
                                    "copy_vector_width": 4, "max_shared_memory": 131072, "warpgroup_mma": True}),
        # One warpgroup a 64x48 tile (m64n48k8), 2x2 tiles, synchronous copies.
        (((128, 64), (96, 64)), {"tile": [64, 48, 32], "threads": [4, 8], "warps": [1, 4],
                                  "max_private_elements": 64, "warpgroup_mma": True}),
    ],
)
def test_tf32_mma_on_the_tensor_cores(shapes, fields):
    """TF32 mma.sync: small integers (exact in TF32) give numpy's numbers
    exactly; random floats are within TF32's precision of them."""
    import cupy

    import tcir
    from pathlib import Path

    tmm = tcir.define((Path(__file__).parents[3] / "examples" / "tmm.tc").read_text()).tmm
    options = tcir.MappingOptions(allow_tf32=True, **fields)
    rng = np.random.default_rng(0)
    a, b = (rng.integers(-8, 8, s).astype(np.float32) for s in shapes)
    helper = "tc_wgmma_m64n" if options.warpgroup_mma else "tc_mma_tf32("
    assert helper in tmm.ir(cupy.asarray(a), cupy.asarray(b), backend="cuda", options=options)
    np.testing.assert_array_equal(tmm(cupy.asarray(a), cupy.asarray(b), options=options).get(), a @ b.T)
    a, b = (rng.standard_normal(s, dtype=np.float32) for s in shapes)
    got = tmm(cupy.asarray(a), cupy.asarray(b), options=options).get()
    exact = a.astype(np.float64) @ b.T.astype(np.float64)
    assert 1e-6 < np.abs(got - exact).max() <= 2**-10 * np.abs(a).max() * np.abs(b).max() * shapes[0][1]
