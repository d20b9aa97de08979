"""Float4 copies from global to shared memory (`copy_vector_width`: groups
of consecutive elements dealt to the threads, moved by one vector load and
store): whole tiles copy vectors and ragged ones scalars, a misaligned
vector access is a fault of the simulated GPU, and the host program records
which arguments the kernels need aligned. (Their numbers against numpy:
test_sim_vectorize.py.)"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tcir
from tcir.backends.cuda.launch import extract_host_program
from tcir.backends.cuda_sim.runtime import SimProgram
from tcir.errors import KernelFault

EXAMPLES = Path(__file__).parents[3] / "examples"
O = tcir.MappingOptions


def test_whole_tiles_copy_float4_and_ragged_ones_scalars():
    function = tcir.define((EXAMPLES / "tmm.tc").read_text()).tmm
    options = O(tile=[32, 32, 32], threads=[16, 8], num_stages=2, copy_vector_width=4)
    whole = function.ir(np.zeros((64, 64), np.float32), np.zeros((32, 64), np.float32), backend="cuda", options=options)
    assert "float4 prefetch[4];" in whole and whole.count("*reinterpret_cast<const float4*>(&A[") == 4
    ragged = function.ir(np.zeros((64, 50), np.float32), np.zeros((32, 50), np.float32), backend="cuda", options=options)
    assert "float4" not in ragged
    assert "gpu-vectorize-copies{max-width=4}" in options.pipeline(backend="cuda")


# Copies 8 elements of A to B through one float4 load at element OFFSET.
VECTOR = """
builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "kernels"}> ({
    "gpu.func"() <{function_type = (memref<8xf32>, memref<8xf32>) -> (), kernel}> ({
    ^bb0(%A: memref<8xf32>, %B: memref<8xf32>):
      %t = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
      %c4 = arith.constant 4 : index
      %off = arith.constant OFFSET : index
      %i = arith.muli %t, %c4 : index
      %j = arith.addi %i, %off : index
      %v = vector.load %A[%j] : memref<8xf32>, vector<4xf32>
      %s = memref.alloca() {alignment = 16 : i64} : memref<8xf32, 3 : i64>
      vector.store %v, %s[%i] : memref<8xf32, 3 : i64>, vector<4xf32>
      %w = vector.load %s[%i] : memref<8xf32, 3 : i64>, vector<4xf32>
      vector.store %w, %B[%i] : memref<8xf32>, vector<4xf32>
      "gpu.return"() : () -> ()
    }) {sym_name = "copy"} : () -> ()
  }) : () -> ()
  func.func @copy(%A: memref<8xf32>, %B: memref<8xf32>) {
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    "gpu.launch_func"(%c1, %c1, %c1, %c2, %c1, %c1, %A, %B) <{kernel = @kernels::@copy, operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 2, 0>}> : (index, index, index, index, index, index, memref<8xf32>, memref<8xf32>) -> ()
    func.return
  }
}
"""


def test_aligned_vector_accesses_move_whole_groups():
    module = tcir.parse_ir(VECTOR.replace("OFFSET", "0"))
    a, b = np.arange(8, dtype=np.float32), np.full(8, np.nan, np.float32)
    SimProgram(module, extract_host_program(module))(a, b)
    np.testing.assert_array_equal(b, a)


def test_a_misaligned_vector_access_is_a_fault():
    module = tcir.parse_ir(VECTOR.replace("OFFSET", "2"))
    a, b = np.zeros(16, np.float32)[:8], np.zeros(8, np.float32)
    with pytest.raises(KernelFault, match=r"misaligned vector access of 4 elements to global memory 'A'") as caught:
        SimProgram(module, extract_host_program(module))(a, b)
    assert caught.value.fault == "misaligned"


def test_the_host_program_records_the_alignment_of_vector_loads():
    host = extract_host_program(tcir.parse_ir(VECTOR.replace("OFFSET", "0")))
    assert host.aligned_params == ((0, 16),)  # A is read by vectors; B only written


@pytest.mark.parametrize("width", [0, 3, 16, True])
def test_bad_copy_vector_width_is_a_tc_error(width):
    with pytest.raises(tcir.TCError, match="copy_vector_width"):
        O(copy_vector_width=width)
