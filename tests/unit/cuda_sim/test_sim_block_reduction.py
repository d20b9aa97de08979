"""Block-cooperative reductions (`poly-block-reduction`) on the simulated GPU.

Every combinable update kind on every element type it takes; rows whose
length is not a multiple of the block, shorter than a warp, one row and
empty rows; the row-wise chains of `examples/` with their default mapping
(a block per row); and the fault of an all-reduce that not every thread
of a block reaches.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tcir
from tcir.backends.cuda.launch import extract_host_program
from tcir.backends.cuda_sim.runtime import SimProgram
from tcir.runtime.inputs import random_inputs

EXAMPLES = Path(__file__).parents[3] / "examples"
BLOCK = tcir.MappingOptions(threads=[32], block_reductions=True)

KINDS = {"+": np.sum, "*": np.prod, "max": np.max, "min": np.min}
TYPES = {"float": np.float32, "double": np.float64, "int": np.int32, "int64": np.int64}


def _source(kind: str, scalar: str) -> str:
    return f"def reduce({scalar}(B,N) X) -> (s) {{\n  s(b) {kind}=! X(b,n)\n}}\n"


@pytest.mark.parametrize("scalar", TYPES)
@pytest.mark.parametrize("kind", KINDS)
def test_every_kind_and_type(kind: str, scalar: str):
    dtype = TYPES[scalar]
    rng = np.random.default_rng(1)
    if kind == "*":  # products of 37 values near 1 (integers: ones and a few -1s)
        x = (rng.choice([-1, 1], (5, 37)) if np.dtype(dtype).kind == "i" else rng.uniform(0.9, 1.1, (5, 37)))
    else:
        x = rng.integers(-1000, 1000, (5, 37))
    x = x.astype(dtype)
    function = tcir.define(_source(kind, scalar)).reduce
    got = function(x, backend="cuda-sim", options=BLOCK)
    source = function.ir(x, backend="cuda-sim", options=BLOCK)
    assert "gpu.all_reduce" in source and "poly" not in source
    np.testing.assert_allclose(got, KINDS[kind](x, axis=1), rtol=1e-5 if dtype == np.float32 else 1e-12)


SOFTMAX = (EXAMPLES / "softmax.tc").read_text()


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


@pytest.mark.parametrize(
    "rows, length, threads",
    [(3, 37, 32), (4, 5, 32), (1, 100, 64), (2, 33, 48), (2, 300, 256)],
    ids=["ragged", "shorter-than-a-warp", "one-row", "partial-warp-block", "four-warps"],
)
def test_softmax_rows(rows: int, length: int, threads: int):
    x = np.random.default_rng(2).standard_normal((rows, length)).astype(np.float32)
    options = tcir.MappingOptions(threads=[threads], block_reductions=True)
    got = tcir.define(SOFTMAX).softmax(x, backend="cuda-sim", options=options)
    np.testing.assert_allclose(got, _softmax(x.astype(np.float64)), rtol=1e-5, atol=1e-7)


def test_empty_rows_sum_to_zero():
    """Rows of no points: each sum is its initial 0 (the combine adds the
    partials' identity)."""
    function = tcir.define(_source("+", "float")).reduce
    got = function(np.zeros((3, 0), np.float32), backend="cuda-sim", options=BLOCK)
    np.testing.assert_array_equal(got, np.zeros(3, np.float32))


@pytest.mark.parametrize(
    "name, sizes",
    [
        ("softmax", {"B": 130, "N": 37}),
        ("log_softmax", {"B": 129, "N": 70}),
        ("layernorm", {"B": 130, "N": 37}),
        ("rmsnorm", {"B": 129, "N": 70}),
    ],
)
def test_row_wise_examples_by_default(name: str, sizes: dict[str, int]):
    """The default mapping of a row-wise chain is one kernel, a block per
    row, its reductions combined across the block; it matches the CPU."""
    function = tcir.define((EXAMPLES / f"{name}.tc").read_text())[name]
    inputs = random_inputs(function.definition, sizes, 0)
    source = function.ir(*inputs, backend="cuda-sim")
    assert source.count('"gpu.func"') == 1 and "gpu.all_reduce" in source
    expected = function(*inputs, backend="cpu")
    np.testing.assert_allclose(function(*inputs, backend="cuda-sim"), expected, rtol=2e-5, atol=1e-6)


INSTANCE_NORM = """
def instancenorm(float(N,C,H,W) X) -> (Y) {
  mean(n,c) +=! X(n,c,h,w) / (H * W)
  d(n,c,h,w) = X(n,c,h,w) - mean(n,c)
  var(n,c) +=! d(n,c,h,w) * d(n,c,h,w) / (H * W)
  Y(n,c,h,w) = d(n,c,h,w) * rsqrt(var(n,c) + 1e-5)
}
"""


@pytest.mark.parametrize("threads", [None, [7, 3], [5, 2]], ids=["default", "ragged-rows", "ragged-columns"])
def test_planes_and_means(threads: list[int] | None):
    """Sums over an image's plane (h and w, one band once the initialization
    runs first) divided by its size (the division applied once, to the
    block's total): an instance norm, a block per plane."""
    x = np.random.default_rng(3).standard_normal((2, 64, 9, 7)).astype(np.float32)
    options = None if threads is None else tcir.MappingOptions(blocks=[64, 2], threads=threads, block_reductions=True)
    function = tcir.define(INSTANCE_NORM).instancenorm
    source = function.ir(x, backend="cuda-sim", options=options)
    assert source.count('"gpu.func"') == 1 and source.count("gpu.all_reduce") == 2
    got = function(x, backend="cuda-sim", options=options)
    x = x.astype(np.float64)
    d = x - x.mean((2, 3), keepdims=True)
    np.testing.assert_allclose(got, d / np.sqrt((d * d).mean((2, 3), keepdims=True) + 1e-5), rtol=1e-5, atol=1e-5)


# Each thread adds its A[t] to the block's sum; with DIVERGE, only the first
# four threads reach the all-reduce.
ALL_REDUCE = """
builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "kernels"}> ({
    "gpu.func"() <{function_type = (memref<8xf32>, memref<8xf32>) -> (), kernel}> ({
    ^bb0(%A: memref<8xf32>, %B: memref<8xf32>):
      %t = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
      %c4 = arith.constant 4 : index
      %v = memref.load %A[%t] : memref<8xf32>
      %low = arith.cmpi ult, %t, %c4 : index
      %one = arith.constant true
      %go = arith.select %low, %one, DIVERGE : i1
      scf.if %go {
        %s = "gpu.all_reduce"(%v) <{op = #gpu<all_reduce_op add>, uniform}> ({}) : (f32) -> f32
        memref.store %s, %B[%t] : memref<8xf32>
      }
      "gpu.return"() : () -> ()
    }) {sym_name = "total"} : () -> ()
  }) : () -> ()
  func.func @total(%A: memref<8xf32>, %B: memref<8xf32>) {
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    "gpu.launch_func"(%c1, %c1, %c1, %c8, %c1, %c1, %A, %B) <{kernel = @kernels::@total, operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 2, 0>}> : (index, index, index, index, index, index, memref<8xf32>, memref<8xf32>) -> ()
    func.return
  }
}
"""


def _total(diverge: str) -> np.ndarray:
    module = tcir.parse_ir(ALL_REDUCE.replace("DIVERGE", diverge))
    a = np.arange(8, dtype=np.float32)
    b = np.full(8, np.nan, np.float32)
    SimProgram(module, extract_host_program(module))(a, b)
    return b


def test_all_reduce_gives_every_thread_the_total():
    np.testing.assert_array_equal(_total("%one"), np.full(8, 28, np.float32))


def test_divergent_all_reduce_faults():
    with pytest.raises(tcir.KernelFault, match="divergent gpu.all_reduce .* reaches it but thread .4, 0, 0. of block"):
        _total("%low")
