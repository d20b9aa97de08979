"""`constant_once_unrolled`: whether a hinted loop's private indices become
constants once the CUDA compiler unrolls it (`tcir.ir.loop_hints`), the test
by which `convert-poly-to-gpu` keeps a register tile's loops or has isl
unroll them."""

from __future__ import annotations

import pytest
from xdsl.dialects import gpu

import tcir
from tcir.ir.loop_hints import constant_once_unrolled

KERNEL = """
builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "kernels"}> ({
    "gpu.func"() <{function_type = (memref<1xindex>) -> (), kernel}> ({
    ^bb0(%N: memref<1xindex>):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c8 = arith.constant 8 : index
      %zero = arith.constant 0.0 : f32
      %P = memref.alloca() : memref<8xf32, 5>
      %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
      %tx = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
      %lb = arith.muli %c8, %bx : index
      %ub = UPPER
      scf.for %i = %lb to %ub step %c1 {
        INDEX
        memref.store %zero, %P[%j] : memref<8xf32, 5>
      } HINT
      "gpu.return"() : () -> ()
    }) {sym_name = "k"} : () -> ()
  }) : () -> ()
}
"""

CASES = {
    # for (i = 8 bx; i < 8 bx + 8; ++i) P[i - 8 bx]: P[0] .. P[7].
    "iterator less its lower bound": ("%j = arith.subi %i, %lb : index", "{tcir.unroll}", True),
    # P[i - 8 bx + tx]: a thread id remains.
    "a thread id remains": (
        "%d = arith.subi %i, %lb : index\n%j = arith.addi %d, %tx : index", "{tcir.unroll}", False),
    # P[i / 2 - 4 bx]: a quotient of the iterator, which its linear form cannot cancel.
    "a quotient of the iterator": (
        "%h = arith.divsi %i, %c2 : index\n%q = arith.muli %c2, %bx : index\n%f = arith.muli %q, %c2 : index\n"
        "%j = arith.subi %h, %f : index", "{tcir.unroll}", False),
    # for (i = 8 bx; i < ub; ++i) P[i - 8 bx] with ub loaded: no constant trip count to unroll.
    "a trip count that varies": ("%j = arith.subi %i, %lb : index", "{tcir.unroll}", False),
    # Without the hint the loop is not the test's (the CUDA compiler decides).
    "no hint": ("%d = arith.subi %i, %lb : index\n%j = arith.addi %d, %tx : index", "", True),
}


@pytest.mark.parametrize("name", list(CASES))
def test_constant_once_unrolled(name):
    index, hint, expected = CASES[name]
    upper = "memref.load %N[%c0] : memref<1xindex>" if name == "a trip count that varies" else "arith.addi %lb, %c8 : index"
    module = tcir.parse_ir(KERNEL.replace("INDEX", index).replace("HINT", hint).replace("UPPER", upper))
    (kernel,) = [op for op in module.walk() if isinstance(op, gpu.FuncOp)]
    assert constant_once_unrolled(kernel.body.block, 5) is expected
