"""Asynchronous copies (`async_copies`: `nvgpu.device_async_copy` into
double-buffered shared tiles) on the simulated GPU: the copies land when a
wait covers their group, so a read before the wait finds nothing there and a
read by another thread before the barrier races; the pipelined kernels
compute numpy's numbers at ragged sizes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tcir
from tcir.backends.cuda.launch import extract_host_program
from tcir.backends.cuda_sim.runtime import SimProgram
from tcir.errors import KernelFault
from tcir.runtime.inputs import random_inputs
from tcir.runtime.numpy_reference import reference_outputs
from tcir.runtime.signature import bind

EXAMPLES = Path(__file__).parents[3] / "examples"
O = tcir.MappingOptions

CASES = [
    # float4 copies of whole tiles; tmm's large default at a small size (72 KiB).
    ("tmm", [(64, 64), (32, 64)], O(tile=[32, 32, 32], threads=[16, 8], num_stages=3, async_copies=True,
                                    vector_width=4, copy_vector_width=4)),
    ("tmm", [(128, 96), (128, 96)], O(tile=[128, 128, 32], threads=[16, 16], max_private_elements=64,
                                      max_shared_memory=73728, num_stages=3, async_copies=True,
                                      vector_width=4, copy_vector_width=4)),
    # A partial last k tile (8 of 32 points): its float4 copies guarded.
    ("C3", [(16, 40), (24, 40)], O(tile=[8, 8, 32], threads=[8, 4], num_stages=3, async_copies=True,
                                   vector_width=4, copy_vector_width=4)),
    # float2 and scalar copies (8 and 4 bytes).
    ("tmm", [(32, 48), (32, 48)], O(tile=[16, 16, 16], threads=[8, 4], num_stages=3, async_copies=True,
                                    copy_vector_width=2)),
    ("tmm", [(32, 32), (16, 32)], O(tile=[16, 16, 16], threads=[16, 4], num_stages=3, async_copies=True)),
    # An enclosing loop (split-K's two slices) runs the pipelined loop twice: its
    # first copies wait for the last step's reads (a barrier; the options fuzzing found the race).
    ("MLP3", [(7, 13), (11, 13), (11,), (9, 11), (9,), (5, 9), (5,)],
     O(allow_skewing=True, fusion="preserve3", positive_coefficients=False, blocks=[8, 1, 9], tile=[13],
       max_shared_memory=12288, num_stages=3, async_copies=True, split_k=2, unroll=128, use_private_memory=False,
       vector_width=2)),
    # Split-K slices, MLP1's default shape of rule.
    ("MLP1", [(8, 64), (16, 64), (16,)], O(tile=[8, 8, 16], threads=[8, 4], split_k=2, num_stages=3,
                                          async_copies=True, copy_vector_width=4)),
]


@pytest.mark.parametrize(("name", "shapes", "options"), CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_async_copies_compute_the_reference(name, shapes, options):
    function = tcir.define((EXAMPLES / f"{name}.tc").read_text())[name]
    binding = bind(function.definition, [np.zeros(s, np.float32) for s in shapes])
    inputs = random_inputs(function.definition, binding.sizes, 0)
    ir = function.ir(*inputs, backend="cuda-sim", options=options)
    assert "nvgpu.device_async_copy" in ir and "nvgpu.device_async_wait" in ir
    assert "prefetch" not in ir  # no registers staged
    got = function(*inputs, backend="cuda-sim", options=options)
    expected = reference_outputs(function.definition, bind(function.definition, inputs))
    for g, e in zip(got if isinstance(got, tuple) else (got,), expected, strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-4)


def test_every_version_of_a_ragged_kernel_pipelines():
    """Ragged blocks (168 = 2 * 64 + 40 rows, 136 columns) split into full
    and partial versions (`poly-separate-full-tiles`): all three pipeline
    their copies into the same buffers, one of them copying rows in a loop
    whose trip count each thread cuts (`63 - (ty + 4) / 8` rows)."""
    function = tcir.define((EXAMPLES / "zoo" / "matmul.tc").read_text()).matmul_nn
    inputs = random_inputs(function.definition, {"M": 168, "K": 72, "N": 136}, 0)
    options = O(tile=[64, 64, 32], threads=[16, 8], num_stages=3, async_copies=True, vector_width=4, copy_vector_width=4)
    ir = function.ir(*inputs, backend="cuda-sim", options=options)
    assert ir.count("nvgpu.device_async_wait") == 3 and "prefetch" not in ir
    got = function(*inputs, backend="cuda-sim", options=options)
    np.testing.assert_allclose(got, inputs[0].astype(np.float64) @ inputs[1], rtol=1e-4, atol=1e-4)


def test_without_async_copies_the_registers_stage():
    function = tcir.define((EXAMPLES / "tmm.tc").read_text()).tmm
    a, b = np.zeros((64, 64), np.float32), np.zeros((32, 64), np.float32)
    options = O(tile=[32, 32, 32], threads=[16, 8], num_stages=3, vector_width=4, copy_vector_width=4)
    ir = function.ir(a, b, backend="cuda-sim", options=options)
    assert "nvgpu.device_async_copy" not in ir and "prefetch" in ir


# Thread t copies A[t] into s[t] asynchronously, then reads s[7 - t] into B[t].
REVERSE = """
builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "kernels"}> ({
    "gpu.func"() <{function_type = (memref<8xf32>, memref<8xf32>) -> (), kernel}> ({
    ^bb0(%A: memref<8xf32>, %B: memref<8xf32>):
      %t = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
      %c7 = arith.constant 7 : index
      %shared_s = memref.alloca() : memref<8xf32, 3 : i64>
      "nvgpu.device_async_copy"(%A, %t, %shared_s, %t) <{dstElements = 1 : index, operandSegmentSizes = array<i32: 1, 1, 1, 1>}> : (memref<8xf32>, index, memref<8xf32, 3 : i64>, index) -> ()
      "nvgpu.device_async_create_group"() : () -> ()
      WAIT
      BARRIER
      %r = arith.subi %c7, %t : index
      %w = memref.load %shared_s[%r] : memref<8xf32, 3 : i64>
      memref.store %w, %B[%t] : memref<8xf32>
      "gpu.return"() : () -> ()
    }) {sym_name = "reverse"} : () -> ()
  }) : () -> ()
  func.func @reverse(%A: memref<8xf32>, %B: memref<8xf32>) {
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    "gpu.launch_func"(%c1, %c1, %c1, %c8, %c1, %c1, %A, %B) <{kernel = @kernels::@reverse, operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 2, 0>}> : (index, index, index, index, index, index, memref<8xf32>, memref<8xf32>) -> ()
    func.return
  }
}
"""
WAIT = '"nvgpu.device_async_wait"() <{numGroups = 0 : i32}> : () -> ()'
BARRIER = '"gpu.barrier"() : () -> ()'


def _run(text: str) -> np.ndarray:
    module = tcir.parse_ir(text)
    a = np.arange(8, dtype=np.float32)
    b = np.full(8, np.nan, np.float32)
    SimProgram(module, extract_host_program(module), seed=0)(a, b)
    return b


def test_the_host_program_records_the_alignment_of_async_copies():
    """cp.async of 16 bytes needs its source 16-byte aligned, as a float4
    load does: the runtime copies a misaligned input (C3's default copies
    both operands so; the REVERSE kernel copies 4 bytes of A)."""
    host = extract_host_program(tcir.parse_ir(REVERSE.replace("WAIT", WAIT).replace("BARRIER", BARRIER)))
    assert host.aligned_params == ((0, 4),)
    function = tcir.define((EXAMPLES / "C3.tc").read_text()).C3
    binding = bind(function.definition, [np.zeros((128, 1000), np.float32), np.zeros((1024, 1000), np.float32)])
    assert tcir.compiler.defaults.default_options(function.definition, binding).async_copies
    module = function.lowered(binding, None, "cuda")
    assert extract_host_program(module).aligned_params == ((0, 16), (1, 16))


def test_a_waited_copy_lands():
    np.testing.assert_array_equal(_run(REVERSE.replace("WAIT", WAIT).replace("BARRIER", BARRIER)), np.arange(8)[::-1])


def test_a_read_before_the_wait_finds_nothing():
    with pytest.raises(KernelFault, match="read of uninitialized shared memory 'shared_s'"):
        _run(REVERSE.replace("WAIT", "").replace("BARRIER", BARRIER))


def test_a_wait_that_leaves_the_group_pending_finds_nothing():
    pending = WAIT.replace("numGroups = 0", "numGroups = 1")
    with pytest.raises(KernelFault, match="read of uninitialized shared memory 'shared_s'"):
        _run(REVERSE.replace("WAIT", pending).replace("BARRIER", BARRIER))


def test_a_read_of_another_threads_copy_without_a_barrier_races():
    with pytest.raises(KernelFault, match="race"):
        _run(REVERSE.replace("WAIT", WAIT).replace("BARRIER", ""))
