"""`max_trip_count`: the most iterations any thread runs of a copy loop whose
bounds depend on the thread (`tcir.ir.integer_forms`)."""

from __future__ import annotations

import pytest
from xdsl.dialects import scf

import tcir
from tcir.ir.integer_forms import max_trip_count

KERNEL = """
builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "kernels"}> ({
    "gpu.func"() <{function_type = (memref<8xindex>) -> (), kernel}> ({
    ^bb0(%P: memref<8xindex>):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c3 = arith.constant 3 : index
      %c4 = arith.constant 4 : index
      %c8 = arith.constant 8 : index
      %c24 = arith.constant 24 : index
      %c60 = arith.constant 60 : index
      %c63 = arith.constant 63 : index
      %tx = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
      %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
      %t4 = arith.addi %tx, %c4 : index
      %q = arith.divsi %t4, %c8 : index
      %p = memref.load %P[%c0] : memref<8xindex>
      LB_UB
      scf.for %i = %lb to %ub step %c1 {
        scf.yield
      }
      "gpu.return"() : () -> ()
    }) {sym_name = "k"} : () -> ()
  }) : () -> ()
}
"""

CASES = {
    # 60 <= c < 63 - (tx + 4) / 8: at most 3.
    "constant less a quotient of a thread id": (
        "%lb = arith.addi %c60, %c0 : index\n%ub = arith.subi %c63, %q : index", 3),
    # 4 bx <= c < min(24, 4 bx + 3) + 1: at most 4, whatever bx.
    "min of an edge and a tile": (
        "%lb = arith.muli %c4, %bx : index\n%t = arith.addi %lb, %c3 : index\n"
        "%m = arith.minsi %c24, %t : index\n%ub = arith.addi %m, %c1 : index", 4),
    # 4 bx <= c < min(24, 4 bx + 8 - (tx + 4) / 8) + 1: at most 9.
    "min of an edge and a span cut by the thread": (
        "%lb = arith.muli %c4, %bx : index\n%t = arith.addi %lb, %c8 : index\n%s = arith.subi %t, %q : index\n"
        "%m = arith.minsi %c24, %s : index\n%ub = arith.addi %m, %c1 : index", 9),
    # 0 <= c < 3 - p with p loaded: p may be negative, no bound.
    "constant less a loaded value": ("%lb = arith.addi %c0, %c0 : index\n%ub = arith.subi %c3, %p : index", None),
    # 0 <= c < 3 + tx: grows with the thread, no bound.
    "constant plus a thread id": ("%lb = arith.addi %c0, %c0 : index\n%ub = arith.addi %c3, %tx : index", None),
}


@pytest.mark.parametrize("name", list(CASES))
def test_max_trip_count(name):
    bounds, expected = CASES[name]
    module = tcir.parse_ir(KERNEL.replace("LB_UB", bounds))
    (loop,) = [op for op in module.walk() if isinstance(op, scf.ForOp)]
    assert max_trip_count(loop) == expected
