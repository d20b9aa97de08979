"""Hints that loops carry to the code generators, as discardable attributes."""

from __future__ import annotations

from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import IntegerAttr, MemRefType
from xdsl.ir import Block, Operation, SSAValue

from tcir.ir.integer_forms import IntegerForms, trip_count, width_of, wrap

UNROLL_HINT = "tcir.unroll"
"""A unit attribute of an `scf.for` whose trip count is small: the target
compiler should unroll it (CUDA's `#pragma unroll`, where the trip count is
a constant), a hint that keeps the IR one loop."""

UNROLLED_PRODUCTS = 1024
"""Float products that a hinted loop may hold once unrolled (with the loops
of constant trip counts inside it). A loop whose whole unrolling would hold
more is unrolled by the largest divisor of its trip count that stays within:
the CUDA compiler's time grows with the unrolled code (a register tile's
eight steps of 256 products each, or a filter gradient's 27 of 64, took
it seconds), while a body of that many products keeps the arithmetic
units busy."""


def unrolled_products(block: Block) -> int:
    """The float products (`arith.mulf`) of `block` once its loops of constant
    trip counts are unrolled (as the CUDA compiler does with short ones)."""
    count = 0
    for op in block.ops:
        count += isinstance(op, arith.MulfOp)
        trips = trip_count(op) if isinstance(op, scf.ForOp) else None
        for region in op.regions:
            for inner in region.blocks:
                count += (trips or 1) * unrolled_products(inner)
    return count


def unroll_factor(loop: scf.ForOp, whole_space: int) -> int | None:
    """How many iterations of hinted `loop` to unroll: its trip count where
    the unrolled loop holds at most `UNROLLED_PRODUCTS` products or its
    iterator indexes memory of space `whole_space` (private elements, whose
    indices must be constants), else the largest divisor of it that does
    (1: none); None for a loop without the hint or whose trip count is not
    a constant."""
    trips = trip_count(loop) if UNROLL_HINT in loop.attributes else None
    if trips is None:
        return None
    if _indexes_space(loop, whole_space):
        return trips
    body = unrolled_products(loop.body.block)
    return next(d for d in range(trips, 0, -1) if trips % d == 0 and (d == 1 or d * body <= UNROLLED_PRODUCTS))


def _in_space(access: memref.LoadOp | memref.StoreOp, space: int) -> bool:
    """Whether `access` is to a memref of memory space `space`."""
    memory = access.memref.type
    return (
        isinstance(memory, MemRefType)
        and isinstance(memory.memory_space, IntegerAttr)
        and memory.memory_space.value.data == space
    )


def _indexes_space(loop: scf.ForOp, space: int) -> bool:
    """Whether `loop`'s iterator is in the indices (through index arithmetic)
    of an access of `loop`'s body to a memref of memory space `space`."""
    seen: set[SSAValue] = set()
    values: list[SSAValue] = [loop.body.block.args[0]]
    while values:
        value = values.pop()
        for use in value.uses:
            op = use.operation
            if isinstance(op, memref.LoadOp | memref.StoreOp) and value in op.indices:
                if _in_space(op, space):
                    return True
            elif len(op.results) == 1 and op.results[0] not in seen and not op.regions:
                seen.add(op.results[0])
                values.append(op.results[0])
    return False


def _depends_on(value: SSAValue, targets: set[SSAValue], seen: set[SSAValue]) -> bool:
    """Whether `value` is computed from one of `targets`."""
    if value in targets:
        return True
    if value in seen or not isinstance(value.owner, Operation):
        return False
    seen.add(value)
    return any(_depends_on(operand, targets, seen) for operand in value.owner.operands)


def constant_once_unrolled(body: Block, space: int) -> bool:
    """Whether every index of an access in `body` to a memref of memory
    space `space` that depends on the iterator of a hinted loop is a
    constant once the loops around it of constant trip counts are unrolled:
    the iterators, each its loop's lower bound plus a constant, cancel in
    its linear form (`c - 8 * by` in `for (c = 8 * by; ...)`). Where this
    fails (an index with a division of an iterator, or the iterator of a
    hinted loop whose trip count varies), unrolling leaves the elements
    indexed at run time, in local memory."""
    forms = IntegerForms()
    for op in (inner for top in body.ops for inner in top.walk()):
        if not isinstance(op, memref.LoadOp | memref.StoreOp) or not _in_space(op, space):
            continue
        loops: list[scf.ForOp] = []
        parent = op.parent_op()
        while parent is not None:
            if isinstance(parent, scf.ForOp):
                loops.append(parent)
            parent = parent.parent_op()
        hinted = {loop.body.block.args[0] for loop in loops if UNROLL_HINT in loop.attributes}
        variable = {loop.body.block.args[0] for loop in loops if trip_count(loop) is None}
        loops = [loop for loop in loops if loop.body.block.args[0] not in variable]
        for index in op.indices:
            if not hinted or not _depends_on(index, hinted, set()):
                continue
            if _depends_on(index, hinted & variable, set()):
                return False  # a hinted loop the compiler cannot unroll whole
            form = dict(forms.of(index))
            for loop in loops:  # innermost first: a bound may use outer iterators
                coefficient = form.pop(loop.body.block.args[0], 0)
                for leaf, value in forms.of(loop.lb).items():
                    form[leaf] = form.get(leaf, 0) + coefficient * value
            width = width_of(index.type) or 64
            if any(leaf is not None and wrap(value, width) for leaf, value in form.items()):
                return False
    return True
