"""`gpu-prefetch-copies{max-values=32}`: load the next shared-memory tile
into registers while the current one is used (software pipelining, one stage).

In every `gpu.func`, an `scf.for` whose body starts with a barrier, a copy
region and a second barrier (what `poly-promote` and `convert-poly-to-gpu`
make of a shared tile inside a sequential loop, the k loop of a matmul)

    scf.for %k { barrier; shared[..] = global[.. %k ..]; barrier; compute }

becomes

    prefetch = global[.. lb ..]                       (if lb < ub)
    scf.for %k {
      barrier; shared[..] = prefetch; barrier
      prefetch = global[.. %k + step ..]              (if %k + step < ub)
      compute
    }

so the global loads of the next step are in flight during the math of
this one. `prefetch` is a private array (registers: the copy loops are
unrolled, so every index is a constant) of at most `max-values` elements
a thread. The copy region may hold index arithmetic, copy loops of
constant trip counts, and guards (`scf.if` without else), around loads of
a global memref that the kernel never writes and stores of those values to
shared memory; a loop whose copies are anything else is left as it is.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.builder import Builder, InsertPoint
from xdsl.context import Context
from xdsl.dialects import arith, gpu, memref, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr, MemRefType, ModuleOp
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.transforms.dead_code_elimination import region_dce

from tcir.backends.cuda.scalar_types import written_memrefs
from tcir.errors import TCError
from tcir.polyhedral.promotion.promote import PRIVATE_SPACE, SHARED_SPACE
from tcir.ir.integer_forms import IntegerForms, constant_of, width_of


def _trip_count(loop: scf.ForOp) -> int | None:
    """The number of iterations of `loop` when it is the same for every thread."""
    forms = IntegerForms()
    for bound in (loop.lb, loop.ub, loop.step):
        forms.of(bound)
    step = forms.constant(loop.step)
    width = width_of(loop.ub.type)
    if step is None or step <= 0 or width is None:
        return None
    span = forms.add(loop.ub, loop.lb, -1, width)
    if any(c != 0 for key, c in span.items() if key is not None):
        return None
    return max(0, -(-span.get(None, 0) // step))


def _space(value: SSAValue) -> int:
    space = value.type.memory_space if isinstance(value.type, MemRefType) else None
    return space.value.data if isinstance(space, IntegerAttr) else 0


class _NotACopy(Exception):
    """The region between the barriers is not one this pass can stage."""


@dataclass
class _Copies:
    """The copy region of one loop: its ops, and its global loads in the
    order of the unrolled copies (a load in a loop of 4 iterations counts 4 times)."""

    ops: list[Operation]
    loads: list[memref.LoadOp]

    @staticmethod
    def of(ops: Sequence[Operation], written: set[SSAValue], max_values: int) -> _Copies:
        loads: list[memref.LoadOp] = []

        def visit(block_ops: Sequence[Operation], repeat: int) -> None:
            for op in block_ops:
                if isinstance(op, scf.ForOp):
                    trips = _trip_count(op)
                    if trips is None or op.iter_args:
                        raise _NotACopy
                    visit(list(op.body.block.ops)[:-1], repeat * trips)
                elif isinstance(op, scf.IfOp):
                    if op.results or op.false_region.blocks and list(op.false_region.block.ops)[:-1]:
                        raise _NotACopy
                    visit(list(op.true_region.block.ops)[:-1], repeat)
                elif isinstance(op, memref.LoadOp):
                    users = [use.operation for use in op.res.uses]
                    if _space(op.memref) != 0 or op.memref in written or not users or not all(
                        isinstance(u, memref.StoreOp) and u.value == op.res and _space(u.memref) == SHARED_SPACE
                        for u in users
                    ):
                        raise _NotACopy
                    loads.extend([op] * repeat)
                elif isinstance(op, memref.StoreOp):
                    if _space(op.memref) != SHARED_SPACE or not isinstance(op.value.owner, memref.LoadOp):
                        raise _NotACopy
                elif not isinstance(op, arith.ConstantOp | arith.AddiOp | arith.SubiOp | arith.MuliOp
                                    | arith.CmpiOp | arith.AndIOp | arith.OrIOp | arith.FloorDivSIOp
                                    | arith.CeilDivSIOp | arith.RemSIOp | arith.DivSIOp | arith.MinSIOp
                                    | arith.MaxSIOp | arith.SelectOp | arith.IndexCastOp):
                    raise _NotACopy

        visit(ops, 1)
        types = {load.res.type for load in loads}
        if not loads or len(loads) > max_values or len(types) != 1:
            raise _NotACopy
        return _Copies(list(ops), loads)

    def emit(self, builder: Builder, mapping: dict[SSAValue, SSAValue], buffer: SSAValue, stage: bool) -> None:
        """The copy region at `builder`, values renamed by `mapping`, loops
        unrolled: with `stage`, each global load goes to the next element of
        `buffer`; otherwise each shared store takes its value from there."""
        slot = iter(range(len(self.loads)))

        def index(at: Builder, k: int) -> SSAValue:
            return at.insert(arith.ConstantOp.from_int_and_width(k, IndexType())).result

        def emit_ops(at: Builder, ops: Sequence[Operation]) -> None:
            for op in ops:
                if isinstance(op, scf.ForOp):
                    step = constant_of(op.step)
                    assert step is not None
                    lb = mapping.get(op.lb, op.lb)
                    for k in range(_trip_count(op) or 0):
                        offset = at.insert(arith.AddiOp(lb, index(at, k * step))).result if k else lb
                        mapping[op.body.block.args[0]] = offset
                        emit_ops(at, list(op.body.block.ops)[:-1])
                elif isinstance(op, scf.IfOp):
                    guard = at.insert(scf.IfOp(mapping.get(op.cond, op.cond), [], [scf.YieldOp()]))
                    emit_ops(Builder(InsertPoint.at_start(guard.true_region.block)), list(op.true_region.block.ops)[:-1])
                elif isinstance(op, memref.LoadOp):
                    k = index(at, next(slot))
                    if stage:
                        at.insert(memref.StoreOp.get(at.insert(op.clone(mapping)).res, buffer, [k]))
                    else:
                        mapping[op.res] = at.insert(memref.LoadOp.get(buffer, [k])).res
                elif not (isinstance(op, memref.StoreOp) and stage):
                    at.insert(op.clone(mapping))  # index arithmetic, or a store to shared memory

        emit_ops(builder, self.ops)


def _prefetch(loop: scf.ForOp, buffer_at: Callable[[Attribute, int], SSAValue], written: set[SSAValue],
              max_values: int) -> bool:
    """Pipeline `loop`'s copies if it has the shape of the module docstring."""
    body = list(loop.body.block.ops)
    barriers = [k for k, op in enumerate(body) if isinstance(op, gpu.BarrierOp)]
    trips = _trip_count(loop)
    if loop.iter_args or len(barriers) < 2 or barriers[0] != 0 or trips == 0:
        return False
    region = body[1 : barriers[1]]
    inside = {id(o) for o in region for o in o.walk()}
    for op in region:
        for inner in op.walk():
            if any(id(use.operation) not in inside for r in inner.results for use in r.uses):
                return False  # a value of the copies used after them
            for operand in inner.operands:
                owner = operand.owner
                defined = owner.parent_op() if isinstance(owner, Block) else owner
                if defined is not None and id(defined) not in inside and loop.is_ancestor(defined) \
                        and operand is not loop.body.block.args[0]:
                    return False  # a value of the loop body outside the copies
    try:
        copies = _Copies.of(region, written, max_values)
    except _NotACopy:
        return False
    buffer = buffer_at(copies.loads[0].res.type, len(copies.loads))
    iv = loop.body.block.args[0]
    # Before the loop: the first step's tile, if there is a first step.
    before = Builder(InsertPoint.before(loop))
    if trips is None:
        first = before.insert(arith.CmpiOp(loop.lb, loop.ub, "slt")).result
        before = Builder(InsertPoint.at_start(before.insert(scf.IfOp(first, [], [scf.YieldOp()])).true_region.block))
    copies.emit(before, {iv: loop.lb}, buffer, stage=True)
    # Between the barriers: the staged values to shared memory.
    copies.emit(Builder(InsertPoint.before(body[barriers[1]])), {}, buffer, stage=False)
    for op in reversed(region):
        op.detach()
        op.erase(safe_erase=False)
    # After the second barrier: the next step's tile.
    after = Builder(InsertPoint.after(body[barriers[1]]))
    following = after.insert(arith.AddiOp(iv, loop.step)).result
    more = after.insert(arith.CmpiOp(following, loop.ub, "slt")).result
    guard = after.insert(scf.IfOp(more, [], [scf.YieldOp()]))
    copies.emit(Builder(InsertPoint.at_start(guard.true_region.block)), {iv: following}, buffer, stage=True)
    return True


@dataclass(frozen=True)
class GpuPrefetchCopiesPass(ModulePass):
    """Stage the next step's shared-memory copies of sequential loops in registers."""

    name = "gpu-prefetch-copies"

    max_values: int = 32

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if not 1 <= self.max_values <= 255:
            raise TCError(f"gpu-prefetch-copies: max-values must be in [1, 255], got {self.max_values}")
        for kernel in [o for o in op.walk() if isinstance(o, gpu.FuncOp)]:
            entry = kernel.body.block
            written = written_memrefs(kernel)
            count = 0

            def buffer_at(element: Attribute, size: int) -> SSAValue:
                nonlocal count
                alloca = memref.AllocaOp.get(element, shape=[size], memory_space=IntegerAttr(PRIVATE_SPACE, 64))
                alloca.memref.name_hint = f"prefetch{count}" if count else "prefetch"
                count += 1
                Builder(InsertPoint.at_start(entry)).insert(alloca)
                return alloca.memref

            # Outer loops first; a loop inside a pipelined one keeps its own copies.
            for loop in [o for o in kernel.walk() if isinstance(o, scf.ForOp)]:
                if loop.parent is not None:
                    _prefetch(loop, buffer_at, written, self.max_values)
            if count:
                region_dce(kernel.body)  # the index arithmetic the copies no longer use
