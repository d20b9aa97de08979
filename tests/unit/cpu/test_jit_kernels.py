"""JIT hand-written loop IR and compare with numpy: whole kernels."""

from __future__ import annotations

import numpy as np
import pytest

from tcir.backends.cpu.jit import translate_to_llvm_ir
from tcir.compiler.lowering import lower_to_llvm_dialect
from tcir.errors import ShapeError, TCError

from cpu_helpers import jit, parse

MATMUL_IJK = """
func.func @mm(%A: memref<{M}x{K}x{T}>, %B: memref<{K}x{N}x{T}>, %C: memref<{M}x{N}x{T}>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = arith.constant {M} : index
  %n = arith.constant {N} : index
  %k = arith.constant {K} : index
  %zero = arith.constant 0.0 : {T}
  scf.for %i = %c0 to %m step %c1 {{
    scf.for %j = %c0 to %n step %c1 {{
      %s = scf.for %l = %c0 to %k step %c1 iter_args(%acc = %zero) -> ({T}) {{
        %a = memref.load %A[%i, %l] : memref<{M}x{K}x{T}>
        %b = memref.load %B[%l, %j] : memref<{K}x{N}x{T}>
        %p = arith.mulf %a, %b : {T}
        %q = arith.addf %acc, %p : {T}
        scf.yield %q : {T}
      }}
      memref.store %s, %C[%i, %j] : memref<{M}x{N}x{T}>
    }}
  }}
  func.return
}}
"""

MATMUL_IKJ = """
func.func @mm(%A: memref<{M}x{K}xf32>, %B: memref<{K}x{N}xf32>, %C: memref<{M}x{N}xf32>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = arith.constant {M} : index
  %n = arith.constant {N} : index
  %k = arith.constant {K} : index
  %zero = arith.constant 0.0 : f32
  scf.for %i = %c0 to %m step %c1 {{
    scf.for %j = %c0 to %n step %c1 {{
      memref.store %zero, %C[%i, %j] : memref<{M}x{N}xf32>
    }}
    scf.for %l = %c0 to %k step %c1 {{
      %a = memref.load %A[%i, %l] : memref<{M}x{K}xf32>
      scf.for %j = %c0 to %n step %c1 {{
        %b = memref.load %B[%l, %j] : memref<{K}x{N}xf32>
        %c = memref.load %C[%i, %j] : memref<{M}x{N}xf32>
        %p = arith.mulf %a, %b : f32
        %s = arith.addf %c, %p : f32
        memref.store %s, %C[%i, %j] : memref<{M}x{N}xf32>
      }}
    }}
  }}
  func.return
}}
"""


@pytest.mark.parametrize("dtype", ["f32", "f64"])
def test_matmul_reduction_with_iter_args(rng, dtype):
    M, N, K = 13, 17, 19
    mm = jit(MATMUL_IJK.format(M=M, N=N, K=K, T=dtype))["mm"]
    np_type = {"f32": np.float32, "f64": np.float64}[dtype]
    A = rng.standard_normal((M, K)).astype(np_type)
    B = rng.standard_normal((K, N)).astype(np_type)
    C = np.full((M, N), np.nan, np_type)
    mm(A, B, C)
    tol = 1e-5 if dtype == "f32" else 1e-12
    np.testing.assert_allclose(C, A.astype(np.float64) @ B, rtol=tol, atol=tol)


def test_matmul_vectorizable_order(rng):
    M, N, K = 64, 72, 48
    mm = jit(MATMUL_IKJ.format(M=M, N=N, K=K))["mm"]
    A = rng.standard_normal((M, K)).astype(np.float32)
    B = rng.standard_normal((K, N)).astype(np.float32)
    C = np.full((M, N), np.nan, np.float32)
    mm(A, B, C)
    np.testing.assert_allclose(C, A.astype(np.float64) @ B, rtol=1e-4, atol=1e-4)


def test_llvm_ir_has_inbounds_gep_and_noalias():
    module = lower_to_llvm_dialect(parse(MATMUL_IKJ.format(M=64, N=64, K=64)))
    raw = translate_to_llvm_ir(module, optimize=False)
    assert "getelementptr inbounds" in raw
    assert raw.count("noalias") == 3
    optimized = translate_to_llvm_ir(module)
    assert "define void @mm(ptr noalias" in optimized
    assert optimized.count("ptr noalias") == 3
    assert "x float>" in optimized, "the j loop should be vectorized"


def test_row_max_reduction(rng):
    text = """
func.func @rowmax(%X: memref<7x33xf32>, %Y: memref<7xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c7 = arith.constant 7 : index
  %c33 = arith.constant 33 : index
  %ninf = arith.constant 0xFF800000 : f32
  scf.for %i = %c0 to %c7 step %c1 {
    %m = scf.for %j = %c0 to %c33 step %c1 iter_args(%acc = %ninf) -> (f32) {
      %x = memref.load %X[%i, %j] : memref<7x33xf32>
      %n = arith.maximumf %acc, %x : f32
      scf.yield %n : f32
    }
    memref.store %m, %Y[%i] : memref<7xf32>
  }
  func.return
}
"""
    f = jit(text)["rowmax"]
    X = rng.standard_normal((7, 33)).astype(np.float32)
    X[3, 5] = np.nan
    Y = np.zeros(7, np.float32)
    f(X, Y)
    np.testing.assert_array_equal(Y, X.max(axis=1))  # NaN propagates in row 3


def test_rank0_memrefs_and_scalar_arguments(rng):
    text = """
func.func @scaled_sum(%X: memref<100xf32>, %alpha: f32, %shift: i32, %n: index, %out: memref<f32>, %count: memref<i64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %s = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f32) {
    %x = memref.load %X[%i] : memref<100xf32>
    %y = arith.addf %acc, %x : f32
    scf.yield %y : f32
  }
  %shiftf = arith.sitofp %shift : i32 to f32
  %scaled = arith.mulf %s, %alpha : f32
  %r = arith.addf %scaled, %shiftf : f32
  memref.store %r, %out[] : memref<f32>
  %ni = arith.index_cast %n : index to i64
  memref.store %ni, %count[] : memref<i64>
  func.return
}
"""
    f = jit(text)["scaled_sum"]
    X = rng.standard_normal(100).astype(np.float32)
    out = np.zeros((), np.float32)
    count = np.zeros((), np.int64)
    f(X, 2.5, -3, 60, out, count)
    assert count == 60
    np.testing.assert_allclose(out, X[:60].astype(np.float64).sum() * 2.5 - 3, rtol=1e-5)


@pytest.mark.parametrize("alloc", ["alloc", "alloca"])
def test_internal_temporary_buffer(rng, alloc):
    """out = reverse(2 * x) through a temporary."""
    dealloc = "memref.dealloc %t : memref<4x8xf64>" if alloc == "alloc" else ""
    text = f"""
func.func @f(%X: memref<4x8xf64>, %Y: memref<4x8xf64>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c7 = arith.constant 7 : index
  %c8 = arith.constant 8 : index
  %two = arith.constant 2.0 : f64
  %t = memref.{alloc}() : memref<4x8xf64>
  scf.for %i = %c0 to %c4 step %c1 {{
    scf.for %j = %c0 to %c8 step %c1 {{
      %x = memref.load %X[%i, %j] : memref<4x8xf64>
      %y = arith.mulf %x, %two : f64
      memref.store %y, %t[%i, %j] : memref<4x8xf64>
    }}
  }}
  scf.for %i = %c0 to %c4 step %c1 {{
    scf.for %j = %c0 to %c8 step %c1 {{
      %ri = arith.subi %c3, %i : index
      %rj = arith.subi %c7, %j : index
      %v = memref.load %t[%ri, %rj] : memref<4x8xf64>
      memref.store %v, %Y[%i, %j] : memref<4x8xf64>
    }}
  }}
  {dealloc}
  func.return
}}
"""
    f = jit(text)["f"]
    X = rng.standard_normal((4, 8))
    Y = np.zeros((4, 8))
    f(X, Y)
    np.testing.assert_array_equal(Y, (2 * X)[::-1, ::-1])


def test_scf_if_and_computed_bounds(rng):
    """Lower-triangular copy: for i, for j <= i (computed bound), with an if
    that zeroes the diagonal's odd rows."""
    text = """
func.func @tri(%X: memref<9x9xf32>, %Y: memref<9x9xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c9 = arith.constant 9 : index
  %zero = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c9 step %c1 {
    %ub = arith.addi %i, %c1 : index
    scf.for %j = %c0 to %ub step %c1 {
      %x = memref.load %X[%i, %j] : memref<9x9xf32>
      %diag = arith.cmpi eq, %i, %j : index
      %odd = arith.remui %i, %c2 : index
      %isodd = arith.cmpi ne, %odd, %c0 : index
      %both = arith.andi %diag, %isodd : i1
      %v = scf.if %both -> (f32) {
        scf.yield %zero : f32
      } else {
        scf.yield %x : f32
      }
      memref.store %v, %Y[%i, %j] : memref<9x9xf32>
    }
  }
  func.return
}
"""
    f = jit(text)["tri"]
    X = rng.standard_normal((9, 9)).astype(np.float32)
    Y = np.zeros((9, 9), np.float32)
    f(X, Y)
    expected = np.tril(X)
    for i in range(1, 9, 2):
        expected[i, i] = 0
    np.testing.assert_array_equal(Y, expected)


def test_several_functions_and_calls(rng):
    text = """
func.func private @twice(%x: f32) -> f32 {
  %y = arith.addf %x, %x : f32
  func.return %y : f32
}
func.func @a(%X: memref<5xf32>, %Y: memref<5xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  scf.for %i = %c0 to %c5 step %c1 {
    %x = memref.load %X[%i] : memref<5xf32>
    %y = func.call @twice(%x) : (f32) -> f32
    memref.store %y, %Y[%i] : memref<5xf32>
  }
  func.return
}
func.func @b(%X: memref<5xf32>) {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f32
  memref.store %one, %X[%c0] : memref<5xf32>
  func.return
}
"""
    compiled = jit(text)
    assert compiled.function_names == ("a", "b")
    X = rng.standard_normal(5).astype(np.float32)
    Y = np.zeros(5, np.float32)
    compiled["a"](X, Y)
    np.testing.assert_array_equal(Y, 2 * X)
    compiled.function("b")(X)
    assert X[0] == 1.0


def test_callable_outlives_compiled_module(rng):
    mm = jit(MATMUL_IKJ.format(M=8, N=8, K=8))["mm"]
    import gc

    gc.collect()
    A = rng.standard_normal((8, 8)).astype(np.float32)
    C = np.zeros((8, 8), np.float32)
    mm(A, A, C)  # A read twice: aliasing read-only arguments is fine
    np.testing.assert_allclose(C, A @ A, rtol=1e-5, atol=1e-5)


def test_argument_errors():
    mm = jit(MATMUL_IKJ.format(M=4, N=4, K=4))["mm"]
    A = np.zeros((4, 4), np.float32)
    C = np.zeros((4, 4), np.float32)
    with pytest.raises(ShapeError, match=r"#1 'B': expected shape \(4, 4\), got \(4, 5\)"):
        mm(A, np.zeros((4, 5), np.float32), C)
    with pytest.raises(ShapeError, match="dtype float32, got float64"):
        mm(A, np.zeros((4, 4)), C)
    with pytest.raises(ShapeError, match="C-contiguous"):
        mm(A, np.zeros((4, 8), np.float32)[:, ::2], C)
    with pytest.raises(ShapeError, match="takes 3 arguments"):
        mm(A, A)
    with pytest.raises(TCError, match="overlap"):
        mm(A, C, C)
    with pytest.raises(TCError, match="no function @nope"):
        jit(MATMUL_IKJ.format(M=4, N=4, K=4))["nope"]


def test_unsupported_op_is_a_tcerror():
    text = """
func.func @f(%X: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %v = "test.op"() : () -> f32
  memref.store %v, %X[%c0] : memref<4xf32>
  func.return
}
"""
    with pytest.raises(TCError, match="cannot lower 'test.op'"):
        jit(text)


def test_pipeline_filecheck_runs_the_cpu_lowering_pipeline():
    from pathlib import Path

    from tcir.compiler.lowering import CPU_LOWERING_PIPELINE

    test = Path(__file__).parents[2] / "filecheck/llvm/cpu_lowering_pipeline.mlir"
    assert f"-p {CPU_LOWERING_PIPELINE} |" in test.read_text()


def test_llvm_target_prints_optimized_ir():
    import io

    from tcir.tools.targets import LLVMTarget

    output = io.StringIO()
    LLVMTarget().emit(None, parse(MATMUL_IKJ.format(M=8, N=8, K=8)), output)  # pyright: ignore[reportArgumentType]
    assert "define void @mm(ptr noalias" in output.getvalue()
