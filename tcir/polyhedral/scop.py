"""A `poly.scop`'s polyhedral description as isl objects.

Access relations are returned restricted to their statements' domains.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

import islpy as isl
from xdsl.ir import Operation
from xdsl.rewriter import Rewriter

from tcir.diagnostics import OpError, anchored
from tcir.dialects.poly import DomainOp, MarkOp, ScopOp, StmtOp
from tcir.dialects.tc import DefOp
from tcir.polyhedral.gpu_mapping import KERNEL_MARK
from tcir.polyhedral.schedule_tree import schedule_from_isl, schedule_to_isl


def module_scops(module: Operation) -> Iterator[ScopOp]:
    """The scops of `module`, each anchoring the errors of the pass while it
    works on it (`tcir.diagnostics.anchored`). A polyhedral pass needs one:
    a module without is an error at its first `tc.def`."""
    scops = [op for op in module.walk() if isinstance(op, ScopOp)]
    if not scops:
        where = next((op for op in module.walk() if isinstance(op, DefOp)), module)
        raise OpError(where, "no poly.scop in the module: run convert-tc-to-poly first")
    return anchored(scops)


def is_mapped(scop: ScopOp) -> bool:
    """Whether `poly-map-to-gpu` mapped the scop's schedule (it has kernels)."""
    return any(isinstance(op, MarkOp) and op.value == KERNEL_MARK for op in scop.schedule.walk())


def require_mapping(scop: ScopOp, mapped: bool, fix: str) -> None:
    """A pass's precondition on the mapping: an error at `scop` unless
    `is_mapped(scop) == mapped`; `fix` says what to do instead."""
    if is_mapped(scop) != mapped:
        state = "already mapped to the GPU (it has a poly.mark \"kernel\")" if not mapped else "not mapped to the GPU"
        raise OpError(scop, f"the schedule of @{scop.sym_name.data} is {state}: {fix}")


def scop_context(scop: ScopOp) -> isl.Set:
    """The parameter context."""
    return isl.Set(scop.context.data)


def _stmt_domain(stmt: StmtOp) -> isl.UnionSet:
    return isl.UnionSet.from_set(isl.Set(stmt.domain.data))


def union_of_accesses(context: isl.Set, accesses: Iterable[tuple[str, str | None]]) -> isl.UnionMap:
    """Union of the relations (isl text) of `(domain, relation)` pairs, each
    restricted to its statement's domain (pairs without a relation skipped)."""
    result = isl.UnionMap.empty(context.get_space())
    for domain, text in accesses:
        if text is not None:
            access = isl.UnionMap(text).intersect_domain(isl.UnionSet.from_set(isl.Set(domain)))
            result = result.union(access)
    return result


def _accesses(scop: ScopOp, relation: Callable[[StmtOp], str | None]) -> isl.UnionMap:
    """Union over the statements of `relation(stmt)` (skipped where None)."""
    return union_of_accesses(scop_context(scop), ((s.domain.data, relation(s)) for s in scop.statements))


def scop_domain(scop: ScopOp) -> isl.UnionSet:
    """The union of the statements' iteration domains."""
    result = isl.UnionSet.empty(scop_context(scop).get_space())
    for stmt in scop.statements:
        result = result.union(_stmt_domain(stmt))
    return result


def scop_reads(scop: ScopOp) -> isl.UnionMap:
    """All read accesses, statement instance -> array element."""
    return _accesses(scop, lambda stmt: stmt.reads.data)


def scop_writes(scop: ScopOp) -> isl.UnionMap:
    """All write accesses (may-writes included), statement instance -> array element."""
    return _accesses(scop, lambda stmt: stmt.writes.data)


def scop_must_writes(scop: ScopOp) -> isl.UnionMap:
    """The write accesses of statements not marked `may_writes`."""
    return _accesses(
        scop, lambda stmt: None if stmt.may_write is not None else stmt.writes.data
    )


def scop_schedule(scop: ScopOp) -> isl.Schedule:
    """The scop's schedule tree as an isl schedule."""
    return schedule_to_isl(scop.schedule)


def set_scop_schedule(scop: ScopOp, schedule: isl.Schedule) -> DomainOp:
    """Replace the scop's schedule-tree ops by those of `schedule`.

    Returns the new root.
    """
    root = schedule_from_isl(schedule)
    Rewriter.replace_op(scop.schedule, root)
    return root
