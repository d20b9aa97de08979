"""The simulated GPU catches each class of kernel fault, naming the kernel,
the array, the index and the two threads or blocks involved.

Each case is a small gpu-level module, correct as written (`test_correct`),
broken by hand in one place: a barrier removed, a second block, a barrier
under a thread-dependent branch, an index off by one, a store removed.
"""

from __future__ import annotations

import numpy as np
import pytest

import tcir
from tcir.backends.cuda.launch import extract_host_program
from tcir.backends.cuda_sim.runtime import SimProgram

# Reverses A into B through shared memory: thread t stores A[t] into s[t],
# and after the barrier reads s[7 - t]. `private` holds that value first.
REVERSE = """
builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "kernels"}> ({
    "gpu.func"() <{function_type = (memref<8xf32>, memref<8xf32>) -> (), kernel}> ({
    ^bb0(%A: memref<8xf32>, %B: memref<8xf32>):
      %t = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
      %c0 = arith.constant 0 : index
      %c4 = arith.constant 4 : index
      %c7 = arith.constant 7 : index
      %shared_s = memref.alloca() : memref<8xf32, 3 : i64>
      %private_p = memref.alloca() : memref<1xf32, 5 : i64>
      %v = memref.load %A[%t] : memref<8xf32>
      memref.store %v, %shared_s[%t] : memref<8xf32, 3 : i64>
      BARRIER
      %r = arith.subi %c7, %t : index
      %w = memref.load %shared_s[%r] : memref<8xf32, 3 : i64>
      memref.store %w, %private_p[%c0] : memref<1xf32, 5 : i64>
      %x = memref.load %private_p[%c0] : memref<1xf32, 5 : i64>
      memref.store %x, %B[%t] : memref<8xf32>
      "gpu.return"() : () -> ()
    }) {sym_name = "reverse"} : () -> ()
  }) : () -> ()
  func.func @reverse(%A: memref<8xf32>, %B: memref<8xf32>) {
    %c1 = arith.constant 1 : index
    %grid = arith.constant GRID : index
    %c8 = arith.constant 8 : index
    "gpu.launch_func"(%grid, %c1, %c1, %c8, %c1, %c1, %A, %B) <{kernel = @kernels::@reverse, operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 2, 0>}> : (index, index, index, index, index, index, memref<8xf32>, memref<8xf32>) -> ()
    func.return
  }
}
"""
BARRIER = '"gpu.barrier"() : () -> ()'


def run(text: str, seed: int = 0) -> np.ndarray:
    module = tcir.parse_ir(text)
    a = np.arange(8, dtype=np.float32)
    b = np.full(8, np.nan, np.float32)
    SimProgram(module, extract_host_program(module), seed=seed)(a, b)
    return b


def variant(*edits: tuple[str, str], grid: int = 1) -> str:
    text = REVERSE.replace("GRID", str(grid)).replace("BARRIER", BARRIER)
    for old, new in edits:
        assert old in text
        text = text.replace(old, new, 1)
    return text


def fault(text: str) -> tcir.KernelFault:
    with pytest.raises(tcir.KernelFault) as info:
        run(text)
    assert str(info.value).startswith("error: cuda-sim: kernel 'reverse': ")
    return info.value


def test_correct():
    np.testing.assert_array_equal(run(variant()), np.arange(8, dtype=np.float32)[::-1])


def test_shared_memory_race_when_the_barrier_is_removed():
    error = fault(variant((BARRIER, "")))
    assert error.fault == "race"
    message = str(error)
    assert "data race on shared memory 'shared_s' at [" in message
    assert "writes it (`memref.store %v, %shared_s[%t]" in message
    assert "reads it (`%w = memref.load %shared_s[%r]" in message
    assert "between the same two barriers" in message
    assert message.count("of block (0, 0, 0)") == 2


def test_global_race_between_threads_of_a_block():
    error = fault(variant(("memref.store %x, %B[%t]", "memref.store %x, %B[%c0]")))
    assert error.fault == "race"
    assert "data race on global memory 'B' at [0]: thread (" in str(error)


def test_conflict_between_blocks():
    error = fault(variant(grid=2))
    assert error.fault == "conflict"
    message = str(error)
    assert "blocks (0, 0, 0) and (1, 0, 0) conflict on global memory 'B' at [" in message or (
        "blocks (1, 0, 0) and (0, 0, 0) conflict on global memory 'B' at [" in message
    )
    assert "in the same launch" in message


def test_divergent_barrier():
    guarded = (
        "%is_low = arith.cmpi ult, %t, %c4 : index\n"
        f"      scf.if %is_low {{\n        {BARRIER}\n      }}"
    )
    error = fault(variant((BARRIER, guarded)))
    assert error.fault == "barrier"
    message = str(error)
    assert "divergent barrier (`\"gpu.barrier\"() : () -> ()`)" in message
    assert "thread (0, 0, 0) of block (0, 0, 0) reaches it but thread (4, 0, 0) of block (0, 0, 0) does not" in message


SHIFTED = ("%v = memref.load %A[%t]", "%t1 = arith.addi %t, %c4 : index\n      %v = memref.load %A[%t1]")


@pytest.mark.parametrize(
    "edit, array",
    [
        (("%r = arith.subi %c7, %t", "%r = arith.subi %c4, %t"), "shared memory 'shared_s' of shape [8]"),
        (("memref.store %w, %private_p[%c0]", "memref.store %w, %private_p[%t]"), "private memory 'private_p' of shape [1]"),
        (SHIFTED, "global memory 'A' of shape [8]"),
    ],
    ids=["shared", "private", "global"],
)
def test_out_of_bounds(edit, array):
    error = fault(variant(edit))
    assert error.fault == "bounds"
    message = str(error)
    assert f"out-of-bounds access to {array}: thread (" in message
    assert "accesses [" in message


def test_out_of_bounds_names_the_thread_and_index():
    message = str(fault(variant(SHIFTED)))
    assert "thread (4, 0, 0) of block (0, 0, 0) accesses [8]" in message
    assert "(`%v = memref.load %A[%t1] : memref<8xf32>`)" in message


def test_uninitialized_shared_read():
    error = fault(variant(("memref.store %v, %shared_s[%t] : memref<8xf32, 3 : i64>", "")))
    assert error.fault == "uninitialized"
    assert "read of uninitialized shared memory 'shared_s' at [7]: thread (0, 0, 0) of block (0, 0, 0) reads it before any thread wrote it" in str(error)


def test_uninitialized_private_read():
    error = fault(variant(("memref.store %w, %private_p[%c0] : memref<1xf32, 5 : i64>", "")))
    assert error.fault == "uninitialized"
    assert "read of uninitialized private memory 'private_p' at [0]" in str(error)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_block_order_does_not_change_correct_results(seed):
    first_block_only = (
        '%bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index\n'
        "      %is_first = arith.cmpi eq, %bx, %c0 : index\n"
        "      scf.if %is_first {\n"
        "        memref.store %x, %B[%t] : memref<8xf32>\n"
        "      }"
    )
    text = variant(("memref.store %x, %B[%t] : memref<8xf32>", first_block_only), grid=3)
    np.testing.assert_array_equal(run(text, seed), np.arange(8, dtype=np.float32)[::-1])


def test_uninitialized_output_read():
    """An output the caller allocated uninitialized (`undefined`) may not be
    read before a kernel writes it: here B is read back instead of A."""
    module = tcir.parse_ir(variant(("%v = memref.load %A[%t]", "%v = memref.load %B[%t]")))
    a, b = np.arange(8, dtype=np.float32), np.zeros(8, np.float32)
    program = SimProgram(module, extract_host_program(module))
    program(a, b)  # B holds values: fine
    with pytest.raises(tcir.KernelFault, match=r"read of uninitialized global memory 'B' at \[0\]: thread \(0, 0, 0\)") as info:
        program(a, b, undefined=[1])
    assert info.value.fault == "uninitialized"
