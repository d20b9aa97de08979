"""A warp per row on the simulated GPU: `nvgpu.subgroup_reduce` and
`nvgpu.subgroup_barrier` (a warp's, not a block's: the simulator finds
the race between warps that only the latter would order), and the rows of
a tile on thread y (`poly-map-to-gpu{threads=32,Y}` over a point band that
`poly-sink{sink=false}` kept above a row-wise chain) against numpy, at
ragged sizes and by default for short rows.
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

# 64 threads (two warps): thread t stores A[t] into s[t], then, after a
# warp barrier, reads s[PARTNER] and adds its warp's total of A.
WARPS = """
builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "kernels"}> ({
    "gpu.func"() <{function_type = (memref<64xf32>, memref<64xf32>) -> (), kernel}> ({
    ^bb0(%A: memref<64xf32>, %B: memref<64xf32>):
      %t = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
      %c1 = arith.constant 1 : index
      %c63 = arith.constant 63 : index
      %shared_s = memref.alloca() : memref<64xf32, 3 : i64>
      %v = memref.load %A[%t] : memref<64xf32>
      memref.store %v, %shared_s[%t] : memref<64xf32, 3 : i64>
      %total = nvgpu.subgroup_reduce add %v : (f32) -> f32
      BARRIER
      %r = PARTNER
      %w = memref.load %shared_s[%r] : memref<64xf32, 3 : i64>
      %x = arith.addf %w, %total : f32
      memref.store %x, %B[%t] : memref<64xf32>
      "gpu.return"() : () -> ()
    }) {sym_name = "swap"} : () -> ()
  }) : () -> ()
  func.func @swap(%A: memref<64xf32>, %B: memref<64xf32>) {
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    "gpu.launch_func"(%c1, %c1, %c1, %c64, %c1, %c1, %A, %B) <{kernel = @kernels::@swap, operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 2, 0>}> : (index, index, index, index, index, index, memref<64xf32>, memref<64xf32>) -> ()
    func.return
  }
}
"""
WARP_BARRIER = "nvgpu.subgroup_barrier"
NEIGHBOUR = "arith.xori %t, %c1 : index"
MIRROR = "arith.subi %c63, %t : index"


def _swap(barrier: str, partner: str) -> np.ndarray:
    module = tcir.parse_ir(WARPS.replace("BARRIER", barrier).replace("PARTNER", partner))
    a = np.arange(64, dtype=np.float32)
    b = np.full(64, np.nan, np.float32)
    SimProgram(module, extract_host_program(module))(a, b)
    return b


def test_a_warp_barrier_orders_its_warp_and_each_warp_gets_its_total():
    a = np.arange(64, dtype=np.float32)
    totals = np.repeat([a[:32].sum(), a[32:].sum()], 32)
    np.testing.assert_array_equal(_swap(WARP_BARRIER, NEIGHBOUR), a[np.arange(64) ^ 1] + totals)


def test_a_warp_barrier_does_not_order_two_warps():
    with pytest.raises(tcir.KernelFault, match="data race on shared memory 'shared_s'"):
        _swap(WARP_BARRIER, MIRROR)


def test_without_a_barrier_a_warp_races():
    with pytest.raises(tcir.KernelFault, match="data race on shared memory 'shared_s'"):
        _swap("", NEIGHBOUR)


def test_a_block_barrier_orders_two_warps():
    a = np.arange(64, dtype=np.float32)
    totals = np.repeat([a[:32].sum(), a[32:].sum()], 32)
    np.testing.assert_array_equal(_swap('"gpu.barrier"() : () -> ()', MIRROR), a[::-1] + totals)


def test_a_divergent_warp_barrier_faults():
    guarded = (
        "%c4 = arith.constant 4 : index\n      %low = arith.cmpi ult, %t, %c4 : index\n"
        f"      scf.if %low {{\n        {WARP_BARRIER}\n      }}"
    )
    with pytest.raises(tcir.KernelFault, match="divergent nvgpu.subgroup_barrier"):
        _swap(guarded, NEIGHBOUR)


SOFTMAX = (EXAMPLES / "softmax.tc").read_text()
ROW_SUM = "def rowsum(float(B,N) X) -> (Y) {\n  s(b) +=! X(b,n)\n  Y(b) = s(b)\n}\n"


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


@pytest.mark.parametrize(
    "rows, length, per_block",
    [(61, 77, 8), (64, 200, 4), (13, 16, 8), (40, 33, 3), (5, 300, 2)],
    ids=["ragged-tiles", "seven-points-a-thread", "shorter-than-a-warp", "three-rows-a-block", "long-rows"],
)
def test_softmax_a_warp_a_row(rows: int, length: int, per_block: int):
    x = np.random.default_rng(4).standard_normal((rows, length)).astype(np.float32)
    options = tcir.MappingOptions(
        tile=[per_block], threads=[32, per_block], block_reductions=True, max_private_elements=max(1, -(-length // 32))
    )
    function = tcir.define(SOFTMAX).softmax
    source = function.ir(x, backend="cuda-sim", options=options)
    assert source.count("nvgpu.subgroup_reduce") == 2 and "gpu.all_reduce" not in source and "gpu.barrier" not in source
    got = function(x, backend="cuda-sim", options=options)
    np.testing.assert_allclose(got, _softmax(x.astype(np.float64)), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("threads", [[32, 8], [256], [32]], ids=["rows-on-y", "rows-in-a-loop", "one-warp"])
def test_a_statement_without_a_parallel_band_of_its_own(threads: list[int]):
    """`Y(b) = s(b)` has no band over the row's points: it runs on thread x
    0 of its row, whether the rows band is thread y's (the others' bands
    are below it) or a loop of every thread."""
    x = np.random.default_rng(5).standard_normal((50, 70)).astype(np.float32)
    options = tcir.MappingOptions(tile=[8], threads=threads, block_reductions=True)
    got = tcir.define(ROW_SUM).rowsum(x, backend="cuda-sim", options=options)
    np.testing.assert_allclose(got, x.astype(np.float64).sum(1), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "name, sizes",
    [("softmax", {"B": 700, "N": 77}), ("layernorm", {"B": 520, "N": 128}), ("attention_softmax", {"B": 2, "H": 3, "I": 93, "J": 90})],
)
def test_short_rows_by_default(name: str, sizes: dict[str, int]):
    """Many rows of at most 512 points: a warp a row, four rows a block."""
    path = EXAMPLES / ("zoo/attention.tc" if name == "attention_softmax" else f"{name}.tc")
    function = tcir.define(path.read_text())[name]
    inputs = random_inputs(function.definition, sizes, 0)
    source = function.ir(*inputs, backend="cuda-sim")
    assert "nvgpu.subgroup_reduce" in source and "gpu.all_reduce" not in source
    expected = function(*inputs, backend="cpu")
    np.testing.assert_allclose(function(*inputs, backend="cuda-sim"), expected, rtol=2e-5, atol=1e-6)


SOFTMAX_HEADS = (
    "def sm(float(B,H,N) X) -> (Y) {\n  mx(b,h) max=! X(b,h,n)\n  e(b,h,n) = exp(X(b,h,n) - mx(b,h))\n"
    "  s(b,h) +=! e(b,h,n)\n  Y(b,h,n) = e(b,h,n) / s(b,h)\n}"
)


@pytest.mark.parametrize("heads", [1, 3])
def test_short_rows_tiled_along_an_outer_row_dimension(heads: int):
    """Fewer heads than rows a block: the tile of rows goes along b."""
    function = tcir.define(SOFTMAX_HEADS).sm
    x = np.random.default_rng(6).standard_normal((1800 // heads, heads, 70)).astype(np.float32)
    assert "nvgpu.subgroup_reduce" in function.ir(x, backend="cuda-sim")
    np.testing.assert_allclose(function(x, backend="cuda-sim"), _softmax(x.astype(np.float64)), rtol=1e-5, atol=1e-7)
