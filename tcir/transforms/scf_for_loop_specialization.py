"""`scf-for-loop-specialization{max-trip-count=16}`: version a loop whose
upper bound is a minimum with a constant, so that its usual case has a
constant trip count (as MLIR's pass of that name does for `affine.min`).

In every function, an innermost `scf.for` without loop-carried values or
barriers, with constant lower bound and step, whose upper bound is
`min(C, x)` or `min(C, x) + c` (what the AST generator makes of a point
loop whose last tile is partial: C3's reduction of 1000 in tiles of 32)

    %m = arith.minsi %c7, %x : index
    %ub = arith.addi %m, %c1 : index
    scf.for %i = %c0 to %ub step %c1 { body }

becomes, where the constant bound `C + c` gives at most `max-trip-count`
iterations,

    %full = arith.cmpi eq, %ub, %c8 : index
    scf.if %full {
      scf.for %i = %c0 to %c8 step %c1 { body }
    } else {
      scf.for %i = %c0 to %ub step %c1 { body }
    }

Every tile but the last takes the first loop, which the CUDA compiler
unrolls and schedules as a whole (C3's compute loop: no loop counter, the
shared loads of later steps issued early). The bound is the same for all
threads wherever `%ub` is; a loop whose body holds a barrier is left alone
anyway (the versions must not split a block at a barrier), and so are
loops with a loop inside whose trip count is not a constant. Loops of
constant trip counts inside (a register tile's, which the CUDA compiler
unrolls) are no obstacle: the ragged k tile of a 1000^3 matmul on 64x64
register tiles left its compute loop's bound to be tested at every step
(the defaults guide has the times).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.builder import Builder, InsertPoint
from xdsl.context import Context
from xdsl.dialects import arith, gpu, scf
from xdsl.dialects.builtin import IntegerAttr, ModuleOp
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass

from tcir.errors import TCError
from tcir.ir.integer_forms import constant_of, trip_count


def constant_bound(value: SSAValue) -> int | None:
    """The constant `C + c` where `value` is `min(C, x) + c` (c may be 0),
    the largest value it takes; None for any other form."""
    op = value.owner
    if isinstance(op, arith.AddiOp):
        for inner, offset in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
            c, bound = constant_of(offset), constant_bound(inner)
            if c is not None and bound is not None:
                return bound + c
        return None
    if isinstance(op, arith.MinSIOp):
        constants = [c for c in map(constant_of, op.operands) if c is not None]
        return constants[0] if len(constants) == 1 else None
    return None


def _specialize(loop: scf.ForOp, max_trip_count: int) -> None:
    lb, step = constant_of(loop.lb), constant_of(loop.step)
    if loop.iter_args or lb is None or step is None or step <= 0 or constant_of(loop.ub) is not None:
        return
    bound = constant_bound(loop.ub)
    if bound is None or not 0 < -(-(bound - lb) // step) <= max_trip_count:
        return
    if any(
        isinstance(o, gpu.BarrierOp) or (isinstance(o, scf.ForOp) and trip_count(o) is None) for o in loop.body.walk()
    ):
        return
    builder = Builder(InsertPoint.before(loop))
    full = builder.insert(arith.ConstantOp(IntegerAttr(bound, loop.ub.type)))
    condition = builder.insert(arith.CmpiOp(loop.ub, full, "eq"))
    constant = loop.clone()
    constant.operands[1] = full.result
    otherwise = scf.YieldOp()
    builder.insert(scf.IfOp(condition, [], [constant, scf.YieldOp()], [otherwise]))
    loop.detach()
    Builder(InsertPoint.before(otherwise)).insert(loop)


@dataclass(frozen=True)
class ScfForLoopSpecializationPass(ModulePass):
    """Version loops bounded by `min(C, x) + c` on reaching `C + c`."""

    name = "scf-for-loop-specialization"

    max_trip_count: int = 16

    def __post_init__(self) -> None:
        if self.max_trip_count < 1:
            raise TCError(f"scf-for-loop-specialization: max-trip-count must be positive, got {self.max_trip_count}")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for loop in [o for o in op.walk() if isinstance(o, scf.ForOp)]:
            _specialize(loop, self.max_trip_count)
