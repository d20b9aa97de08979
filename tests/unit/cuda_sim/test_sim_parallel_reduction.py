"""Parallel reductions (`MappingOptions(parallel_reductions=True)`) on the
simulated GPU: sums spread over threads and blocks, combined by atomic adds,
against numpy; and the simulator's rule for atomics: exempt among
themselves, a race or conflict against a plain access of another thread."""

from __future__ import annotations

import numpy as np
import pytest

import tcir
from tcir.backends.cuda.launch import extract_host_program
from tcir.backends.cuda_sim.runtime import SimProgram

SOURCE = """
def rowsum(float(B,K) A) -> (s) { s(b) +=! A(b,k) }
def isum(int32(B,K) A) -> (s) { s(b) +=! A(b,k) }
def mv(float(M,K) A, float(K) x) -> (C) {
  C(i) = 0
  C(i) += A(i,k) * x(k)
}
def tmm(float(M,K) A, float(N,K) B) -> (C) { C(m,n) +=! A(m,kk) * B(n,kk) }
def mlp1(float(B,M) I, float(N,M) W, float(N) b) -> (O) {
  O(i,n) +=! I(i,m) * W(n,m)
  O(i,n) = fmax(O(i,n) + b(n), 0)
}
"""
mod = tcir.define(SOURCE)
rng = np.random.default_rng(0)
P = dict(parallel_reductions=True)


def close(got, expected):
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4 * max(1.0, np.abs(expected).max()))


@pytest.mark.parametrize(
    "options",
    [
        tcir.MappingOptions(**P, tile=[1, 1024], threads=[256]),
        tcir.MappingOptions(**P, tile=[1, 1024], threads=[256], use_private_memory=False),
        tcir.MappingOptions(**P, tile=[4, 300], threads=[64, 4], unroll=4),
        tcir.MappingOptions(**P),
        None,  # the default rule: a sum too small to fill the GPU
    ],
)
def test_row_sums(options):
    a = rng.standard_normal((5, 9001)).astype(np.float32)
    close(mod.rowsum(a, backend="cuda-sim", options=options), a.sum(1))
    ints = rng.integers(-50, 50, (3, 8193)).astype(np.int32)
    np.testing.assert_array_equal(mod.isum(ints, backend="cuda-sim", options=options), ints.sum(1))


def test_matrix_vector_and_matmul():
    a = rng.standard_normal((7, 9000)).astype(np.float32)
    x = rng.standard_normal(9000).astype(np.float32)
    close(mod.mv(a, x, backend="cuda-sim"), a @ x)  # default: parallel
    close(mod.mv(a, x, backend="cuda-sim", options=tcir.MappingOptions(**P, tile=[2, 333], threads=[111])), a @ x)
    b = rng.standard_normal((37, 300)).astype(np.float32)
    c = rng.standard_normal((45, 300)).astype(np.float32)
    for options in (
        tcir.MappingOptions(**P, tile=[16, 16, 64], threads=[16, 16]),
        tcir.MappingOptions(**P, tile=[8, 32, 100], threads=[32, 8], num_stages=2),
    ):
        close(mod.tmm(b, c, backend="cuda-sim", options=options), b @ c.T)


def test_a_layer_after_the_sum_reads_it_whole():
    """The bias and ReLU read O after every block added to it: a kernel of their own."""
    i = rng.standard_normal((6, 500)).astype(np.float32)
    w = rng.standard_normal((10, 500)).astype(np.float32)
    bias = rng.standard_normal(10).astype(np.float32)
    got = mod.mlp1(i, w, bias, backend="cuda-sim", options=tcir.MappingOptions(**P, tile=[2, 5, 64], threads=[64]))
    close(got, np.maximum(i @ w.T + bias, 0))


# One block of 4 threads: thread t adds A[t] to B[0] atomically, then thread 0
# stores B[1] (plain) or loads B[0] (plain: races with the other threads' adds).
ATOMIC = """
builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "kernels"}> ({
    "gpu.func"() <{function_type = (memref<4xf32>, memref<2xf32>) -> (), kernel}> ({
    ^bb0(%A: memref<4xf32>, %B: memref<2xf32>):
      %t = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %v = memref.load %A[%t] : memref<4xf32>
      %old = "memref.atomic_rmw"(%v, %B, %c0) <{kind = 0 : i64}> : (f32, memref<2xf32>, index) -> f32
      %first = arith.cmpi eq, %t, %c0 : index
      scf.if %first {
        PLAIN
      }
      "gpu.return"() : () -> ()
    }) {sym_name = "add"} : () -> ()
  }) : () -> ()
  func.func @add(%A: memref<4xf32>, %B: memref<2xf32>) {
    %c1 = arith.constant 1 : index
    %grid = arith.constant GRID : index
    %c4 = arith.constant 4 : index
    "gpu.launch_func"(%grid, %c1, %c1, %c4, %c1, %c1, %A, %B) <{kernel = @kernels::@add, operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 2, 0>}> : (index, index, index, index, index, index, memref<4xf32>, memref<2xf32>) -> ()
    func.return
  }
}
"""


def run_atomic(plain: str, grid: int = 1) -> np.ndarray:
    module = tcir.parse_ir(ATOMIC.replace("PLAIN", plain).replace("GRID", str(grid)))
    a = np.array([1, 2, 3, 4], np.float32)
    b = np.zeros(2, np.float32)
    SimProgram(module, extract_host_program(module))(a, b)
    return b


def test_atomic_adds_of_threads_and_blocks_combine_without_a_fault():
    np.testing.assert_array_equal(run_atomic("memref.store %v, %B[%c1] : memref<2xf32>"), [10, 1])
    # Two blocks add to B[0] (no conflict); only B[1] stored by both blocks is one.
    np.testing.assert_array_equal(run_atomic("", grid=3), [30, 0])


def test_a_plain_load_of_an_atomically_updated_element_is_a_race():
    with pytest.raises(tcir.KernelFault, match=r"data race on global memory 'B' at \[0\]") as error:
        run_atomic("%r = memref.load %B[%c0] : memref<2xf32>")
    assert error.value.fault == "race"


def test_a_plain_store_in_another_block_is_a_conflict():
    with pytest.raises(tcir.KernelFault, match=r"conflict on global memory 'B' at \[0\]") as error:
        run_atomic("memref.store %v, %B[%c0] : memref<2xf32>", grid=2)
    assert error.value.fault == "conflict"
