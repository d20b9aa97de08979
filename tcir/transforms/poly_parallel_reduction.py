"""`poly-parallel-reduction`: run `+=`, `max=` and `min=` reductions on many threads, combined by atomics.

Replaces the schedule tree of every `poly.scop` by its canonical tree (one
filter per statement in program order, each with its identity band: one
kernel per statement once mapped) in which a sum's reduction dimensions are
coincident too, so that `poly-map-to-gpu` maps them to blocks and threads
like the output's dimensions, and marks the sum's `tc.update` `atomic`:

    tc.update %s[%b] "+=" %v                      (S1[b, k], k reduced)
    poly.band "[{ S1[b, k] -> [(b)] }, { S1[b, k] -> [(k)] }]" coincident = [1, 0]

becomes

    tc.update %s[%b] "+=" %v {atomic}
    poly.band "[{ S1[b, k] -> [(b)] }, { S1[b, k] -> [(k)] }]" coincident = [1, 1]

With `coincident-reductions=false` (what `poly-split-k` starts from), the
sums are still marked `atomic` and each gets a kernel of its own, but their
reduction dimensions stay non-coincident, as in the identity band of any
other statement: threads then map the output dimensions only, and each
thread runs its sum's reduction loop, which `poly-split-k` deals to blocks
by slices:

    tc.update %s[%b] "+=" %v {atomic}
    poly.band "[{ S1[b, k] -> [(b)] }, { S1[b, k] -> [(k)] }]" coincident = [1, 0]

Code generation turns an atomic update into `memref.atomic_rmw addf` (CUDA
`atomicAdd`), `maximumf`/`minimumf` (a compare-and-swap loop that keeps
`max=`'s NaN rule) or `maxs`/`mins` (`atomicMax`/`atomicMin`); a private
accumulator promoted for it starts at the reduction's identity and is
combined into the output atomically (`poly-promote`). The statement that
initializes the output (`!`) is a kernel of its own before it. A statement
qualifies when its update is `+=`, `max=` or `min=` of f32, f64 or i32 over at least one reduction
dimension and its only self-dependences relate instances updating the same
element (a statement reading its own output elsewhere stays serial), and it
is no statement of a stepped loop (whose steps share one kernel). Floats
are then summed in another order than the serial one: the results differ
within the usual rounding tolerance (a maximum or minimum does not differ). The paper names this parallelism as
what Tensor Comprehensions lacked (section 8).
"""

from __future__ import annotations

from dataclasses import dataclass

import islpy as isl
from xdsl.context import Context
from xdsl.dialects.builtin import AnyFloat, IntegerType, ModuleOp, Signedness, UnitAttr
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from tcir.dialects.poly import DomainOp, StmtOp
from tcir.dialects.tc import UpdateOp
from tcir.lowering.tc_point import ATOMIC
from tcir.polyhedral.canonical import canonical_subtree, reduction_dims
from tcir.polyhedral.dependences import compute_dependences
from tcir.polyhedral.scop import module_scops, scop_context

ATOMIC_UPDATES = ("+=", "max=", "min=")
"""Reductions whose partial results atomics combine (`atomicAdd`, and a
compare-and-swap loop for a float maximum or minimum)."""


def _atomic_reduction(stmt: StmtOp) -> UpdateOp | None:
    """The statement's final update, where it is a reduction that atomics can combine."""
    update = stmt.body.block.last_op
    if not isinstance(update, UpdateOp) or update.kind.data not in ATOMIC_UPDATES or not reduction_dims(stmt):
        return None
    element = update.tensor_type.element_type
    if isinstance(element, AnyFloat) and element.bitwidth in (32, 64):
        return update
    if isinstance(element, IntegerType) and element.signedness.data != Signedness.UNSIGNED:
        return update if element.width.data == 32 else None  # CUDA has no signed 64-bit atomicAdd or atomicMax
    return None


def _only_same_element(stmt: StmtOp, validity: isl.UnionMap, context: isl.Set) -> bool:
    """Whether every self-dependence of `stmt` relates instances that write one element."""
    domain = isl.UnionSet(stmt.domain.data).intersect_params(context)
    own = validity.intersect_domain(domain).intersect_range(domain)
    writes = isl.UnionMap(stmt.writes.data).intersect_domain(domain)
    same = writes.apply_range(writes.reverse())
    return own.is_subset(same)


@dataclass(frozen=True)
class PolyParallelReduction(ModulePass):
    """Schedule sums for atomic combination across threads and blocks."""

    name = "poly-parallel-reduction"

    coincident_reductions: bool = True
    """Mark the reduction dimensions of atomic sums coincident (false: only
    mark the sums atomic, for `poly-split-k`)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for scop in module_scops(op):
            validity = compute_dependences(scop).validity
            context = scop_context(scop)
            parallel = []
            for stmt in scop.statements:
                update = _atomic_reduction(stmt)
                if update is not None and stmt.step_loop is None and _only_same_element(stmt, validity, context):
                    update.attributes[ATOMIC] = UnitAttr()
                    parallel.append(stmt)
            root = scop.schedule
            subtree = canonical_subtree(scop.statements, parallel if self.coincident_reductions else ())
            Rewriter.replace_op(root, DomainOp(root.domain.data, subtree))
