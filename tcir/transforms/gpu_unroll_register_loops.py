"""`gpu-unroll-register-loops`: unroll the loops that index register arrays.

A thread's private buffers (`poly-promote`'s accumulators and reused
elements, memory space 5) stay in registers only where every access has a
constant index once the code is unrolled: an access at an index that a loop
computes at run time puts the whole array in local memory, a hundred times
slower. CUDA compilers unroll small loops by themselves, but not one whose
body branches (the guarded reads of a padded convolution):

    scf.for %f = %c0 to %c16 step %c1 {
      %v = scf.if %in_bounds -> (f32) { ... } else { ... }
      %o = memref.load %private_O[%c0, %f] : memref<1x16xf32, 5 : i64>
      ...
    }

In every `gpu.func`, an `scf.for` whose trip count is a constant of at most
`max-trip-count` and whose induction variable reaches (through integer
arithmetic) a subscript of a load or store of a private buffer gets the
unroll hint (`tcir.unroll`: `#pragma unroll` in CUDA C). The IR stays one
loop; the simulated GPU runs it as it is.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, gpu, memref, scf
from xdsl.dialects.builtin import IntegerAttr, MemRefType, ModuleOp, UnitAttr
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass

from tcir.errors import TCError
from tcir.ir.integer_forms import trip_count
from tcir.ir.loop_hints import UNROLL_HINT
from tcir.polyhedral.promotion.promote import PRIVATE_SPACE

_INDEX_ARITHMETIC = (
    arith.AddiOp,
    arith.SubiOp,
    arith.MuliOp,
    arith.DivSIOp,
    arith.RemSIOp,
    arith.FloorDivSIOp,
    arith.IndexCastOp,
)


def _private(value: SSAValue) -> bool:
    t = value.type
    return (
        isinstance(t, MemRefType)
        and isinstance(t.memory_space, IntegerAttr)
        and t.memory_space.value.data == PRIVATE_SPACE
    )


def _indexes_private(loop: scf.ForOp) -> bool:
    """Whether `loop`'s induction variable reaches a subscript of a private buffer."""
    derived: set[SSAValue] = set()
    work = [loop.body.block.args[0]]
    while work:
        value = work.pop()
        if value in derived:
            continue
        derived.add(value)
        for use in value.uses:
            user = use.operation
            if isinstance(user, memref.LoadOp) and _private(user.memref) and value in user.indices:
                return True
            if isinstance(user, memref.StoreOp) and _private(user.memref) and value in user.indices:
                return True
            if isinstance(user, _INDEX_ARITHMETIC):
                work.extend(user.results)
    return False


@dataclass(frozen=True)
class GpuUnrollRegisterLoopsPass(ModulePass):
    """Hint full unrolling of the kernels' loops that index register arrays."""

    name = "gpu-unroll-register-loops"

    max_trip_count: int = 64
    """Loops of more iterations are left as they are."""

    def __post_init__(self) -> None:
        if self.max_trip_count < 2:
            raise TCError(f"gpu-unroll-register-loops: max-trip-count must be at least 2, got {self.max_trip_count}")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in [o for o in op.walk() if isinstance(o, gpu.FuncOp)]:
            for loop in kernel.walk():
                if not isinstance(loop, scf.ForOp) or UNROLL_HINT in loop.attributes:
                    continue
                count = trip_count(loop)
                if count is not None and 1 < count <= self.max_trip_count and _indexes_private(loop):
                    loop.attributes[UNROLL_HINT] = UnitAttr()
